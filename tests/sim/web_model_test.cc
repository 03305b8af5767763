// The web TOML's bounds (sim/README.md): every value a web file sets is
// limited, out-of-range values are errors that name the key, and draws from
// unbounded distributions (exponential) are clamped; every web shipped in
// sim/webs/ loads.

#include "sim/web_model.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "sim/page_process.h"

namespace freshd::sim {
namespace {

std::string Web(const std::string& class_body) {
  return "hosts = 2\npages_per_host = 50\n[[class]]\n" + class_body;
}

// The error for `text`, or "" when it parses.
std::string ErrorOf(const std::string& text) {
  Result<WebSpec> spec = ParseWebSpec(text, "bounds");
  return spec.ok() ? "" : spec.status().ToString();
}

TEST(WebModelTest, EveryWebValueIsBounded) {
  // Within the bounds: parses (the edges included).
  EXPECT_EQ(ErrorOf(Web("[class.churn]\nwords = 10\nrate = 10000\n"
                        "[class.signals]\nrecall = 1\ndelay_days = 365\n"
                        "false_rate = { dist = \"uniform\", min = 0.0, "
                        "max = 10000.0 }\n")),
            "");
  struct Case {
    std::string text, key;
  };
  const Case cases[] = {
      {Web("[class.churn]\nwords = 10\nrate = 10001\n"), "rate"},
      {Web("[class.churn]\nwords = 10\n"
           "rate = { dist = \"loguniform\", min = 1.0, max = 1e300 }\n"),
       "rate"},
      {Web("[class.scroll]\nitems = 2\nwords_per_item = 3\nrate = -1\n"),
       "rate"},
      {Web("static_words = 5\n[class.signals]\nfalse_rate = 1e5\n"),
       "false_rate"},
      {Web("static_words = 5\n[class.signals]\nrecall = 1.5\n"), "recall"},
      {Web("static_words = 5\n[class.signals]\ndelay_days = 400\n"),
       "delay_days"},
      {Web("static_words = 5\n[class.signals]\n"
           "delay_days = { dist = \"exponential\", mean = 1000.0 }\n"),
       "delay_days"},
      {Web("static_words = 5\n[class.signals]\nlastmod = 1\n"), "lastmod"},
      {Web("static_words = 5\nimportance = 1e7\n"), "importance"},
      {"crawl_delay_s = 1e9\n" + Web("static_words = 5\n"), "crawl_delay_s"},
      {Web("[class.scroll]\nitems = 1000\nwords_per_item = 10000\n"),
       "words per page"},
  };
  for (const Case& c : cases) {
    const std::string error = ErrorOf(c.text);
    EXPECT_NE(error.find(c.key), std::string::npos)
        << "error '" << error << "' for:\n"
        << c.text;
  }
}

// hosts and pages_per_host default to 1 (a web is never empty).
// RESULTS.md and the tests run these files: each parses, within the
// bounds, into the pages it declares.
TEST(WebModelTest, EveryShippedWebLoads) {
  int webs = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(FRESHD_SOURCE_DIR "/sim/webs")) {
    if (entry.path().extension() != ".toml") continue;
    SCOPED_TRACE(entry.path().string());
    Result<WebSpec> spec = LoadWebSpec(entry.path().string());
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    WebModel web = WebModel::Build(spec.value(), 1);
    EXPECT_EQ(web.pages.size(),
              static_cast<size_t>(spec->hosts) * spec->pages_per_host);
    EXPECT_GT(web.pages.size(), 0u);
    ++webs;
  }
  EXPECT_GE(webs, 10);
}

TEST(WebModelTest, ClassesByHostGiveEachHostOneClass) {
  const std::string classes =
      "[[class]]\nname = \"a\"\nshare = 0.5\n[class.churn]\nrate = 1\n"
      "words = 10\n[[class]]\nname = \"b\"\nshare = 0.5\n"
      "[class.churn]\nrate = 0.1\nwords = 10\n";
  const std::string head = "hosts = 40\npages_per_host = 25\n";
  Result<WebSpec> mixed = ParseWebSpec(head + classes, "mixed");
  Result<WebSpec> apart =
      ParseWebSpec(head + "classes_by_host = true\n" + classes, "apart");
  ASSERT_TRUE(mixed.ok()) << mixed.status().ToString();
  ASSERT_TRUE(apart.ok()) << apart.status().ToString();
  EXPECT_FALSE(mixed->classes_by_host);
  EXPECT_TRUE(apart->classes_by_host);
  const WebModel by_page = WebModel::Build(*mixed, 7);
  const WebModel by_host = WebModel::Build(*apart, 7);
  int mixed_hosts = 0, hosts_of_b = 0;
  for (uint32_t h = 0; h < 40; ++h) {
    int in_b_page = 0, in_b_host = 0;
    for (uint32_t i = 0; i < 25; ++i) {
      in_b_page += by_page.pages[h * 25 + i].cls;
      in_b_host += by_host.pages[h * 25 + i].cls;
    }
    mixed_hosts += in_b_page > 0 && in_b_page < 25;
    EXPECT_TRUE(in_b_host == 0 || in_b_host == 25) << "host " << h;
    hosts_of_b += in_b_host == 25;
  }
  EXPECT_GT(mixed_hosts, 35);  // per page: nearly every host has both
  EXPECT_GT(hosts_of_b, 8);    // per host: about half the hosts are b
  EXPECT_LT(hosts_of_b, 32);
  // Everything else a page draws is the same either way.
  for (uint32_t p = 0; p < 1000; ++p) {
    EXPECT_EQ(by_page.pages[p].importance, by_host.pages[p].importance);
  }
  EXPECT_NE(
      ErrorOf(head + "classes_by_host = 1\n" + classes).find("classes_by_host"),
      std::string::npos);
}

TEST(WebModelTest, HostsAndPagesDefaultToOne) {
  Result<WebSpec> spec = ParseWebSpec("[[class]]\nstatic_words = 5\n", "one");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->hosts, 1u);
  EXPECT_EQ(spec->pages_per_host, 1u);
  EXPECT_EQ(WebModel::Build(*spec, 1).pages.size(), 1u);
  EXPECT_NE(ErrorOf("hosts = 0\n[[class]]\nstatic_words = 5\n").find("hosts"),
            std::string::npos);
}

TEST(WebModelTest, UnboundedDrawsAreClamped) {
  Result<WebSpec> spec = ParseWebSpec(
      Web("[class.churn]\nwords = 10\n"
          "rate = { dist = \"exponential\", mean = 9000.0 }\n"
          "[class.signals]\n"
          "false_rate = { dist = \"exponential\", mean = 9000.0 }\n"
          "delay_days = { dist = \"exponential\", mean = 300.0 }\n"),
      "clamp");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  WebModel model = WebModel::Build(*spec, 4);
  int at_the_cap = 0;
  for (uint32_t p = 0; p < model.pages.size(); ++p) {
    EXPECT_LE(model.pages[p].churn_rate, kMaxSimRatePerDay);
    EXPECT_LE(model.pages[p].false_rate, kMaxSimRatePerDay);
    at_the_cap += model.pages[p].churn_rate == kMaxSimRatePerDay;
    for (uint64_t i = 0; i < 20; ++i) {
      SignalDraw d = TrueSignal(model, p, kChurn, i);
      EXPECT_LE(d.delay, kMaxSimDelayDays * kDay);
    }
  }
  // P(Exp(mean 9000) > 1e4) = e^{-10/9} ≈ 0.33 of 100 pages.
  EXPECT_GT(at_the_cap, 10);
}

// The web as daily sitemap polling shows it: the same pages, changes and
// signal emissions, every signal claiming its change time and, where it had
// no delay, U(0, poll) days late; a delay already there is kept.
TEST(WebModelTest, PolledSignalsKeepThePagesAndDelayEachSignal) {
  auto spec = ParseWebSpec(
      Web("share = 0.5\n[class.churn]\nwords = 10\nrate = 2\n"
          "[class.signals]\n"
          "recall = 0.5\nfalse_rate = 0.2\n") +
          "[[class]]\nname = \"late\"\nshare = 0.5\n[class.churn]\n"
          "words = 10\nrate = 1\n"
          "[class.signals]\nrecall = 1\ndelay_days = 3\n",
      "polled");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  WebModel plain = WebModel::Build(spec.value(), 9);
  WebModel polled = WebModel::Build(PolledSignalsSpec(spec.value(), 1), 9);
  ASSERT_EQ(plain.pages.size(), polled.pages.size());
  int late = 0;
  for (uint32_t p = 0; p < plain.pages.size(); ++p) {
    const SimPage& a = plain.pages[p];
    const SimPage& b = polled.pages[p];
    EXPECT_EQ(a.cls, b.cls);
    EXPECT_EQ(a.importance, b.importance);
    EXPECT_EQ(a.churn_rate, b.churn_rate);
    EXPECT_EQ(a.recall, b.recall);
    EXPECT_EQ(a.false_rate, b.false_rate);
    EXPECT_FALSE(a.signal_lastmod);
    EXPECT_TRUE(b.signal_lastmod);
    EXPECT_EQ(VersionAt(plain, p, 30 * kDay), VersionAt(polled, p, 30 * kDay));
    for (uint64_t i = 0; i < 20; ++i) {
      SignalDraw x = TrueSignal(plain, p, kChurn, i);
      SignalDraw y = TrueSignal(polled, p, kChurn, i);
      EXPECT_EQ(x.emitted, y.emitted);
      if (a.cls == 1) {  // delayed already: kept
        EXPECT_EQ(y.delay, 3 * kDay);
        ++late;
      } else {
        EXPECT_EQ(x.delay, 0);
        EXPECT_GE(y.delay, 0);
        EXPECT_LT(y.delay, kDay);
      }
    }
  }
  EXPECT_GT(late, 0);
}

}  // namespace
}  // namespace freshd::sim
