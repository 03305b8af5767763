#include "daemon/operator_controls.h"

#include <re2/re2.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "base/iso8601.h"
#include "parse/url.h"

namespace freshd::daemon {
namespace {

using store::ControlRecord;

re2::RE2::Options PatternOptions(int64_t max_mem) {
  re2::RE2::Options o;
  o.set_log_errors(false);
  o.set_max_mem(max_mem);
  return o;
}

// A host name or authority: letters, digits, '-', '.', ':' and brackets
// (an IPv6 literal), lowercased.
bool NormalizeHost(std::string* host, size_t max_bytes) {
  if (host->empty() || host->size() > max_bytes) return false;
  for (char& c : *host) {
    const auto u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '-' || c == '.' || c == ':' || c == '[' ||
          c == ']')) {
      return false;
    }
    c = static_cast<char>(std::tolower(u));
  }
  return true;
}

// "name:port" -> "name"; "[v6]:port" -> "[v6]"; otherwise as is.
std::string_view WithoutPort(std::string_view authority) {
  const size_t colon = authority.rfind(':');
  if (colon == std::string_view::npos) return authority;
  const size_t bracket = authority.rfind(']');
  if (bracket != std::string_view::npos && bracket > colon) return authority;
  return authority.substr(0, colon);
}

const char* ActionName(uint8_t action) {
  return action == ControlRecord::kBlock ? "block" : "pause";
}

}  // namespace

OperatorControls::OperatorControls(Limits limits) : limits_(limits) {}

Result<OperatorControls::Request> OperatorControls::Parse(
    std::string_view body) const {
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument(
        "body must be a JSON object {\"action\": ..., \"host\"|\"pattern\": "
        "...}");
  }
  Request r;
  if (!j.contains("action") || !j["action"].is_string()) {
    return Status::InvalidArgument(
        "\"action\" must be \"pause\", \"resume\", \"block\" or \"unblock\"");
  }
  const std::string action = j["action"].get<std::string>();
  if (action == "pause") {
    r.action = Action::kPause;
  } else if (action == "resume") {
    r.action = Action::kResume;
  } else if (action == "block") {
    r.action = Action::kBlock;
  } else if (action == "unblock") {
    r.action = Action::kUnblock;
  } else {
    return Status::InvalidArgument("unknown action \"" + action.substr(0, 64) +
                                   "\" (pause, resume, block, unblock)");
  }
  const bool host = j.contains("host");
  const bool pattern = j.contains("pattern");
  if (host == pattern) {
    return Status::InvalidArgument("give exactly one of \"host\", \"pattern\"");
  }
  const nlohmann::json& target = j[host ? "host" : "pattern"];
  if (!target.is_string()) {
    return Status::InvalidArgument(host ? "\"host\" must be a string"
                                        : "\"pattern\" must be a string");
  }
  r.target = target.get<std::string>();
  if (host) {
    r.kind = ControlRecord::kHost;
    if (!NormalizeHost(&r.target, limits_.max_host_bytes)) {
      return Status::InvalidArgument(
          "\"host\" must be a host name or host:port (at most " +
          std::to_string(limits_.max_host_bytes) + " bytes)");
    }
    return r;
  }
  r.kind = ControlRecord::kPattern;
  if (r.target.empty() || r.target.size() > limits_.max_pattern_bytes) {
    return Status::InvalidArgument("\"pattern\" must be 1 to " +
                                   std::to_string(limits_.max_pattern_bytes) +
                                   " bytes");
  }
  const re2::RE2 re(r.target, PatternOptions(limits_.pattern_max_mem));
  if (!re.ok()) {
    return Status::InvalidArgument("bad pattern: " + re.error());
  }
  return r;
}

Result<OperatorControls::Change> OperatorControls::Apply(const Request& request,
                                                         double now_unix) {
  const Key key{request.kind, request.target};
  auto it = controls_.find(key);
  const bool add =
      request.action == Action::kPause || request.action == Action::kBlock;
  const uint8_t want =
      request.action == Action::kPause || request.action == Action::kResume
          ? ControlRecord::kPause
          : ControlRecord::kBlock;
  const std::string what =
      std::string(request.kind == ControlRecord::kHost ? "host " : "pattern ") +
      request.target;
  std::map<Key, Entry> before = controls_;
  if (add) {
    if (it != controls_.end()) {
      if (it->second.action == ControlRecord::kBlock &&
          want == ControlRecord::kPause) {
        return Status::InvalidArgument(what + " is blocked: unblock it first");
      }
      if (it->second.action == want) return Change{};  // already so
      it->second = Entry{want, now_unix};
    } else {
      if (controls_.size() >= limits_.max_controls) {
        return Status::ResourceExhausted(
            "at most " + std::to_string(limits_.max_controls) + " controls");
      }
      controls_.emplace(key, Entry{want, now_unix});
    }
  } else {
    if (it == controls_.end()) {
      return Status::NotFound("no control on " + what);
    }
    if (it->second.action != want) {
      return Status::InvalidArgument(what + " is " +
                                     (it->second.action == ControlRecord::kBlock
                                          ? "blocked, not paused: use unblock"
                                          : "paused, not blocked: use resume"));
    }
    controls_.erase(it);
  }
  if (!Rebuild()) {
    controls_ = std::move(before);
    (void)Rebuild();
    return Status::ResourceExhausted(
        "the patterns together exceed the RE2 memory budget");
  }
  dirty_[key] = add;
  Change change;
  (request.kind == ControlRecord::kHost ? change.hosts : change.patterns) =
      true;
  if (change.hosts) {
    for (sched::HostId id = 0; id < host_cache_.size(); ++id) {
      if (host_cache_[id] == 2) to_reopen_.push_back(id);
    }
    host_cache_.clear();
  }
  return change;
}

bool OperatorControls::Rebuild() {
  hosts_.clear();
  std::unique_ptr<re2::RE2::Set> held;
  std::unique_ptr<re2::RE2::Set> blocked;
  const re2::RE2::Options options = PatternOptions(limits_.set_max_mem);
  for (const auto& [key, entry] : controls_) {
    if (key.first == ControlRecord::kHost) {
      hosts_[key.second] = entry.action;
      continue;
    }
    if (!held) {
      held = std::make_unique<re2::RE2::Set>(options, re2::RE2::UNANCHORED);
    }
    if (held->Add(key.second, nullptr) < 0) return false;
    if (entry.action == ControlRecord::kBlock) {
      if (!blocked) {
        blocked =
            std::make_unique<re2::RE2::Set>(options, re2::RE2::UNANCHORED);
      }
      if (blocked->Add(key.second, nullptr) < 0) return false;
    }
  }
  if (held && !held->Compile()) return false;
  if (blocked && !blocked->Compile()) return false;
  held_patterns_ = std::move(held);
  blocked_patterns_ = std::move(blocked);
  return true;
}

bool OperatorControls::HostMatch(std::string_view url,
                                 bool blocked_only) const {
  if (hosts_.empty()) return false;
  const std::string_view authority = parse::UrlAuthority(url);
  for (std::string_view name : {authority, WithoutPort(authority)}) {
    std::string lower(name);
    for (char& c : lower) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    auto it = hosts_.find(lower);
    if (it != hosts_.end() &&
        (!blocked_only || it->second == ControlRecord::kBlock)) {
      return true;
    }
  }
  return false;
}

bool OperatorControls::PatternHeld(std::string_view url) const {
  return held_patterns_ && held_patterns_->Match(url, nullptr);
}

bool OperatorControls::Held(std::string_view url) const {
  return HostMatch(url, false) || PatternHeld(url);
}

bool OperatorControls::Blocked(std::string_view url) const {
  return HostMatch(url, true) ||
         (blocked_patterns_ && blocked_patterns_->Match(url, nullptr));
}

bool OperatorControls::Admit(std::string_view url) {
  if (controls_.empty() || !Blocked(url)) return true;
  ++turned_away_;
  return false;
}

bool OperatorControls::HostHeld(sched::HostId id, std::string_view authority) {
  if (hosts_.empty()) return false;
  if (id >= host_cache_.size()) host_cache_.resize(id + 1, 0);
  if (host_cache_[id] == 0) {
    bool held = false;
    for (std::string_view name : {authority, WithoutPort(authority)}) {
      held = held || hosts_.contains(std::string(name));
    }
    host_cache_[id] = held ? 2 : 1;
  }
  return host_cache_[id] == 2;
}

std::vector<sched::HostId> OperatorControls::TakeHostsToReopen() {
  return std::exchange(to_reopen_, {});
}

void OperatorControls::TakeBatch(store::StoreBatch* batch) {
  for (const auto& [key, put] : dirty_) {
    auto it = controls_.find(key);
    if (put && it != controls_.end()) {
      batch->PutControl(ControlRecord{key.first, key.second, it->second.action,
                                      it->second.since_unix});
    } else if (it == controls_.end()) {
      batch->DeleteControl(key.first, key.second);
    }
  }
  dirty_.clear();
}

void OperatorControls::Restore(const std::vector<ControlRecord>& records,
                               std::vector<std::string>* skipped) {
  for (const ControlRecord& r : records) {
    if (controls_.size() >= limits_.max_controls) {
      skipped->push_back(r.target);
      continue;
    }
    if (r.kind == ControlRecord::kPattern) {
      const re2::RE2 re(r.target, PatternOptions(limits_.pattern_max_mem));
      if (!re.ok() || r.target.size() > limits_.max_pattern_bytes) {
        skipped->push_back(r.target);
        continue;
      }
    }
    controls_[{r.kind, r.target}] = Entry{r.action, r.since_unix};
  }
  if (!Rebuild()) {  // the set over its budget: patterns dropped, hosts kept
    for (auto it = controls_.begin(); it != controls_.end();) {
      if (it->first.first == ControlRecord::kPattern) {
        skipped->push_back(it->first.second);
        it = controls_.erase(it);
      } else {
        ++it;
      }
    }
    (void)Rebuild();
  }
  host_cache_.clear();
}

nlohmann::json OperatorControls::Json(size_t limit) const {
  size_t counts[2][2] = {};  // [pattern][block]
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [key, entry] : controls_) {
    const bool pattern = key.first == ControlRecord::kPattern;
    ++counts[pattern][entry.action == ControlRecord::kBlock];
    if (list.size() < limit) {
      list.push_back({{"kind", pattern ? "pattern" : "host"},
                      {"target", key.second},
                      {"action", ActionName(entry.action)},
                      {"since", FormatIso8601Utc(static_cast<int64_t>(
                                    std::floor(entry.since_unix)))}});
    }
  }
  const bool truncated = controls_.size() > list.size();
  return {
      {"count", controls_.size()},        {"hosts_paused", counts[0][0]},
      {"hosts_blocked", counts[0][1]},    {"patterns_paused", counts[1][0]},
      {"patterns_blocked", counts[1][1]}, {"turned_away_total", turned_away_},
      {"list", std::move(list)},          {"list_truncated", truncated}};
}

void OperatorControls::AppendMetrics(PrometheusText& out,
                                     size_t held_pages) const {
  double counts[2][2] = {};  // [pattern][block]
  for (const auto& [key, entry] : controls_) {
    counts[key.first == ControlRecord::kPattern]
          [entry.action == ControlRecord::kBlock] += 1;
  }
  out.Family("freshd_controls", "gauge",
             "Operator controls in force (POST /control, freshd ctl).");
  for (int pattern = 0; pattern < 2; ++pattern) {
    for (int block = 0; block < 2; ++block) {
      out.Sample("freshd_controls",
                 {{"kind", pattern ? "pattern" : "host"},
                  {"action", block ? "block" : "pause"}},
                 counts[pattern][block]);
    }
  }
  out.Gauge("freshd_controls_held_pages",
            "Known pages a paused or blocked URL pattern holds.",
            static_cast<double>(held_pages));
  out.Counter("freshd_controls_turned_away_total",
              "New URLs not added because a block matched them.",
              static_cast<double>(turned_away_));
}

}  // namespace freshd::daemon
