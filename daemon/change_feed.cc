#include "daemon/change_feed.h"

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <utility>

#include "base/clock.h"
#include "nlohmann/json.hpp"
#include "store/warc_format.h"

namespace freshd::daemon {
namespace {

HttpReply JsonError(int status, const std::string& message) {
  return HttpReply{status, "application/json",
                   nlohmann::json{{"error", message}}.dump() + "\n"};
}

// A plain decimal number (digits, at most one '.'), no sign or exponent.
bool ParseNumber(std::string_view s, double* out) {
  if (s.empty() || s.size() > 20) return false;
  int dots = 0;
  for (char c : s) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  if (dots > 1 || s == ".") return false;
  *out = std::strtod(std::string(s).c_str(), nullptr);
  return std::isfinite(*out);
}

bool ParseUnsigned(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 19) return false;  // < 10^19 fits in 64 bits
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

Result<FeedQuery> ParseFeedQuery(std::string_view query) {
  FeedQuery q;
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view()
                                          : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    std::string_view name = pair.substr(0, eq);
    std::string_view value =
        eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    if (name == "since") {
      if (!ParseUnsigned(value, &q.since)) {
        return Status::InvalidArgument("since must be a cursor (0, 1, 2, ...)");
      }
    } else if (name == "limit") {
      uint64_t n = 0;
      if (!ParseUnsigned(value, &n) || n < 1 || n > kFeedMaxLimit) {
        return Status::InvalidArgument("limit must be 1 to " +
                                       std::to_string(kFeedMaxLimit));
      }
      q.limit = static_cast<size_t>(n);
    } else if (name == "wait") {
      double w = 0;
      if (!ParseNumber(value, &w) || w > kFeedMaxWaitS) {
        return Status::InvalidArgument(
            "wait must be seconds, 0 to " +
            std::to_string(static_cast<int>(kFeedMaxWaitS)));
      }
      q.wait_s = w;
    } else {
      return Status::InvalidArgument("unknown parameter '" +
                                     std::string(name.substr(0, 64)) +
                                     "' (since, limit, wait)");
    }
  }
  return q;
}

nlohmann::json FeedEventObject(const store::FeedEvent& e) {
  char hash[17];
  std::snprintf(hash, sizeof(hash), "%016llx",
                static_cast<unsigned long long>(e.text_hash));
  nlohmann::json j = {
      {"seq", e.seq},
      {"url", e.url},
      {"time", store::WarcDate(e.time)},
      {"time_unix", e.time},
      {"kind", e.kind},
      {"status", e.status},
      {"staleness",
       e.staleness >= 0 ? nlohmann::json(e.staleness) : nlohmann::json()},
      {"text_hash", hash},
  };
  if (e.warc_file.empty()) {
    j["warc"] = nullptr;
  } else {
    j["warc"] = {{"file", e.warc_file}, {"offset", e.warc_offset}};
  }
  return j;
}

std::string FeedEventJson(const store::FeedEvent& e) {
  return FeedEventObject(e).dump(-1, ' ', false,
                                 nlohmann::json::error_handler_t::replace);
}

std::string ClusterEventJson(std::string_view node, const store::FeedEvent& e) {
  nlohmann::ordered_json line;
  line["node"] = node;
  const nlohmann::json event = FeedEventObject(e);  // outlives the loop
  for (const auto& [key, value] : event.items()) line[key] = value;
  return line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

HttpReply ReadChanges(const store::PageStore& store, const FeedQuery& q) {
  const store::PageStore::FeedBounds bounds = store.feed_bounds();
  if (q.since > bounds.newest) {
    return JsonError(409, "cursor " + std::to_string(q.since) +
                              " is past the newest event (" +
                              std::to_string(bounds.newest) +
                              "); this store is not the one it came from");
  }
  HttpReply reply;
  reply.content_type = "application/x-ndjson";
  uint64_t next = q.since;
  size_t n = 0;
  Status s = store.ForEachFeedEvent(
      q.since, q.limit + 1, [&](const store::FeedEvent& e) {
        if (n == q.limit) return false;  // the one past the limit: "more"
        reply.body += FeedEventJson(e);
        reply.body += '\n';
        next = e.seq;
        ++n;
        return true;
      });
  if (!s.ok()) return JsonError(503, "change feed: " + s.message());
  const bool gap = q.since + 1 < bounds.oldest;
  const bool more = next < store.feed_bounds().newest;
  reply.body += nlohmann::json{
      {"next_cursor", next},
      {"oldest", bounds.oldest},
      {"newest", bounds.newest},
      {"gap", gap},
      {"more",
       more}}.dump();
  reply.body += '\n';
  return reply;
}

void ServeChanges(boost::asio::io_context& io, const store::PageStore* store,
                  std::string_view query,
                  std::function<void(HttpReply)> respond) {
  if (store == nullptr) {
    return respond(JsonError(503, "the store is not open"));
  }
  Result<FeedQuery> q = ParseFeedQuery(query);
  if (!q.ok()) return respond(JsonError(400, q.status().message()));
  const FeedQuery fq = *q;
  if (fq.wait_s <= 0 || store->feed_bounds().newest > fq.since) {
    return respond(ReadChanges(*store, fq));
  }
  // Long poll: look at the bounds every kFeedPollS on a timer of `io`.
  struct Poll {
    boost::asio::steady_timer timer;
    double deadline;
    std::function<void(HttpReply)> respond;
  };
  auto poll =
      std::make_shared<Poll>(Poll{boost::asio::steady_timer(io),
                                  UnixNow() + fq.wait_s, std::move(respond)});
  auto step = std::make_shared<std::function<void()>>();
  *step = [poll, store, fq, weak = std::weak_ptr<std::function<void()>>(step)] {
    const double now = UnixNow();
    if (store->feed_bounds().newest > fq.since || now >= poll->deadline) {
      return poll->respond(ReadChanges(*store, fq));
    }
    poll->timer.expires_after(std::chrono::microseconds(static_cast<int64_t>(
        1e6 * std::min(kFeedPollS, poll->deadline - now))));
    poll->timer.async_wait(
        [poll, strong = weak.lock()](const boost::system::error_code& ec) {
          if (ec || !strong) return;  // the io_context is going away
          (*strong)();
        });
  };
  // The timer's handler keeps `step` alive between polls; this call starts.
  (*step)();
}

}  // namespace freshd::daemon
