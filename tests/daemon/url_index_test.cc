// UrlIndex: ids are positions, each URL is found by string_view without a
// copy, a known URL is not added twice, and Assign (recovery) rebuilds the
// lookup, duplicates keeping their first id; Reserve keeps what is known. The
// URLs live in an unlinked file (a small tail in memory): many URLs, a URL
// longer than the tail or a read chunk and an empty one keep their bytes, read
// one by one or in one pass; URLs sharing a key are one to Find, two to
// FindExact; without a writable directory the URLs stay in memory and nothing
// is lost.

#include "daemon/url_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
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
  // Many more: the table grows (rehashing the keys, no read) and the tail
  // is written out; every URL still maps to its id.
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

// Reserve (a restart, for the store's count): URLs known before keep their
// ids, the restored ones follow, past the reserved count too.
TEST(UrlIndexTest, ReserveKeepsWhatIsKnownAndRoomGrowsBeyondIt) {
  UrlIndex index;
  ASSERT_TRUE(index.Add("http://a.example/"));
  index.Reserve(1000);
  for (int i = 0; i < 1500; ++i) {
    index.AddRestored("http://r.example/" + std::to_string(i));
  }
  index.AddRestored("http://a.example/");  // a duplicate keeps its first id
  EXPECT_EQ(index.size(), 1502u);
  EXPECT_EQ(index.Find("http://a.example/"), sched::PageId{0});
  for (int i = 0; i < 1500; i += 37) {
    EXPECT_EQ(index.Find("http://r.example/" + std::to_string(i)),
              sched::PageId(1 + i));
  }
  EXPECT_EQ(index.url(1501), "http://a.example/");
  index.Reserve(10);  // less than held: nothing changes
  EXPECT_EQ(index.Find("http://r.example/1499"), sched::PageId{1500});
}

TEST(UrlIndexTest, UrlsSpanBlocksAndKeepTheirBytes) {
  UrlIndex index;
  std::vector<std::string> expected;
  // ~3 MiB of URLs: many tails written, one URL longer than a read chunk
  // (1 MiB), one longer than the tail, one empty.
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
  // The URLs went to the file; what waits in memory is under a tail.
  EXPECT_GT(index.file_bytes(), uint64_t{3} << 20);
  EXPECT_LT(index.tail_bytes(), UrlIndex::kTailBytes);
  // One sequential pass sees every URL in id order, file and tail.
  size_t seen = 0;
  index.ForEach([&](sched::PageId id, std::string_view url) {
    ASSERT_EQ(id, seen);
    ASSERT_EQ(url, expected[id]) << id;
    ++seen;
  });
  EXPECT_EQ(seen, expected.size());
}

// The file is created in the directory given and unlinked at once: nothing
// is left there, and the URLs read back after many writes.
TEST(UrlIndexTest, TheFileLeavesNothingInItsDirectory) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "url_index_dir";
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(std::filesystem::create_directories(dir));
  {
    UrlIndex index(dir.string());
    for (int i = 0; i < 20000; ++i) {
      ASSERT_TRUE(index.Add("https://d.example/" + std::to_string(i) +
                            std::string(40, 'x')));
    }
    EXPECT_GT(index.file_bytes(), 0u);
    EXPECT_TRUE(std::filesystem::is_empty(dir));
    EXPECT_EQ(index.url(12345),
              "https://d.example/12345" + std::string(40, 'x'));
    EXPECT_EQ(index.Find("https://d.example/19999" + std::string(40, 'x')),
              sched::PageId{19999});
  }
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

// Distinct URLs with one key (the hook keeps 8 bits of the key: 256 keys for
// 3,000 URLs). Find trusts the key, as documented: a URL whose key is taken
// is found as the first one's id and not added. FindExact reads the stored
// URL (in the file or the tail) and tells them apart.
TEST(UrlIndexTest, UrlsSharingAKeyAreToldApartByFindExact) {
  UrlIndex index;
  index.TEST_set_key_bits(8);
  std::vector<std::string> added, shadowed;
  std::vector<sched::PageId> shadow_of;
  for (int i = 0; i < 3000; ++i) {
    const std::string u =
        "https://k.example/" + std::to_string(i) + std::string(300, 'k');
    if (auto first = index.Find(u)) {
      EXPECT_FALSE(index.FindExact(u).has_value()) << u;
      EXPECT_FALSE(index.Add(u));
      shadowed.push_back(u);
      shadow_of.push_back(*first);
    } else {
      ASSERT_TRUE(index.Add(u)) << i;
      added.push_back(u);
    }
  }
  EXPECT_EQ(added.size(), 256u);  // one URL per key
  EXPECT_EQ(index.size(), 256u);
  EXPECT_GT(index.file_bytes(), 0u);  // some compared from the file
  for (size_t i = 0; i < added.size(); ++i) {
    ASSERT_EQ(index.Find(added[i]), sched::PageId(i)) << i;
    ASSERT_EQ(index.FindExact(added[i]), sched::PageId(i)) << i;
    ASSERT_EQ(index.url(static_cast<sched::PageId>(i)), added[i]);
  }
  for (size_t i = 0; i < shadowed.size(); ++i) {
    ASSERT_EQ(index.Find(shadowed[i]), shadow_of[i]);
    ASSERT_FALSE(index.FindExact(shadowed[i]).has_value());
  }
  // A restart's duplicate keeps the first id.
  index.AddRestored(added[5]);
  EXPECT_EQ(index.Find(added[5]), sched::PageId{5});
  EXPECT_EQ(index.url(256), added[5]);
}

// No directory to write in: the URLs stay in memory (the tail grows) and
// every one still resolves both ways; Assign starts over.
TEST(UrlIndexTest, WithoutAFileTheUrlsStayInMemory) {
  UrlIndex index("/nonexistent-dir-for-url-index-test/x");
  std::vector<std::string> urls;
  for (int i = 0; i < 10000; ++i) {
    urls.push_back("https://m.example/" + std::to_string(i) +
                   std::string(50, 'm'));
    ASSERT_TRUE(index.Add(urls.back()));
  }
  EXPECT_EQ(index.file_bytes(), 0u);
  EXPECT_GT(index.tail_bytes(), UrlIndex::kTailBytes);
  for (size_t i = 0; i < urls.size(); i += 13) {
    ASSERT_EQ(index.url(static_cast<sched::PageId>(i)), urls[i]);
    ASSERT_EQ(index.Find(urls[i]), sched::PageId(i));
  }
  size_t seen = 0;
  index.ForEach([&](sched::PageId id, std::string_view url) {
    ASSERT_EQ(url, urls[id]);
    ++seen;
  });
  EXPECT_EQ(seen, urls.size());
  index.Assign({"https://a.example/"});
  EXPECT_EQ(index.size(), 1u);
  EXPECT_FALSE(index.Find(urls[0]).has_value());
  EXPECT_EQ(index.url(0), "https://a.example/");
}

// An index reused by Assign after its file was written: the new URLs are
// written over the old bytes, and none of the old ones is found.
TEST(UrlIndexTest, AssignOverAWrittenFile) {
  UrlIndex index;
  for (int i = 0; i < 5000; ++i) {
    ASSERT_TRUE(index.Add("https://old.example/" + std::to_string(i) +
                          std::string(60, 'o')));
  }
  ASSERT_GT(index.file_bytes(), 0u);
  std::vector<std::string> fresh;
  for (int i = 0; i < 3000; ++i) {
    fresh.push_back("https://new.example/" + std::to_string(i));
  }
  index.Assign(fresh);
  ASSERT_EQ(index.size(), fresh.size());
  for (size_t i = 0; i < fresh.size(); ++i) {
    ASSERT_EQ(index.url(static_cast<sched::PageId>(i)), fresh[i]);
    ASSERT_EQ(index.Find(fresh[i]), sched::PageId(i));
  }
  EXPECT_FALSE(
      index.Find("https://old.example/1" + std::string(60, 'o')).has_value());
}

// A URL starting 64 KiB or more past its group's base (16 URLs of ~5 KiB)
// keeps its full offset apart: long URLs among short ones, read one by one,
// in one pass and from the file, keep their bytes and ids.
TEST(UrlIndexTest, LongUrlsKeepTheirOffsets) {
  UrlIndex index;
  std::vector<std::string> urls;
  for (int i = 0; i < 400; ++i) {
    const size_t length = i % 3 == 0 ? 5000 + i : 30 + i % 7;
    std::string u = "https://w.example/" + std::to_string(i) + "/";
    u.append(length - u.size(), static_cast<char>('a' + i % 26));
    urls.push_back(u);
    ASSERT_TRUE(index.Add(u)) << i;
  }
  ASSERT_GT(index.file_bytes(), 0u);
  for (size_t i = 0; i < urls.size(); ++i) {
    ASSERT_EQ(index.url(static_cast<sched::PageId>(i)), urls[i]) << i;
    ASSERT_EQ(index.Find(urls[i]), sched::PageId(i)) << i;
    ASSERT_EQ(index.FindExact(urls[i]), sched::PageId(i)) << i;
  }
  size_t seen = 0;
  index.ForEach([&](sched::PageId id, std::string_view url) {
    ASSERT_EQ(url, urls[id]);
    ++seen;
  });
  EXPECT_EQ(seen, urls.size());
}

// The table is not a power of two: it grows by half at 80% in use, and a
// Reserve sizes it for the count; at every size each URL is found and an
// unknown one is not.
TEST(UrlIndexTest, EverySizeOfTheTableFindsEveryUrl) {
  for (size_t reserve : {size_t{0}, size_t{777}, size_t{5000}}) {
    UrlIndex index;
    index.Reserve(reserve);
    for (int i = 0; i < 3000; ++i) {
      ASSERT_TRUE(index.Add("https://g.example/" + std::to_string(i)));
      if (i % 101 == 0) {
        for (int j = 0; j <= i; j += 17) {
          ASSERT_EQ(index.Find("https://g.example/" + std::to_string(j)),
                    sched::PageId(j))
              << reserve << " " << i << " " << j;
        }
        EXPECT_FALSE(index.Find("https://g.example/x").has_value());
      }
    }
  }
}

}  // namespace
}  // namespace freshd::daemon

namespace freshd::daemon {
namespace {

// Remove: backward-shift deletion keeps every other id reachable, with
// keys narrowed to 34 bits, so that every key's home is one of 4 slots (the
// home is the key's high 32 bits scaled) while the keys stay distinct: long
// probe runs that wrap around the table. A URL removed and added again
// gets a new id.
TEST(UrlIndexTest, RemovedIdsAreForgottenAndTheRestStayReachable) {
  UrlIndex index;
  index.TEST_set_key_bits(34);
  std::vector<std::string> urls;
  for (int i = 0; i < 500; ++i) {
    urls.push_back("http://h.test/" + std::to_string(i));
    ASSERT_TRUE(index.Add(urls.back()));
  }
  std::vector<bool> removed(urls.size(), false);
  for (size_t i = 0; i < urls.size(); i += 3) {
    index.Remove(static_cast<sched::PageId>(i));
    removed[i] = true;
  }
  index.Remove(0);       // twice: nothing
  index.Remove(100000);  // unknown: nothing
  for (size_t i = 0; i < urls.size(); ++i) {
    if (removed[i]) {
      EXPECT_FALSE(index.Find(urls[i]).has_value()) << i;
      EXPECT_EQ(index.url(static_cast<sched::PageId>(i)), urls[i]);
    } else {
      EXPECT_EQ(index.Find(urls[i]), static_cast<sched::PageId>(i)) << i;
    }
  }
  // Back as a new id; growing the table keeps the removed ones out.
  ASSERT_TRUE(index.Add(urls[3]));
  EXPECT_EQ(index.Find(urls[3]), static_cast<sched::PageId>(urls.size()));
  for (int i = 0; i < 2000; ++i) {
    ASSERT_TRUE(index.Add("http://g.test/" + std::to_string(i)));
  }
  EXPECT_FALSE(index.Find(urls[6]).has_value());
  EXPECT_EQ(index.Find(urls[3]), static_cast<sched::PageId>(urls.size()));
  EXPECT_EQ(index.Find(urls[4]), 4u);
}

// Every home slot 0 (32-bit keys): one run holds every id; removals in
// its middle keep the rest reachable.
TEST(UrlIndexTest, RemovalInsideOneLongProbeRun) {
  UrlIndex index;
  index.TEST_set_key_bits(32);
  std::vector<std::string> urls;
  for (int i = 0; i < 200; ++i) urls.push_back("u" + std::to_string(i));
  index.Assign(urls);
  for (size_t i = 0; i < urls.size(); i += 2) {
    index.Remove(static_cast<sched::PageId>(i));
  }
  for (size_t i = 0; i < urls.size(); ++i) {
    const auto found = index.Find(urls[i]);
    if (i % 2 == 0) {
      EXPECT_FALSE(found.has_value()) << i;
    } else {
      EXPECT_EQ(found, static_cast<sched::PageId>(i)) << i;
    }
  }
}

}  // namespace
}  // namespace freshd::daemon
