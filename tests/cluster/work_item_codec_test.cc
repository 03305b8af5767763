// The work item's wire form (cluster/work_router.h EncodeWork/DecodeWork)
// across versions: the signal source (WorkItem::source, "s") is written
// only when set, so an item without one is byte for byte what a node
// before the field wrote, and such an item decodes as before (no source:
// the kind's own); an item with one differs from the older form only by
// "s", which an older node, reading only "k", "u" and "v", ignores.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "cluster/work_router.h"

namespace freshd::cluster {
namespace {

using Kind = WorkItem::Kind;

WorkItem Decoded(const std::string& wire) {
  WorkItem item;
  item.source = "left over";  // DecodeWork must clear it
  EXPECT_TRUE(DecodeWork(wire, &item)) << wire;
  return item;
}

TEST(WorkItemCodecTest, EveryKindRoundTripsWithAndWithoutASource) {
  const double inf = std::numeric_limits<double>::infinity();
  for (const WorkItem& in :
       {WorkItem{Kind::kLink, "http://h.test/a", 0.5, ""},
        WorkItem{Kind::kSeed, "http://h.test/", 2, ""},
        WorkItem{Kind::kSitemap, "http://h.test/s", 1e9, "websub"},
        WorkItem{Kind::kSitemap, "http://h.test/t", 0, ""},
        WorkItem{Kind::kSignal, "http://h.test/x", -inf, "indexnow"},
        WorkItem{Kind::kSignal, "http://h.test/y", 123, ""}}) {
    const WorkItem out = Decoded(EncodeWork(in));
    EXPECT_EQ(out.kind, in.kind) << in.url;
    EXPECT_EQ(out.url, in.url);
    EXPECT_EQ(out.value, in.value) << in.url;
    EXPECT_EQ(out.source, in.source) << in.url;
  }
}

// An older node's items (no "s") decode as before: no source, and the
// kind's default value when "v" is missing.
TEST(WorkItemCodecTest, AnOlderNodesItemDecodesWithoutASource) {
  WorkItem signal = Decoded(R"({"k":"signal","u":"http://h.test/x"})");
  EXPECT_EQ(signal.kind, Kind::kSignal);
  EXPECT_TRUE(std::isinf(signal.value) && signal.value < 0);
  EXPECT_EQ(signal.source, "");
  WorkItem sitemap =
      Decoded(R"({"k":"sitemap","u":"http://h.test/s","v":1700000000})");
  EXPECT_EQ(sitemap.kind, Kind::kSitemap);
  EXPECT_EQ(sitemap.value, 1700000000);
  EXPECT_EQ(sitemap.source, "");
  // And without a source, this version writes exactly that form.
  EXPECT_EQ(EncodeWork({Kind::kSignal, "http://h.test/x",
                        -std::numeric_limits<double>::infinity(), ""}),
            R"({"k":"signal","u":"http://h.test/x"})");
}

// A newer item read by an older node: the same "k", "u" and "v" as the
// item without a source, plus "s" only.
TEST(WorkItemCodecTest, ASourceAddsOnlyItsOwnField) {
  const WorkItem plain{Kind::kSignal, "http://h.test/x", 1700000000, ""};
  WorkItem labelled = plain;
  labelled.source = "indexnow";
  nlohmann::json with = nlohmann::json::parse(EncodeWork(labelled));
  const nlohmann::json without = nlohmann::json::parse(EncodeWork(plain));
  EXPECT_EQ(with["s"], "indexnow");
  with.erase("s");
  EXPECT_EQ(with, without);
}

// An "s" that is not a short string is not read; the item still is.
TEST(WorkItemCodecTest, AMalformedSourceIsIgnored) {
  EXPECT_EQ(Decoded(R"({"k":"signal","u":"http://h.test/x","s":7})").source,
            "");
  const std::string long_name(kMaxSourceBytes + 1, 'x');
  EXPECT_EQ(Decoded(R"({"k":"signal","u":"http://h.test/x","s":")" + long_name +
                    "\"}")
                .source,
            "");
  EXPECT_EQ(
      Decoded(R"({"k":"sitemap","u":"http://h.test/x","s":"feed"})").source,
      "feed");
  WorkItem item;
  EXPECT_FALSE(
      DecodeWork(R"({"k":"bogus","u":"http://h.test/x","s":"feed"})", &item));
}

}  // namespace
}  // namespace freshd::cluster
