// UrlIndex: ids are positions, each URL is found by string_view without a
// copy, a known URL is not added twice, and Assign (recovery) rebuilds the
// lookup, duplicates keeping their first id.

#include "daemon/url_index.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace freshd::daemon {
namespace {

TEST(UrlIndexTest, IdsArePositionsAndLookupsNeedNoCopy) {
  UrlIndex index;
  EXPECT_FALSE(index.Find("http://a.example/").has_value());
  ASSERT_TRUE(index.Add("http://a.example/"));
  ASSERT_TRUE(index.Add("http://b.example/x"));
  EXPECT_FALSE(index.Add("http://a.example/"));  // known: not added again
  EXPECT_EQ(index.size(), 2u);
  const std::string text = "see http://b.example/x here";
  std::string_view view = std::string_view(text).substr(4, 18);
  ASSERT_EQ(view, "http://b.example/x");
  EXPECT_EQ(index.Find(view), sched::PageId{1});
  EXPECT_EQ(index.url(0), "http://a.example/");
  // Many more: the set rehashes through the vector's strings (which move
  // as the vector grows); every URL still maps to its id.
  for (int i = 0; i < 5000; ++i) {
    ASSERT_TRUE(index.Add("http://c.example/" + std::to_string(i)));
  }
  for (int i = 0; i < 5000; i += 97) {
    EXPECT_EQ(index.Find("http://c.example/" + std::to_string(i)),
              sched::PageId(2 + i));
  }
  EXPECT_EQ(index.Find("http://b.example/x"), sched::PageId{1});
  EXPECT_FALSE(index.Find("http://c.example/5000").has_value());
}

TEST(UrlIndexTest, AssignRebuildsTheLookup) {
  UrlIndex index;
  ASSERT_TRUE(index.Add("http://old.example/"));
  index.Assign({"http://a.example/", "http://b.example/", "http://a.example/"});
  EXPECT_EQ(index.size(), 3u);
  EXPECT_FALSE(index.Find("http://old.example/").has_value());
  EXPECT_EQ(index.Find("http://a.example/"), sched::PageId{0});
  EXPECT_EQ(index.Find("http://b.example/"), sched::PageId{1});
  EXPECT_EQ(index.url(2), "http://a.example/");
  EXPECT_TRUE(index.Add("http://d.example/"));
  EXPECT_EQ(index.Find("http://d.example/"), sched::PageId{3});
}

}  // namespace
}  // namespace freshd::daemon
