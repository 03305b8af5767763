#include "sim/web_model.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <toml.hpp>

#include "conf/toml_text.h"

namespace freshd::sim {
namespace {

using Table = toml::value;

[[noreturn]] void Fail(const Table& v, const std::string& what) {
  throw std::runtime_error(toml::format_error(what, v, "here"));
}

void CheckKeys(const Table& t, const std::set<std::string>& allowed,
               const std::string& where) {
  for (const auto& [k, v] : t.as_table()) {
    if (!allowed.count(k)) Fail(v, where + ": unknown key '" + k + "'");
  }
}

double Number(const Table& v) {
  if (v.is_integer()) return static_cast<double>(v.as_integer());
  if (v.is_floating()) return v.as_floating();
  Fail(v, "expected a number");
}

Distribution ParseShape(const Table& v, const std::string& key) {
  if (!v.is_table()) return Distribution::Const(Number(v));
  std::string kind = toml::find<std::string>(v, "dist");
  Distribution d;
  auto num = [&](const char* k) {
    if (!v.contains(k)) Fail(v, key + ": '" + kind + "' needs '" + k + "'");
    return Number(v.at(k));
  };
  if (kind == "const") {
    CheckKeys(v, {"dist", "value"}, key);
    d = Distribution::Const(num("value"));
  } else if (kind == "uniform" || kind == "loguniform") {
    CheckKeys(v, {"dist", "min", "max"}, key);
    d.kind = kind == "uniform" ? Distribution::Kind::kUniform
                               : Distribution::Kind::kLogUniform;
    d.a = num("min");
    d.b = num("max");
    if (!(d.a <= d.b)) Fail(v, key + ": min > max");
    if (kind == "loguniform" && !(d.a > 0)) Fail(v, key + ": min must be > 0");
  } else if (kind == "beta") {
    CheckKeys(v, {"dist", "a", "b"}, key);
    d.kind = Distribution::Kind::kBeta;
    d.a = num("a");
    d.b = num("b");
    if (!(d.a > 0 && d.b > 0)) Fail(v, key + ": beta a, b must be > 0");
  } else if (kind == "exponential") {
    CheckKeys(v, {"dist", "mean"}, key);
    d.kind = Distribution::Kind::kExponential;
    d.a = num("mean");
    if (!(d.a >= 0)) Fail(v, key + ": mean must be >= 0");
  } else {
    Fail(v, key + ": unknown dist '" + kind + "'");
  }
  if (!std::isfinite(d.a) || !std::isfinite(d.b)) Fail(v, key + ": not finite");
  return d;
}

// A distribution whose support lies in [lo, hi] (an exponential's mean
// must; its draws are clamped where they are used).
Distribution ParseDist(const Table& v, const std::string& key, double lo,
                       double hi) {
  Distribution d = ParseShape(v, key);
  double low = d.a, high = d.a;  // const value; exponential mean
  if (d.kind == Distribution::Kind::kUniform ||
      d.kind == Distribution::Kind::kLogUniform) {
    high = d.b;
  } else if (d.kind == Distribution::Kind::kBeta) {
    low = 0;
    high = 1;
  }
  if (!(low >= lo && high <= hi)) {
    std::ostringstream range;
    range << key << ": must lie in [" << lo << ", " << hi << "]";
    Fail(v, range.str());
  }
  return d;
}

int Count(const Table& t, const char* key, int lo, int hi) {
  if (!t.contains(key)) return 0;
  const Table& v = t.at(key);
  if (!v.is_integer()) Fail(v, std::string(key) + ": expected an integer");
  auto n = v.as_integer();
  if (n < lo || n > hi) {
    Fail(v, std::string(key) + ": must be in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "]");
  }
  return static_cast<int>(n);
}

PageClass ParseClass(const Table& t) {
  CheckKeys(t,
            {"name", "share", "importance", "static_words", "churn", "scroll",
             "signals", "last_modified"},
            "[[class]]");
  PageClass c;
  if (t.contains("name")) c.name = toml::find<std::string>(t, "name");
  c.share = t.contains("share") ? Number(t.at("share")) : 1.0;
  if (!(c.share >= 0)) Fail(t.at("share"), "share: must be >= 0");
  if (t.contains("importance")) {
    c.importance =
        ParseDist(t.at("importance"), "importance", 0, kMaxSimImportance);
  }
  c.static_words = Count(t, "static_words", 0, 100000);
  if (t.contains("last_modified")) {
    const Table& v = t.at("last_modified");
    if (!v.is_boolean()) Fail(v, "last_modified: expected true or false");
    c.last_modified = v.as_boolean();
  }
  if (t.contains("churn")) {
    const Table& r = t.at("churn");
    CheckKeys(r, {"words", "rate"}, "[class.churn]");
    c.churn_words = Count(r, "words", 0, 100000);
    if (r.contains("rate")) {
      c.churn_rate = ParseDist(r.at("rate"), "rate", 0, kMaxSimRatePerDay);
    }
  }
  if (t.contains("scroll")) {
    const Table& r = t.at("scroll");
    CheckKeys(r, {"items", "words_per_item", "rate"}, "[class.scroll]");
    c.scroll_items = Count(r, "items", 0, 1000);
    c.item_words = Count(r, "words_per_item", 0, 10000);
    if (r.contains("rate")) {
      c.scroll_rate = ParseDist(r.at("rate"), "rate", 0, kMaxSimRatePerDay);
    }
  }
  if (t.contains("signals")) {
    const Table& r = t.at("signals");
    CheckKeys(r, {"recall", "false_rate", "delay_days", "lastmod"},
              "[class.signals]");
    if (r.contains("lastmod")) {
      const Table& v = r.at("lastmod");
      if (!v.is_boolean()) Fail(v, "lastmod: expected true or false");
      c.signal_lastmod = v.as_boolean();
    }
    if (r.contains("recall")) {
      c.recall = ParseDist(r.at("recall"), "recall", 0, 1);
    }
    if (r.contains("false_rate")) {
      c.false_rate =
          ParseDist(r.at("false_rate"), "false_rate", 0, kMaxSimRatePerDay);
    }
    if (r.contains("delay_days")) {
      c.delay_days =
          ParseDist(r.at("delay_days"), "delay_days", 0, kMaxSimDelayDays);
    }
  }
  const int64_t words = int64_t{c.static_words} + c.churn_words +
                        int64_t{c.scroll_items} * c.item_words;
  if (words == 0) {
    Fail(t, "[[class]] " + c.name + ": a page needs at least one word");
  }
  if (words > kMaxSimPageWords) {
    Fail(t, "[[class]] " + c.name + ": more than " +
                std::to_string(kMaxSimPageWords) + " words per page");
  }
  return c;
}

WebSpec ParseSpec(const Table& root) {
  CheckKeys(root,
            {"name", "hosts", "pages_per_host", "crawl_delay_s",
             "classes_by_host", "class"},
            "web");
  WebSpec spec;
  if (root.contains("name")) spec.name = toml::find<std::string>(root, "name");
  if (root.contains("hosts")) {  // else 1, and so pages_per_host
    spec.hosts = static_cast<uint32_t>(Count(root, "hosts", 1, 1000000));
  }
  if (root.contains("pages_per_host")) {
    spec.pages_per_host =
        static_cast<uint32_t>(Count(root, "pages_per_host", 1, 10000000));
  }
  if (uint64_t{spec.hosts} * spec.pages_per_host > kMaxSimPages) {
    Fail(root.at("pages_per_host"), "hosts x pages_per_host exceeds 10M");
  }
  if (root.contains("crawl_delay_s")) {
    spec.crawl_delay_s = ParseDist(root.at("crawl_delay_s"), "crawl_delay_s", 0,
                                   kMaxSimCrawlDelayS);
  }
  if (root.contains("classes_by_host")) {
    const toml::value& v = root.at("classes_by_host");
    if (!v.is_boolean()) Fail(v, "classes_by_host: must be true or false");
    spec.classes_by_host = v.as_boolean();
  }
  if (!root.contains("class")) Fail(root, "web: needs at least one [[class]]");
  double total = 0;
  for (const Table& c : root.at("class").as_array()) {
    spec.classes.push_back(ParseClass(c));
    total += spec.classes.back().share;
  }
  if (spec.classes.empty() || spec.classes.size() > 1000 ||
      std::abs(total - 1) > 1e-6) {
    Fail(root.at("class"), "class shares must sum to 1 (1..1000 classes)");
  }
  return spec;
}

}  // namespace

Result<WebSpec> ParseWebSpec(std::string_view toml_text,
                             std::string_view name) {
  Result<toml::value> parsed = ParseTomlText(toml_text, name);
  if (!parsed.ok()) return parsed.status();
  try {
    WebSpec spec = ParseSpec(*parsed);
    if (spec.name.empty()) spec.name = std::string(name);
    return spec;
  } catch (const std::exception& e) {
    return Status::InvalidArgument(e.what());
  }
}

Result<WebSpec> LoadWebSpec(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::NotFound("cannot open web file " + path);
  std::string text(kMaxTomlBytes + 1, '\0');  // one more: "too large"
  f.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (f.bad()) return Status::IOError(path + ": read failed");
  text.resize(static_cast<size_t>(f.gcount()));
  return ParseWebSpec(text, path);  // (refuses more than kMaxTomlBytes)
}

WebSpec PolledSignalsSpec(WebSpec spec, double poll_days) {
  for (PageClass& c : spec.classes) {
    if (c.delay_days.kind == Distribution::Kind::kConst &&
        c.delay_days.a == 0) {
      c.delay_days = {Distribution::Kind::kUniform, 0, poll_days};
    }
    c.signal_lastmod = true;
  }
  return spec;
}

WebModel WebModel::Build(const WebSpec& spec, uint64_t seed) {
  WebModel m;
  m.spec = spec;
  m.seed = seed;
  for (uint32_t h = 0; h < spec.hosts; ++h) {
    Rng rng(HashKey(seed, h, 2));
    m.host_delay_s.push_back(
        std::clamp(spec.crawl_delay_s.Sample(rng), 0.0, kMaxSimCrawlDelayS));
  }
  uint64_t n = uint64_t{spec.hosts} * spec.pages_per_host;
  m.pages.resize(n);
  for (uint64_t p = 0; p < n; ++p) {
    Rng rng(HashKey(seed, p, 1));
    double u = rng.Uniform(), acc = 0;
    if (spec.classes_by_host) {  // the host's draw (the page's is unused)
      Rng host_rng(HashKey(seed, p / spec.pages_per_host, 3));
      u = host_rng.Uniform();
    }
    size_t cls = spec.classes.size() - 1;
    for (size_t i = 0; i < spec.classes.size(); ++i) {
      acc += spec.classes[i].share;
      if (u < acc) {
        cls = i;
        break;
      }
    }
    const PageClass& c = spec.classes[cls];
    SimPage& s = m.pages[p];
    s.host = static_cast<uint32_t>(p / spec.pages_per_host);
    s.cls = static_cast<uint16_t>(cls);
    s.importance =
        std::clamp(c.importance.Sample(rng), 1e-6, kMaxSimImportance);
    s.static_words = c.static_words;
    s.churn_words = c.churn_words;
    s.scroll_items = c.scroll_items;
    s.item_words = c.item_words;
    double cr = std::clamp(c.churn_rate.Sample(rng), 0.0, kMaxSimRatePerDay);
    double sr = std::clamp(c.scroll_rate.Sample(rng), 0.0, kMaxSimRatePerDay);
    s.churn_rate = c.churn_words > 0 ? cr : 0;
    s.scroll_rate = c.scroll_items * c.item_words > 0 ? sr : 0;
    s.recall = std::clamp(c.recall.Sample(rng), 0.0, 1.0);
    s.false_rate = std::clamp(c.false_rate.Sample(rng), 0.0, kMaxSimRatePerDay);
    s.last_modified = c.last_modified;
    s.signal_lastmod = c.signal_lastmod;
  }
  return m;
}

double WebModel::ChangeRate(uint32_t page) const {
  const SimPage& s = pages[page];
  return s.churn_rate + s.scroll_rate;
}

sched::PageParams WebModel::TrueParams(uint32_t page) const {
  const SimPage& s = pages[page];
  return sched::PageParams{ChangeRate(page) / kDay, s.importance, s.recall,
                           s.false_rate / kDay};
}

sched::DivergenceModel WebModel::TrueModel(uint32_t page) const {
  const SimPage& s = pages[page];
  double n = s.static_words + s.churn_words + s.scroll_items * s.item_words;
  sched::DivergenceModel m;
  m.static_share = s.static_words / n;
  m.churn_share = s.churn_words / n;
  m.churn_rate = s.churn_rate / kDay;
  m.scroll_k = std::max(1, s.scroll_items);
  m.scroll_rate = s.scroll_rate / kDay;
  return m;
}

}  // namespace freshd::sim
