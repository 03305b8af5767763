// PageMeta: 32 bytes a page, no heap block; the last outcome a one-byte
// code read back as fetch::OutcomeName, an outcome outside the set kept as
// "other" (its string a ColdField), Last-Modified kept as a time.

#include "daemon/page_meta.h"

#include <gtest/gtest.h>

#include <type_traits>

namespace freshd::daemon {
namespace {

TEST(PageMetaTest, ThirtyTwoBytesAndNoHeap) {
  EXPECT_LE(sizeof(PageMeta), 32u);
  // A plain value: copied by memcpy, no destructor to run.
  EXPECT_TRUE(std::is_trivially_copyable_v<PageMeta>);
  EXPECT_TRUE(std::is_trivially_destructible_v<PageMeta>);
}

TEST(PageMetaTest, OutcomeCodeReadsBackEveryName) {
  PageMeta m;
  EXPECT_EQ(m.last_outcome(), "");
  EXPECT_FALSE(m.last_outcome_class().has_value());
  EXPECT_FALSE(m.other_outcome());
  for (int i = 0; i <= static_cast<int>(fetch::kLastOutcomeClass); ++i) {
    const auto c = static_cast<fetch::OutcomeClass>(i);
    m.set_last_outcome(c);
    EXPECT_EQ(m.last_outcome(), fetch::OutcomeName(c)) << i;
    EXPECT_EQ(m.last_outcome_class(), c) << i;
    PageMeta from_name;
    from_name.set_last_outcome_name(fetch::OutcomeName(c));
    EXPECT_EQ(from_name.last_outcome_class(), c) << i;
    EXPECT_FALSE(from_name.other_outcome()) << i;
  }
  m.set_last_outcome_name("written-by-someone-else");
  EXPECT_TRUE(m.other_outcome());
  EXPECT_EQ(m.last_outcome(), "");
  EXPECT_FALSE(m.last_outcome_class().has_value());
  m.set_last_outcome_name("");
  EXPECT_FALSE(m.other_outcome());
  EXPECT_EQ(m.last_outcome(), "");
}

TEST(PageMetaTest, LastModifiedIsKeptAsATime) {
  PageMeta m;
  EXPECT_FALSE(m.last_modified_time().has_value());
  m.set_last_modified("Wed, 25 Nov 2026 07:28:00 GMT");
  EXPECT_EQ(m.last_modified_time(), 1795591680.0);
  m.set_last_modified("not a date");
  EXPECT_FALSE(m.last_modified_time().has_value());
  m.set_last_modified("Wed, 25 Nov 2026 07:28:00 GMT");
  m.set_last_modified("");
  EXPECT_FALSE(m.last_modified_time().has_value());
}

TEST(PageMetaTest, ColdFieldsSayWhetherThereAreValidators) {
  ColdFields c;
  EXPECT_FALSE(c.has_validators());
  c.other_outcome = "x";
  EXPECT_FALSE(c.has_validators());
  c.last_modified = "Wed, 25 Nov 2026 07:28:00 GMT";
  EXPECT_TRUE(c.has_validators());
  c = {};
  c.etag = "\"e\"";
  EXPECT_TRUE(c.has_validators());
}

}  // namespace
}  // namespace freshd::daemon
