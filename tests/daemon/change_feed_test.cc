// daemon/change_feed.h: one event's JSON line as GET /changes serves it, and
// the cluster change stream's line (the node's name first, then the same
// fields), both from one object.

#include "daemon/change_feed.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace freshd::daemon {
namespace {

store::FeedEvent SampleEvent() {
  store::FeedEvent e;
  e.seq = 42;
  e.url = "http://a.test/p?q=\"x\"";
  e.time = 1483619690;
  e.kind = "changed";
  e.status = 200;
  e.staleness = 0.25;
  e.text_hash = 0xabc;
  e.warc_file = "freshd-1.warc.gz";
  e.warc_offset = 1234;
  return e;
}

TEST(ChangeFeedJsonTest, EventLineCarriesEveryField) {
  const nlohmann::json j = nlohmann::json::parse(FeedEventJson(SampleEvent()));
  EXPECT_EQ(j["seq"], 42);
  EXPECT_EQ(j["url"], "http://a.test/p?q=\"x\"");
  EXPECT_EQ(j["time"], "2017-01-05T12:34:50Z");
  EXPECT_EQ(j["kind"], "changed");
  EXPECT_EQ(j["staleness"], 0.25);
  EXPECT_EQ(j["text_hash"], "0000000000000abc");
  EXPECT_EQ(j["warc"]["offset"], 1234);
  store::FeedEvent no_warc = SampleEvent();
  no_warc.warc_file.clear();
  no_warc.staleness = -1;  // unknown
  const nlohmann::json k = nlohmann::json::parse(FeedEventJson(no_warc));
  EXPECT_TRUE(k["warc"].is_null());
  EXPECT_TRUE(k["staleness"].is_null());
}

TEST(ChangeFeedJsonTest, ClusterLineIsTheEventWithTheNodeFirst) {
  const store::FeedEvent e = SampleEvent();
  const std::string line = ClusterEventJson("node-a", e);
  // Byte for byte what the stream carried before it was built as JSON.
  EXPECT_EQ(line, "{\"node\":\"node-a\"," + FeedEventJson(e).substr(1));
  nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["node"], "node-a");
  j.erase("node");
  EXPECT_EQ(j, nlohmann::json::parse(FeedEventJson(e)));
}

}  // namespace
}  // namespace freshd::daemon
