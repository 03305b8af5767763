// PageMeta: the three strings packed in one block read back as set, each
// set leaves the others alone, copies are deep, a page never fetched holds
// no block (the record codec is daemon/page_codec.h's).

#include "daemon/page_meta.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace freshd::daemon {
namespace {

TEST(PageMetaTest, FieldsAreSetIndependently) {
  PageMeta m;
  EXPECT_EQ(m.etag(), "");
  EXPECT_EQ(m.last_modified(), "");
  EXPECT_EQ(m.last_outcome(), "");
  m.set_last_modified("Wed, 25 Nov 2026 07:28:00 GMT");
  EXPECT_EQ(m.etag(), "");
  EXPECT_EQ(m.last_modified(), "Wed, 25 Nov 2026 07:28:00 GMT");
  m.set_etag("\"5f3a-1c2b\"");
  m.set_last_outcome("not-modified");
  EXPECT_EQ(m.etag(), "\"5f3a-1c2b\"");
  EXPECT_EQ(m.last_modified(), "Wed, 25 Nov 2026 07:28:00 GMT");
  EXPECT_EQ(m.last_outcome(), "not-modified");
  m.set_etag("");  // cleared alone
  EXPECT_EQ(m.etag(), "");
  EXPECT_EQ(m.last_outcome(), "not-modified");
  // A value taken from the field itself (it points into the block).
  m.set_etag(m.last_modified().substr(0, 3));
  EXPECT_EQ(m.etag(), "Wed");
  EXPECT_EQ(m.last_modified(), "Wed, 25 Nov 2026 07:28:00 GMT");
  // Bytes of any value, NUL included, and a long one.
  const std::string odd("a\0b", 3), long_etag(70000, 'x');
  m.set_last_outcome(odd);
  m.set_etag(long_etag);
  EXPECT_EQ(m.last_outcome(), odd);
  EXPECT_EQ(m.etag(), long_etag);
}

TEST(PageMetaTest, CopiesAreDeepAndMovesKeepTheValues) {
  PageMeta a;
  a.set_etag("e1");
  a.set_last_outcome("ok");
  a.content_hash = 42;
  a.last_signal_lastmod = 1.78e9;
  a.last_status = 200;
  PageMeta b = a;
  b.set_etag("e2");
  EXPECT_EQ(a.etag(), "e1");
  EXPECT_EQ(b.etag(), "e2");
  EXPECT_EQ(b.last_outcome(), "ok");
  EXPECT_EQ(b.content_hash, 42u);
  PageMeta c;
  c = b;
  PageMeta d = std::move(c);
  EXPECT_EQ(d.etag(), "e2");
  EXPECT_EQ(d.last_status, 200);
  EXPECT_EQ(d.last_signal_lastmod, 1.78e9);
  // The footprint the book pays per page (issue 29): 32 bytes, not 128
  // (the last fetch time is the scheduler's).
  EXPECT_LE(sizeof(PageMeta), 32u);
}

TEST(PageMetaTest, BuiltFromTheThreeStrings) {
  const PageMeta m("W/\"abc\"", "Tue, 24 Nov 2026 10:00:00 GMT", "4xx");
  EXPECT_EQ(m.etag(), "W/\"abc\"");
  EXPECT_EQ(m.last_modified(), "Tue, 24 Nov 2026 10:00:00 GMT");
  EXPECT_EQ(m.last_outcome(), "4xx");
  const PageMeta empty("", "", "");
  EXPECT_EQ(empty.etag(), "");
  EXPECT_EQ(empty.last_outcome(), "");
}

// Lengths at the one-byte header's edges (254, 255, 256) beside short and
// empty fields, set one by one and in every order, read back as set.
TEST(PageMetaTest, LengthsAtTheHeadersEdges) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{254}, size_t{255}, size_t{256},
                   size_t{65536}}) {
    const std::string a(n, 'a'), b(n == 0 ? 0 : n - 1, 'b'), c(n + 1, 'c');
    PageMeta m(a, b, c);
    EXPECT_EQ(m.etag(), a) << n;
    EXPECT_EQ(m.last_modified(), b) << n;
    EXPECT_EQ(m.last_outcome(), c) << n;
    m.set_last_modified("x");
    EXPECT_EQ(m.etag(), a) << n;
    EXPECT_EQ(m.last_modified(), "x") << n;
    EXPECT_EQ(m.last_outcome(), c) << n;
    m.set_etag("");
    m.set_last_outcome(a);
    EXPECT_EQ(m.etag(), "") << n;
    EXPECT_EQ(m.last_outcome(), a) << n;
    PageMeta copy = m;
    EXPECT_EQ(copy.last_outcome(), a) << n;
    EXPECT_EQ(copy.last_modified(), "x") << n;
  }
}

}  // namespace
}  // namespace freshd::daemon
