// Registrable domains by the Public Suffix List (libpsl, Debian's list).

#include "parse/public_suffix.h"

#include <gtest/gtest.h>

namespace freshd::parse {
namespace {

TEST(PublicSuffixTest, RegistrableDomainsFollowTheList) {
  auto psl = PublicSuffixList::Load();
  ASSERT_TRUE(psl.ok()) << psl.status().ToString();
  struct Case {
    const char* host;
    const char* domain;
  } cases[] = {
      {"news.bbc.co.uk", "bbc.co.uk"},
      {"bbc.co.uk", "bbc.co.uk"},
      {"a.b.example.org", "example.org"},
      {"alice.github.io", "alice.github.io"},  // github.io is a suffix
      {"www.alice.github.io", "alice.github.io"},
      {"a.b.c.kawasaki.jp", "b.c.kawasaki.jp"},  // wildcard rule *.kawasaki.jp
      {"city.kawasaki.jp", "city.kawasaki.jp"},  // its exception !city
      {"www.xn--80ak6aa92e.xn--p1ai", "xn--80ak6aa92e.xn--p1ai"},  // punycode
      {"co.uk", "co.uk"},          // a suffix is its own domain
      {"localhost", "localhost"},  // so is a single label
      {"127.0.0.1", "127.0.0.1"},  // and an IP literal, not "0.1"
      {"[::1]", "[::1]"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(psl->RegistrableDomain(c.host), c.domain) << c.host;
  }
}

}  // namespace
}  // namespace freshd::parse
