// Tests of parse/url: RFC 3986 normalization (section 6.2.2) and reference
// resolution (section 5.2, with the RFC's own examples in section 5.4),
// WHATWG leniency for hrefs, IDN, rejection reasons and the stable key.

#include "parse/url.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>

namespace freshd::parse {
namespace {

std::string Norm(std::string_view in) {
  auto r = NormalizeUrl(in);
  return r.ok() ? *r : "ERR: " + r.status().message();
}

std::string Resolve(std::string_view base, std::string_view ref) {
  auto r = ResolveUrl(base, ref);
  return r.ok() ? *r : "ERR: " + r.status().message();
}

TEST(UrlNormalizeTest, Rfc3986_6_2_2_CaseAndPercentEncoding) {
  EXPECT_EQ(Norm("HTTP://Example.COM/a%2fb%7e%41"),
            "http://example.com/a%2Fb~A");
  EXPECT_EQ(Norm("http://example.com/%7Efoo"), "http://example.com/~foo");
  EXPECT_EQ(Norm("http://example.com/a b\"<>^`{|}"),
            "http://example.com/a%20b%22%3C%3E%5E%60%7B%7C%7D");
  // A stray '%' is escaped rather than rejected.
  EXPECT_EQ(Norm("http://example.com/100%"), "http://example.com/100%25");
  EXPECT_EQ(Norm("http://example.com/%zz"), "http://example.com/%25zz");
  // Non-ASCII bytes in path and query are escaped as UTF-8.
  EXPECT_EQ(Norm("http://example.com/ツ?q=é"),
            "http://example.com/%E3%83%84?q=%C3%A9");
}

TEST(UrlNormalizeTest, Rfc3986_6_2_3_SchemeBasedNormalization) {
  EXPECT_EQ(Norm("http://example.com"), "http://example.com/");
  EXPECT_EQ(Norm("http://example.com:80/"), "http://example.com/");
  EXPECT_EQ(Norm("https://example.com:443/x"), "https://example.com/x");
  EXPECT_EQ(Norm("https://example.com:80/x"), "https://example.com:80/x");
  EXPECT_EQ(Norm("http://example.com:/x"), "http://example.com/x");
  EXPECT_EQ(Norm("http://example.com:008080/x"), "http://example.com:8080/x");
  EXPECT_EQ(Norm("http://example.com./x"), "http://example.com/x");
}

TEST(UrlNormalizeTest, DotSegmentsFragmentsAndEmptyQuery) {
  EXPECT_EQ(Norm("http://a/b/c/./../../g"), "http://a/g");
  EXPECT_EQ(Norm("http://a/b/../../../g"), "http://a/g");
  EXPECT_EQ(Norm("http://a/b/%2E%2E/c"), "http://a/c");
  EXPECT_EQ(Norm("http://a/b/."), "http://a/b/");
  EXPECT_EQ(Norm("http://a/b?x=1#frag"), "http://a/b?x=1");
  EXPECT_EQ(Norm("http://a/b?"), "http://a/b");
  EXPECT_EQ(Norm("http://a/b#"), "http://a/b");
  EXPECT_EQ(Norm("http://a/b?q=a/../c"), "http://a/b?q=a/../c");
}

TEST(UrlNormalizeTest, WhatwgLeniencyForHrefs) {
  EXPECT_EQ(Norm("  http://example.com/a\tb\n "), "http://example.com/ab");
  EXPECT_EQ(Norm("http:\\\\example.com\\a\\b"), "http://example.com/a/b");
  EXPECT_EQ(Norm("http:example.com/x"), "http://example.com/x");
}

TEST(UrlNormalizeTest, HostsIdnAndIpLiterals) {
  EXPECT_EQ(Norm("http://Bücher.example/"), "http://xn--bcher-kva.example/");
  EXPECT_EQ(Norm("http://xn--bcher-kva.example/"),
            "http://xn--bcher-kva.example/");
  EXPECT_EQ(Norm("http://faß.de/"), "http://xn--fa-hia.de/");  // UTS#46 NT
  EXPECT_EQ(Norm("http://[2001:DB8:0:0::1]:8080/"),
            "http://[2001:db8::1]:8080/");
  EXPECT_EQ(Norm("http://127.0.0.1/"), "http://127.0.0.1/");
  EXPECT_EQ(Norm("http://my_host.example/"), "http://my_host.example/");
}

TEST(UrlNormalizeTest, RejectsWithReason) {
  EXPECT_EQ(Norm(""), "ERR: empty URL");
  EXPECT_EQ(Norm("   "), "ERR: empty URL");
  EXPECT_EQ(Norm("/relative/path"), "ERR: not an absolute URL");
  EXPECT_EQ(Norm("ftp://example.com/"), "ERR: unsupported scheme 'ftp'");
  EXPECT_EQ(Norm("javascript:alert(1)"),
            "ERR: unsupported scheme 'javascript'");
  EXPECT_EQ(Norm("mailto:a@b.c"), "ERR: unsupported scheme 'mailto'");
  EXPECT_EQ(Norm("http://"), "ERR: empty host");
  EXPECT_EQ(Norm("http://:80/x"), "ERR: empty host");
  EXPECT_EQ(Norm("http:///x"), "http://x/");  // WHATWG: slashes skipped
  EXPECT_EQ(Norm("http://user:pw@example.com/"), "ERR: userinfo not allowed");
  EXPECT_EQ(Norm("http://example.com:99999/"), "ERR: invalid port");
  EXPECT_EQ(Norm("http://example.com:8o/"), "ERR: invalid port");
  EXPECT_EQ(Norm("http://exa mple.com/"), "ERR: invalid host");
  EXPECT_EQ(Norm("http://a..b/"), "ERR: invalid host");
  EXPECT_EQ(Norm("http://[::1/"), "ERR: invalid host");
  EXPECT_EQ(Norm("http://b%C3%BC%00evil.com/"), "ERR: invalid host");
  EXPECT_EQ(Norm("http://a%2Fb/"), "ERR: invalid host");
  EXPECT_EQ(Norm("http://" + std::string(64, 'a') + ".com/"),
            "ERR: invalid host");
  EXPECT_EQ(Norm("http://example.com/" + std::string(kMaxUrlLength, 'a')),
            "ERR: URL too long");
  EXPECT_EQ(Norm(std::string(5 * kMaxUrlLength, ' ')), "ERR: URL too long");
}

// RFC 3986 section 5.4.1 and 5.4.2 examples (base http://a/b/c/d;p?q),
// restricted to results that are http URLs.
TEST(UrlResolveTest, Rfc3986_5_4_Examples) {
  const std::string base = "http://a/b/c/d;p?q";
  const std::pair<const char*, const char*> kCases[] = {
      {"g", "http://a/b/c/g"},
      {"./g", "http://a/b/c/g"},
      {"g/", "http://a/b/c/g/"},
      {"/g", "http://a/g"},
      {"//g", "http://g/"},
      {"?y", "http://a/b/c/d;p?y"},
      {"g?y", "http://a/b/c/g?y"},
      {"#s", "http://a/b/c/d;p?q"},
      {"g#s", "http://a/b/c/g"},
      {"g?y#s", "http://a/b/c/g?y"},
      {";x", "http://a/b/c/;x"},
      {"g;x", "http://a/b/c/g;x"},
      {"", "http://a/b/c/d;p?q"},
      {".", "http://a/b/c/"},
      {"./", "http://a/b/c/"},
      {"..", "http://a/b/"},
      {"../", "http://a/b/"},
      {"../g", "http://a/b/g"},
      {"../..", "http://a/"},
      {"../../g", "http://a/g"},
      {"../../../g", "http://a/g"},
      {"../../../../g", "http://a/g"},
      {"/./g", "http://a/g"},
      {"/../g", "http://a/g"},
      {"g.", "http://a/b/c/g."},
      {".g", "http://a/b/c/.g"},
      {"g..", "http://a/b/c/g.."},
      {"..g", "http://a/b/c/..g"},
      {"./../g", "http://a/b/g"},
      {"./g/.", "http://a/b/c/g/"},
      {"g/./h", "http://a/b/c/g/h"},
      {"g/../h", "http://a/b/c/h"},
      {"g;x=1/./y", "http://a/b/c/g;x=1/y"},
      {"g;x=1/../y", "http://a/b/c/y"},
      {"g?y/./x", "http://a/b/c/g?y/./x"},
      {"g#s/../x", "http://a/b/c/g"},
      {"http:g", "http://a/b/c/g"},  // WHATWG (RFC "for backward compat")
  };
  for (const auto& [ref, want] : kCases) {
    EXPECT_EQ(Resolve(base, ref), want) << "ref '" << ref << "'";
  }
}

TEST(UrlResolveTest, AbsoluteAndSchemeRelativeReferences) {
  EXPECT_EQ(Resolve("https://a/b", "HTTP://Other/X"), "http://other/X");
  EXPECT_EQ(Resolve("https://a/b", "//c/d"), "https://c/d");
  EXPECT_EQ(Resolve("https://a/b", "mailto:x@y"),
            "ERR: unsupported scheme 'mailto'");
  EXPECT_EQ(Resolve("ftp://a/", "x"),
            "ERR: invalid base: unsupported scheme 'ftp'");
  EXPECT_EQ(Resolve("http://a/dir/", " page.html "), "http://a/dir/page.html");
  EXPECT_EQ(Resolve("http://a/dir/", "\\x"), "http://a/x");
}

TEST(UrlAccessorTest, PartsOfNormalizedUrls) {
  std::string u = *NormalizeUrl("HTTPS://Example.com:8443/a/b?c=d#e");
  EXPECT_EQ(UrlScheme(u), "https");
  EXPECT_EQ(UrlAuthority(u), "example.com:8443");
  EXPECT_EQ(UrlHost(u), "example.com");
  EXPECT_EQ(UrlPathAndQuery(u), "/a/b?c=d");
  EXPECT_EQ(UrlOrigin(u), "https://example.com:8443");
  std::string v6 = *NormalizeUrl("http://[::1]:81/");
  EXPECT_EQ(UrlHost(v6), "[::1]");
  EXPECT_EQ(UrlAuthority(v6), "[::1]:81");
  EXPECT_EQ(UrlHost(*NormalizeUrl("http://[::1]/")), "[::1]");
}

TEST(UrlKeyTest, StableAcrossVersions) {
  // Storage keys: these values must never change.
  EXPECT_EQ(UrlKey("http://example.com/"), UrlKey("http://example.com/"));
  EXPECT_NE(UrlKey("http://example.com/"), UrlKey("https://example.com/"));
  const uint64_t key = UrlKey("http://example.com/");
  std::printf("UrlKey(http://example.com/) = 0x%016llx\n",
              static_cast<unsigned long long>(key));
  EXPECT_EQ(key, 0xad6b37d72d21d764ULL);  // XXH3-64, seed kUrlKeySeed
  EXPECT_EQ(key, UrlKey(*NormalizeUrl("HTTP://EXAMPLE.com:80/#x")));
}

// Normalizing twice changes nothing, for random byte soup around valid
// URL skeletons. Seed fixed and logged.
TEST(UrlNormalizeTest, IdempotentOnRandomInputs) {
  const uint32_t seed = 20261121;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  const std::string alphabet =
      "abcXYZ019-._~!$&'()*+,;=:@/?#%[]\\ \t\"<>^`{|}\x7f\xc3\xa9\xe3\x83\x84";
  int valid = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string url = (rng() % 2) ? "http://" : "https://";
    url += (rng() % 4 == 0) ? "Bücher.EXAMPLE" : "Host.example";
    if (rng() % 3 == 0) url += ":" + std::to_string(rng() % 70000);
    url += "/";
    int n = static_cast<int>(rng() % 40);
    for (int j = 0; j < n; ++j)
      url.push_back(alphabet[rng() % alphabet.size()]);
    auto once = NormalizeUrl(url);
    if (!once.ok()) continue;
    ++valid;
    auto twice = NormalizeUrl(*once);
    ASSERT_TRUE(twice.ok()) << url << " -> " << *once;
    EXPECT_EQ(*twice, *once) << url;
    EXPECT_LE(once->size(), kMaxUrlLength);
    for (char c : *once) {
      ASSERT_GT(static_cast<unsigned char>(c), 0x20) << *once;
      ASSERT_LT(static_cast<unsigned char>(c), 0x7f) << *once;
    }
  }
  EXPECT_GT(valid, 5000);
}

// The one query-string reader (IndexNow's GET, the status endpoint's
// /page?url= and /hosts?sort=): form decoding, first value, absent.
TEST(FormValueTest, DecodesTheFirstValueOfAName) {
  EXPECT_EQ(FormValue("a=1&url=http%3A%2F%2Fx.test%2Fa+b&url=2", "url"),
            "http://x.test/a b");
  EXPECT_EQ(FormValue("flag&b=2", "flag"), "");
  EXPECT_EQ(FormValue("urls=1&xurl=2", "url"), std::nullopt);
  EXPECT_EQ(FormValue("url=%zz%4", "url"), "%zz%4");  // bad escapes kept
  EXPECT_EQ(FormValue("", "url"), std::nullopt);
}

}  // namespace
}  // namespace freshd::parse
