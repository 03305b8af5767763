// Loading, validating and writing the typed Config: every kind of bad file
// gives an error naming file, line and key; the example config shipped in
// systemd/ documents every key and equals the defaults except where marked.

#include "conf/config.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "conf/config_schema.h"

namespace freshd {
namespace {

std::string LoadError(const std::string& toml) {
  Result<Config> c = LoadConfigString(toml, "test.toml");
  EXPECT_FALSE(c.ok()) << "accepted:\n" << toml;
  return c.ok() ? "" : c.status().message();
}

TEST(ConfigTest, EmptyFileGivesDefaults) {
  Result<Config> c = LoadConfigString("", "empty.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(*c, Config{});
  EXPECT_TRUE(ValidateConfig(Config{}).ok());
}

TEST(ConfigTest, ValidFileSetsEveryKindOfValue) {
  Result<Config> c = LoadConfigString(R"(
[crawler]
user_agent = "testbot/2.0"
contact_url = "https://example.org/bot"
include = ["^https://example\\.org/"]
max_urls_per_host = 50
[budget]
rate = 2.5
burst = 4
[politeness]
min_delay = "250ms"
max_crawl_delay = 60
backoff_max = "2h"
[fetch]
max_body_bytes = "2MiB"
max_decompressed_bytes = 8000000
allow_private_networks = true
resolve = { "a.test" = "127.0.0.1", "b.test" = "::1" }
[sched]
policy = "longevity-bound"
max_interval = "7d"
prior_change_interval = "6h"
signal_window = "10m"
value_over_rate_uncertainty = false
[store]
path = "/tmp/x"
[status]
listen = "[::1]:9000"
)",
                                      "ok.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->crawler.user_agent, "testbot/2.0");
  EXPECT_EQ(c->crawler.include.size(), 1u);
  EXPECT_EQ(c->crawler.max_urls_per_host, 50u);
  EXPECT_DOUBLE_EQ(c->budget.rate, 2.5);
  EXPECT_DOUBLE_EQ(c->budget.burst, 4.0);  // integer accepted for a float
  EXPECT_DOUBLE_EQ(c->politeness.min_delay_s, 0.25);
  EXPECT_DOUBLE_EQ(c->politeness.max_crawl_delay_s, 60);  // bare seconds
  EXPECT_DOUBLE_EQ(c->politeness.backoff_max_s, 7200);
  EXPECT_EQ(c->fetch.max_body_bytes, 2u << 20);
  EXPECT_EQ(c->fetch.max_decompressed_bytes, 8000000u);
  EXPECT_TRUE(c->fetch.allow_private_networks);
  EXPECT_EQ(c->fetch.resolve.at("b.test"), "::1");
  EXPECT_EQ(c->sched.policy, "longevity-bound");
  EXPECT_DOUBLE_EQ(c->sched.max_interval_s, 7 * 86400);
  EXPECT_DOUBLE_EQ(c->sched.prior_change_interval_s, 6 * 3600);
  EXPECT_DOUBLE_EQ(c->sched.signal_window_s, 600);
  EXPECT_FALSE(c->sched.value_over_rate_uncertainty);
  EXPECT_TRUE(Config{}.sched.value_over_rate_uncertainty);
  EXPECT_EQ(c->status.listen, "[::1]:9000");
  // Untouched keys keep their defaults.
  EXPECT_EQ(c->fetch.max_redirects, Config{}.fetch.max_redirects);
}

TEST(ConfigTest, UnknownKeyNamesFileLineAndKey) {
  EXPECT_EQ(LoadError("[budget]\nrate = 1\nrat = 2\n"),
            "test.toml:3: [budget] rat: unknown key");
}

TEST(ConfigTest, UnknownSectionIsAnError) {
  EXPECT_EQ(LoadError("\n[bugdet]\nrate = 1\n"),
            "test.toml:2: unknown section [bugdet]");
}

TEST(ConfigTest, WrongTypesAreErrors) {
  EXPECT_EQ(LoadError("[budget]\nrate = \"fast\"\n"),
            "test.toml:2: [budget] rate: must be a number, got string");
  EXPECT_EQ(
      LoadError("[fetch]\ntls_verify = 1\n"),
      "test.toml:2: [fetch] tls_verify: must be true or false, got integer");
  EXPECT_EQ(
      LoadError("[fetch]\nmax_redirects = 2.5\n"),
      "test.toml:2: [fetch] max_redirects: must be an integer, got floating");
  EXPECT_EQ(LoadError("[crawler]\ninclude = \"x\"\n"),
            "test.toml:2: [crawler] include: must be an array of strings, got "
            "string");
  EXPECT_EQ(LoadError("budget = 3\n"),
            "test.toml:1: [budget]: must be a table [budget]");
}

TEST(ConfigTest, OutOfRangeValuesAreErrors) {
  EXPECT_NE(
      LoadError("[budget]\nrate = -1\n").find("test.toml:2: [budget] rate: "),
      std::string::npos);
  EXPECT_NE(LoadError("[budget]\nrate = 0\n").find("[budget] rate"),
            std::string::npos);
  EXPECT_NE(LoadError("[politeness]\nmax_in_flight_per_host = 0\n")
                .find("test.toml:2: [politeness] max_in_flight_per_host"),
            std::string::npos);
  EXPECT_NE(
      LoadError("[fetch]\nmax_body_bytes = -5\n").find("must not be negative"),
      std::string::npos);
  EXPECT_NE(LoadError("[sched]\nprior_change_interval = \"0s\"\n")
                .find("test.toml:2: [sched] prior_change_interval"),
            std::string::npos);
  EXPECT_NE(LoadError("[sched]\nsignal_window = \"2y\"\n")
                .find("test.toml:2: [sched] signal_window"),
            std::string::npos);
  EXPECT_NE(LoadError("[sched]\npolicy = \"magic\"\n")
                .find("test.toml:2: [sched] policy: must be one of uniform"),
            std::string::npos);
}

TEST(ConfigTest, UnparsableDurationsAndSizesAreErrors) {
  EXPECT_EQ(
      LoadError("[fetch]\ntimeout = \"5 parsecs\"\n"),
      "test.toml:2: [fetch] timeout: unknown unit in duration \"5 parsecs\" "
      "(use ms, s, m, h, d, w)");
  EXPECT_NE(LoadError("[fetch]\nmax_body_bytes = \"ten megs\"\n")
                .find("test.toml:2: [fetch] max_body_bytes: cannot read size"),
            std::string::npos);
  EXPECT_NE(LoadError("[politeness]\nmin_delay = \"-1s\"\n")
                .find("negative duration"),
            std::string::npos);
}

TEST(ConfigTest, CrossFieldRulesNameTheKeyAndLine) {
  EXPECT_EQ(LoadError("[cluster]\nheartbeat = \"3s\"\nttl = \"5s\"\n"),
            "test.toml:2: [cluster] heartbeat: must be at most half of "
            "[cluster] ttl");
  EXPECT_NE(LoadError("[cluster]\nnode = \"crawl.1\"\n")
                .find("test.toml:2: [cluster] node: must be at most 64"),
            std::string::npos);
  EXPECT_NE(LoadError("[cluster]\nnats_url = \"nats://a b\"\n")
                .find("test.toml:2: [cluster] nats_url"),
            std::string::npos);
  EXPECT_NE(LoadError("[cluster]\nshards = 0\n").find("[cluster] shards"),
            std::string::npos);
  EXPECT_EQ(
      LoadError("[sched]\nmin_interval = \"2d\"\nmax_interval = \"1d\"\n"),
      "test.toml:2: [sched] min_interval: must not exceed [sched] "
      "max_interval");
  EXPECT_EQ(
      LoadError("[fetch]\nconnect_timeout = \"20s\"\ntimeout = \"10s\"\n"),
      "test.toml:2: [fetch] connect_timeout: must not exceed [fetch] timeout");
  EXPECT_NE(LoadError("[status]\nlisten = \"localhost\"\n")
                .find("test.toml:2: [status] listen"),
            std::string::npos);
  EXPECT_NE(LoadError("[fetch]\nresolve = { \"a.test\" = \"not-an-ip\" }\n")
                .find("[fetch] resolve"),
            std::string::npos);
  EXPECT_NE(LoadError("[crawler]\nexclude = [\"(\"]\n")
                .find("invalid regular expression"),
            std::string::npos);
  // Patterns are RE2: what it cannot compile (a backreference, lookahead)
  // is an error with the line; the backtracking bomb "(a+)+$" is fine (RE2
  // matches it in linear time, daemon/url_scope.h).
  EXPECT_EQ(LoadError("[crawler]\n\ninclude = [\"^https://\", \"(a)\\\\1\"]\n"),
            "test.toml:3: [crawler] include: invalid regular expression "
            "\"(a)\\1\": invalid escape sequence: \\1");
  EXPECT_NE(LoadError("[crawler]\nexclude = [\"a(?=b)\"]\n")
                .find("test.toml:2: [crawler] exclude: invalid regular"),
            std::string::npos);
  EXPECT_TRUE(
      LoadConfigString("[crawler]\ninclude = [\"(a+)+$\"]\n", "t").ok());
  // A header-injection attempt through the User-Agent is refused.
  EXPECT_NE(LoadError("[crawler]\nuser_agent = \"bot\\r\\nX-Evil: 1\"\n")
                .find("[crawler] user_agent"),
            std::string::npos);
}

TEST(ConfigTest, SyntaxErrorNamesTheLine) {
  std::string e = LoadError("[budget]\nrate = 1\nburst = = 2\n");
  EXPECT_EQ(e.rfind("test.toml:3: TOML syntax error", 0), 0u) << e;
}

TEST(ConfigTest, MissingFileIsNotFound) {
  Result<Config> c = LoadConfigFile("/nonexistent/freshd.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), Status::Code::kNotFound);
  EXPECT_NE(c.status().message().find("/nonexistent/freshd.toml"),
            std::string::npos);
}

TEST(ConfigTest, OversizedFileIsRefused) {
  std::string huge(2 << 20, '#');
  EXPECT_NE(LoadError(huge).find("larger than 1 MiB"), std::string::npos);
}

TEST(ConfigTest, WrittenTomlReadsBackEqual) {
  Config c;
  c.crawler.user_agent = "bot \"quoted\" \\ slash";
  c.crawler.exclude = {"\\.pdf$", "^ftp:"};
  c.budget.rate = 0.1;
  c.politeness.min_delay_s = 1.25;
  c.fetch.max_body_bytes = 12345;
  c.fetch.resolve = {{"a.test", "127.0.0.1"}, {"b.test", "::1"}};
  c.sched.new_page_value = 1e-3;
  Result<Config> back = LoadConfigString(ConfigToToml(c), "written.toml");
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << ConfigToToml(c);
  EXPECT_EQ(*back, c);
}

TEST(ConfigTest, UserAgentAndProductToken) {
  CrawlerConfig crawler;
  crawler.user_agent = "FreshBot-2/1.0";
  EXPECT_EQ(UserAgentHeader(crawler), "FreshBot-2/1.0");
  crawler.contact_url = "https://example.org/bot";
  EXPECT_EQ(UserAgentHeader(crawler),
            "FreshBot-2/1.0 (+https://example.org/bot)");
  EXPECT_EQ(RobotsProductToken(crawler), "FreshBot-");
  crawler.user_agent = "freshd/0.1";
  EXPECT_EQ(RobotsProductToken(crawler), "freshd");
}

// Collects "section.key" for every key of the schema.
constexpr const char* kTwoRules = R"(
[sched]
min_interval = "1m"

[[rule]]
name = "news"
url = "^https?://example\\.com/news/"
min_interval = "1h"
max_interval = "1d"

[[rule]]
name = "archive"
host = "*.archive.example"
importance = 0.1
)";

TEST(RulesConfigTest, ReadsRulesInFileOrder) {
  Result<Config> c = LoadConfigString(kTwoRules, "test.toml");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->rules.size(), 2u);
  EXPECT_EQ(c->rules[0].name, "news");
  EXPECT_EQ(c->rules[0].url, "^https?://example\\.com/news/");
  EXPECT_EQ(c->rules[0].min_interval_s, 3600);
  EXPECT_EQ(c->rules[0].max_interval_s, 86400);
  EXPECT_EQ(c->rules[0].importance, 0);
  EXPECT_EQ(c->rules[1].name, "archive");
  EXPECT_EQ(c->rules[1].host, "*.archive.example");
  EXPECT_EQ(c->rules[1].importance, 0.1);
  EXPECT_EQ(c->rules[1].min_interval_s, 0);
  // Written back, read back equal.
  Result<Config> back = LoadConfigString(ConfigToToml(*c), "written.toml");
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n"
                         << ConfigToToml(*c);
  EXPECT_EQ(*back, *c);
}

TEST(RulesConfigTest, ErrorsNameTheRuleLineAndKey) {
  EXPECT_EQ(LoadError("[[rule]]\nname = \"a\"\nhost = \"x.test\"\n"
                      "min_interval = \"2d\"\nmax_interval = \"1d\"\n"),
            "test.toml:4: [rule \"a\"] min_interval: must not exceed the "
            "rule's max_interval");
  EXPECT_EQ(
      LoadError("[[rule]]\nname = \"a\"\nmin_interval = \"1d\"\n"),
      "test.toml: [rule \"a\"] url: exactly one of host, url and origin is "
      "required");
  EXPECT_EQ(
      LoadError("[[rule]]\nname = \"a\"\nhost = \"x.test\"\n"
                "url = \"x\"\nmin_interval = \"1d\"\n"),
      "test.toml:3: [rule \"a\"] host: exactly one of host, url and origin is "
      "required");
  EXPECT_NE(LoadError("[[rule]]\nname = \"a\"\nurl = \"(\"\nimportance = 2\n")
                .find("test.toml:3: [rule \"a\"] url: invalid regular "
                      "expression"),
            std::string::npos);
  EXPECT_NE(LoadError("[[rule]]\nname = \"a\"\nhost = \"a b\"\n"
                      "importance = 2\n")
                .find("[rule \"a\"] host: must be a host name"),
            std::string::npos);
  EXPECT_EQ(LoadError("[[rule]]\nname = \"a\"\nhost = \"x.test\"\n"),
            "test.toml:2: [rule \"a\"] name: sets none of min_interval, "
            "max_interval, importance, proxy, headers, cookie, "
            "credentials_file, credential");
  EXPECT_EQ(LoadError("[[rule]]\nhost = \"x.test\"\nimportance = 2\n"),
            "test.toml: [rule #1] name: required: at most 64 printable "
            "characters, no '\"'");
  EXPECT_NE(LoadError("[[rule]]\nname = \"a\"\nhost = \"x.test\"\n"
                      "importance = 2\n[[rule]]\nname = \"a\"\n"
                      "host = \"y.test\"\nimportance = 2\n")
                .find("[rule \"a\"] name: another rule has this name"),
            std::string::npos);
  EXPECT_NE(LoadError("[[rule]]\nname = \"a\"\nhost = \"x.test\"\n"
                      "colour = 2\n")
                .find("test.toml:4: [rule \"a\"] colour: unknown key"),
            std::string::npos);
  EXPECT_NE(LoadError("[[rule]]\nname = \"a\"\nhost = \"x.test\"\n"
                      "importance = -1\n")
                .find("test.toml:4: [rule \"a\"] importance: must be between"),
            std::string::npos);
  EXPECT_NE(LoadError("rule = 3\n").find("must be an array of tables"),
            std::string::npos);
  // A maximum below the scheduler's minimum could never be kept.
  EXPECT_NE(LoadError("[sched]\nmin_interval = \"2h\"\n[[rule]]\nname = "
                      "\"a\"\nhost = \"x.test\"\nmax_interval = \"1h\"\n")
                .find("test.toml:6: [rule \"a\"] max_interval: must not be "
                      "below [sched] min_interval"),
            std::string::npos);
  // Bounded: at most kMaxRules rules, patterns of kMaxRulePatternBytes.
  std::string many;
  for (size_t i = 0; i <= kMaxRules; ++i) {
    many += "[[rule]]\nname = \"r" + std::to_string(i) +
            "\"\nhost = \"x.test\"\nimportance = 2\n";
  }
  EXPECT_NE(LoadError(many).find("at most 255 rules"), std::string::npos);
  EXPECT_NE(LoadError("[[rule]]\nname = \"a\"\nimportance = 2\nurl = \"" +
                      std::string(kMaxRulePatternBytes + 1, 'a') + "\"\n")
                .find("[rule \"a\"] url: longer than 1024 bytes"),
            std::string::npos);
}

class KeyLister {
 public:
  void Section(const char* name) { section_ = name; }
  template <typename... A>
  void String(const char* k, A...) {
    Add(k);
  }
  template <typename... A>
  void Int(const char* k, A...) {
    Add(k);
  }
  template <typename... A>
  void Double(const char* k, A...) {
    Add(k);
  }
  template <typename... A>
  void Bool(const char* k, A...) {
    Add(k);
  }
  template <typename... A>
  void Duration(const char* k, A...) {
    Add(k);
  }
  template <typename... A>
  void Size(const char* k, A...) {
    Add(k);
  }
  template <typename... A>
  void StringList(const char* k, A...) {
    Add(k);
  }
  template <typename... A>
  void StringMap(const char* k, A...) {
    Add(k);
  }
  std::set<std::string> keys;

 private:
  void Add(const char* k) { keys.insert(section_ + "." + k); }
  std::string section_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ExampleConfigTest, DocumentsEveryKeyWithAComment) {
  const std::string text = ReadFile(FRESHD_SOURCE_DIR "/systemd/freshd.toml");
  ASSERT_FALSE(text.empty());
  KeyLister lister;
  const Config defaults;
  VisitConfig(defaults, lister);
  std::set<std::string> documented;
  std::istringstream in(text);
  std::string line, section, previous;
  const std::regex section_re(R"(^\[([a-z_]+)\]\s*$)");
  const std::regex key_re(R"(^([a-z_]+)\s*=)");
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_search(line, m, section_re)) {
      section = m[1];
    } else if (std::regex_search(line, m, key_re)) {
      documented.insert(section + "." + m[1].str());
      EXPECT_EQ(previous.rfind("#", 0), 0u)
          << section << "." << m[1] << " has no comment line above it";
    }
    previous = line;
  }
  EXPECT_EQ(documented, lister.keys);
}

TEST(ExampleConfigTest, EqualsDefaultsExceptTheMarkedExamples) {
  Result<Config> example =
      LoadConfigFile(FRESHD_SOURCE_DIR "/systemd/freshd.toml");
  ASSERT_TRUE(example.ok()) << example.status().ToString();
  // The lines marked "# example:" in the file, and only those, differ.
  Config expected;
  expected.crawler.contact_url = "https://crawler.example.org/about";
  expected.crawler.seeds = "/etc/freshd/seeds.txt";
  EXPECT_EQ(*example, expected);
  const std::string text = ReadFile(FRESHD_SOURCE_DIR "/systemd/freshd.toml");
  size_t marks = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (std::regex_search(line, std::regex(R"(^[a-z_]+ = .*# example:)")))
      ++marks;
  }
  EXPECT_EQ(marks, 2u);
}

}  // namespace
}  // namespace freshd
