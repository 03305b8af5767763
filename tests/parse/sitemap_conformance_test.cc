// Data-driven test over crawler-commons' sitemap fixtures
// (tests/data/crawler-commons/sitemaps/manifest.json): every file is
// parsed and every expectation the manifest records is checked, except the
// deliberate differences listed in kDifferences with their reasons.

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "base/iso8601.h"
#include "parse/sitemap.h"
#include "parse/url.h"
#include "parse/w3c_datetime.h"

namespace freshd::parse {
namespace {

using nlohmann::json;

std::string Dir() {
  return std::string(FRESHD_TEST_DATA_DIR) + "/crawler-commons/sitemaps/";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "<file>/<expectation key>" -> why freshd differs on purpose.
const std::map<std::string, std::string>& Differences() {
  static const auto* kDiffs = new std::map<std::string, std::string>{
      {"sitemaps/sitemap.badns.xml/strict_namespace",
       "freshd matches elements by local name in any namespace (lenient): "
       "a wrong namespace loses no URLs"},
      {"inline/xxe-external-entity.xml/doctype_allowed",
       "freshd refuses every DOCTYPE (no mode allows DTDs): entity bombs and "
       "XXE are impossible by construction"},
      {"inline/urlset-truncated.xml/partial_allowed",
       "freshd keeps an entry of a truncated file only if its </loc> was "
       "read: a loc cut by the end of input may be a cut URL"},
      {"sitemaps/sitemap.ns.xml/first_changefreq",
       "changefreq and priority are not extracted (the scheduler estimates "
       "change rates itself)"},
  };
  return *kDiffs;
}

std::optional<SitemapFormat> ExpectedFormat(const std::string& kind) {
  if (kind.starts_with("urlset")) return SitemapFormat::kUrlset;
  if (kind.starts_with("sitemapindex")) return SitemapFormat::kSitemapIndex;
  if (kind.starts_with("text")) return SitemapFormat::kText;
  if (kind.starts_with("rss")) return SitemapFormat::kRss;
  if (kind.starts_with("atom")) return SitemapFormat::kAtom;
  return std::nullopt;
}

std::string NormalizedOrSame(const std::string& url) {
  auto n = NormalizeUrl(url);
  return n.ok() ? *n : url;
}

class SitemapManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string text = ReadFile(Dir() + "manifest.json");
    ASSERT_FALSE(text.empty());
    manifest_ = json::parse(text);
  }

  // Options as crawler-commons' parser configuration for this file.
  static SitemapOptions OptionsFor(const json& f, bool strict) {
    SitemapOptions o;
    if (f.contains("sitemap_url") && f["sitemap_url"].is_string()) {
      std::string u = f["sitemap_url"].get<std::string>();
      o.sitemap_url = u.substr(0, u.find(' '));
    }
    if (strict) {
      o.require_same_path_prefix = true;
    } else {
      o.cross_host_allowed = [](std::string_view) { return true; };
    }
    return o;
  }

  // Checks one expectation object against a parse (failures through
  // gtest).
  void CheckExpectation(const std::string& file, const json& exp,
                        const Result<SitemapResult>& r) {
    if (exp.contains("error")) {
      EXPECT_TRUE(!r.ok() || !r->status.ok()) << file << ": expected error";
      return;
    }
    ASSERT_TRUE(r.ok()) << file << ": " << r.status().ToString();
    const auto& entries = r->entries;
    if (exp.contains("kind") && exp["kind"].is_string()) {
      auto f = ExpectedFormat(exp["kind"].get<std::string>());
      if (f) {
        EXPECT_EQ(r->format, *f) << file;
      }
    }
    for (const char* key :
         {"url_count", "sitemap_count", "url_count_derived"}) {
      if (exp.contains(key) && exp[key].is_number()) {
        EXPECT_EQ(entries.size(), exp[key].get<size_t>()) << file << " " << key;
      }
    }
    if (exp.contains("sitemap_count")) {
      for (const auto& e : entries)
        EXPECT_EQ(e.kind, SitemapEntry::Kind::kSitemap) << file;
    }
    for (const char* key : {"urls", "sitemaps", "sitemaps_asserted"}) {
      if (!exp.contains(key)) continue;
      const json& want = exp[key];
      bool in_order = std::string(key) != "sitemaps_asserted";
      if (in_order) {
        ASSERT_EQ(entries.size(), want.size()) << file;
      }
      for (size_t i = 0; i < want.size(); ++i) {
        std::string loc = NormalizedOrSame(want[i]["loc"].get<std::string>());
        const SitemapEntry* got = nullptr;
        if (in_order) {
          got = &entries[i];
          EXPECT_EQ(got->loc, loc) << file << " entry " << i;
        } else {
          for (const auto& e : entries)
            if (e.loc == loc) got = &e;
          ASSERT_NE(got, nullptr) << file << " lacks " << loc;
        }
        if (want[i].contains("lastmod_utc")) {
          const json& lm = want[i]["lastmod_utc"];
          if (lm.is_null()) {
            EXPECT_FALSE(got->lastmod.has_value()) << file << " " << loc;
          } else {
            auto t = ParseW3cDatetime(lm.get<std::string>());
            ASSERT_TRUE(t.has_value());
            EXPECT_EQ(got->lastmod, t) << file << " " << loc;
          }
        }
      }
    }
    if (exp.contains("must_contain")) {
      for (const json& m : exp["must_contain"]) {
        std::string loc = NormalizedOrSame(m.get<std::string>());
        bool found = false;
        for (const auto& e : entries) found |= e.loc == loc;
        EXPECT_TRUE(found) << file << " lacks " << loc;
      }
    }
    if (exp.contains("urls_derived")) {
      ASSERT_EQ(entries.size(), exp["urls_derived"].size()) << file;
      for (size_t i = 0; i < entries.size(); ++i)
        EXPECT_EQ(entries[i].loc, exp["urls_derived"][i].get<std::string>());
    }
  }

  json manifest_;
};

TEST_F(SitemapManifestTest, EveryFileMeetsItsExpectations) {
  int files = 0, checks = 0;
  std::set<std::string> never = {"http://www.example.com/do-not-visit-here"};
  for (const json& f : manifest_["files"]) {
    std::string file = f["file"].get<std::string>();
    std::string bytes = ReadFile(Dir() + file);
    ASSERT_FALSE(bytes.empty()) << file;
    ++files;
    const json& exp = f["expected"];
    std::string parser = f.value("parser", "default");
    bool strict = parser.find("strict=false") == std::string::npos;
    SCOPED_TRACE(file);
    if (exp.contains("role")) {  // the XXE target itself: just parse it
      (void)ParseSitemap(bytes, SitemapOptions{});
      continue;
    }
    // Expectations keyed by parser mode.
    bool keyed = false;
    for (auto it = exp.begin(); it != exp.end(); ++it) {
      const std::string& mode = it.key();
      if (!it.value().is_object()) continue;
      keyed = true;
      ++checks;
      if (Differences().count(file + "/" + mode)) continue;
      SitemapOptions o = OptionsFor(f, mode != "lenient" && strict);
      if (mode == "strict") o.require_same_path_prefix = true;
      if (mode == "lenient" || mode == "partial_allowed" ||
          mode == "lenient_namespace") {
        o.require_same_path_prefix = false;
        o.cross_host_allowed = [](std::string_view) { return true; };
      }
      auto r = ParseSitemap(bytes, o);
      CheckExpectation(file, it.value(), r);
      if (mode == "partial_allowed" && r.ok()) {
        EXPECT_FALSE(r->status.ok()) << "a truncated file must report it";
      }
    }
    if (!keyed) {
      ++checks;
      auto r = ParseSitemap(bytes, OptionsFor(f, strict));
      json e = exp;
      if (e.contains("first_changefreq") &&
          Differences().count(file + "/first_changefreq")) {
        e.erase("first_changefreq");
      }
      CheckExpectation(file, e, r);
      if (r.ok()) {
        for (const auto& entry : r->entries)
          EXPECT_FALSE(never.count(entry.loc)) << "XXE/XInclude leaked";
      }
    }
  }
  std::printf(
      "crawler-commons sitemaps: %d files, %d expectation sets "
      "checked, %zu deliberate differences\n",
      files, checks, Differences().size());
  EXPECT_EQ(files, 36);
}

TEST_F(SitemapManifestTest, W3cDatetimeCases) {
  for (const json& c : manifest_["date_parsing_cases_AbstractSiteMapTest"]) {
    std::string in = c[0].get<std::string>();
    auto got = ParseW3cDatetime(in);
    if (c[1].is_null()) {
      EXPECT_FALSE(got.has_value()) << in;
      continue;
    }
    std::string want = c[1].get<std::string>();
    want = want.substr(0, want.find(' '));  // "2014-01-01 (date part ...)"
    want = want.substr(0, 19);
    if (want.size() == 10) want += "T00:00:00";
    ASSERT_TRUE(got.has_value()) << in;
    EXPECT_EQ(FormatIso8601Utc(*got), want.substr(0, 19) + "Z") << in;
  }
}

TEST_F(SitemapManifestTest, RssDateCases) {
  for (const json& c : manifest_["rss_date_cases_AbstractSiteMapTest"]) {
    std::string in = c[0].get<std::string>();
    auto got = ParseRfc822Date(in);
    if (c[1].is_null()) {
      EXPECT_FALSE(got.has_value()) << in;
    } else {
      ASSERT_TRUE(got.has_value()) << in;
      EXPECT_EQ(FormatIso8601Utc(*got), c[1].get<std::string>()) << in;
    }
  }
}

}  // namespace
}  // namespace freshd::parse
