// UrlIndex: ids are positions, each URL is found by string_view without a
// copy, a known URL is not added twice, and Assign (recovery) rebuilds the
// lookup, duplicates keeping their first id. URLs are packed in blocks:
// many URLs, a URL longer than a block and an empty one keep their bytes.

#include "daemon/url_index.h"

#include <gtest/gtest.h>

#include <algorithm>
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

TEST(UrlIndexTest, UrlsSpanBlocksAndKeepTheirBytes) {
  UrlIndex index;
  std::vector<std::string> expected;
  // ~3 MiB of URLs: several blocks, lengths across the varint's 1-2-3
  // byte forms, one longer than a block, one empty.
  for (int i = 0; i < 30000; ++i) {
    expected.push_back("https://h" + std::to_string(i % 300) + ".example/" +
                       std::string(static_cast<size_t>(i % 200), 'p') +
                       std::to_string(i));
  }
  expected[100] = "https://long.example/" + std::string(3 << 20, 'q');
  expected[101] = "https://mid.example/" + std::string(20000, 'm');
  expected[102] = "";
  for (const std::string& u : expected) ASSERT_TRUE(index.Add(u));
  ASSERT_EQ(index.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(index.url(static_cast<sched::PageId>(i)), expected[i]) << i;
    ASSERT_EQ(index.Find(expected[i]), sched::PageId(i)) << i;
  }
  // The id-ordered range: size, indexing, iteration, std::find.
  const UrlIndex::Urls urls = index.urls();
  EXPECT_EQ(urls.size(), expected.size());
  EXPECT_EQ(urls[7], expected[7]);
  EXPECT_TRUE(
      std::equal(urls.begin(), urls.end(), expected.begin(), expected.end()));
  auto it = std::find(index.urls().begin(), index.urls().end(), expected[9]);
  EXPECT_EQ(it - index.urls().begin(), 9);
  // Assign keeps the same contents.
  UrlIndex copy;
  copy.Assign(expected);
  for (size_t i = 0; i < expected.size(); i += 7) {
    ASSERT_EQ(copy.url(static_cast<sched::PageId>(i)), expected[i]);
    ASSERT_EQ(copy.Find(expected[i]), sched::PageId(i));
  }
  EXPECT_FALSE(copy.Find("https://h1.example/none").has_value());
}

}  // namespace
}  // namespace freshd::daemon
