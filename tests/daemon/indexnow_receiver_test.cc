// IndexNowReceiver alone (no network, no loop): scope before any fetch,
// the key check and its cache, the per-host queue and limit, counters.
// The fetch hook keeps the key-file requests for the test to answer.

#include "daemon/indexnow_receiver.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "parse/indexnow_request.h"

namespace freshd::daemon {
namespace {

class IndexNowReceiverTest : public ::testing::Test {
 protected:
  IndexNowReceiver& Receiver(IndexNowReceiver::Options options = {}) {
    IndexNowReceiver::Hooks h;
    h.in_scope = [](const std::string& url) {
      return url.starts_with("https://a.test/");
    };
    h.fetch = [this](std::string url,
                     std::function<void(fetch::FetchResult)> done) {
      fetches_.push_back({std::move(url), std::move(done)});
    };
    h.signal = [this](std::vector<std::string> urls) {
      signaled_.insert(signaled_.end(), urls.begin(), urls.end());
    };
    h.now = [this] { return now_; };
    receiver_ = std::make_unique<IndexNowReceiver>(options, std::move(h));
    return *receiver_;
  }

  static parse::IndexNowRequest Ping(std::vector<std::string> urls,
                                     const std::string& key = "abcd1234") {
    return {"a.test", key, "", std::move(urls)};
  }

  // Answers the oldest key-file fetch with `body` (200) or a 404.
  void Answer(const std::string& body, int status = 200) {
    ASSERT_FALSE(fetches_.empty());
    fetch::FetchResult r;
    r.url = fetches_.front().first;
    r.status = status;
    r.outcome = status == 200 ? fetch::OutcomeClass::kOk
                              : fetch::OutcomeClass::kHttp4xx;
    r.body = body;
    auto done = std::move(fetches_.front().second);
    fetches_.erase(fetches_.begin());
    done(std::move(r));
  }

  double now_ = 1000;
  std::vector<std::pair<std::string, std::function<void(fetch::FetchResult)>>>
      fetches_;
  std::vector<std::string> signaled_;
  std::unique_ptr<IndexNowReceiver> receiver_;
};

TEST_F(IndexNowReceiverTest, OutOfScopeIsRefusedWithNoFetch) {
  IndexNowReceiver& r = Receiver();
  parse::IndexNowRequest ping{"b.test", "abcd1234", "", {"https://b.test/x"}};
  EXPECT_EQ(r.Receive(ping).status, 403);
  EXPECT_TRUE(fetches_.empty());
  EXPECT_EQ(r.Json()["refused"]["out_of_scope"], 1);
}

TEST_F(IndexNowReceiverTest, PendingUrlsAreAcceptedOnceTheKeyIsProven) {
  IndexNowReceiver& r = Receiver();
  EXPECT_EQ(r.Receive(Ping({"https://a.test/1"})).status, 202);
  EXPECT_EQ(r.Receive(Ping({"https://a.test/2"})).status, 202);
  ASSERT_EQ(fetches_.size(), 1u);  // one check for both
  EXPECT_EQ(fetches_[0].first, "https://a.test/abcd1234.txt");
  EXPECT_EQ(r.Json()["pending"], 2);
  EXPECT_TRUE(signaled_.empty());
  Answer("  abcd1234\r\n");
  EXPECT_EQ(signaled_,
            (std::vector<std::string>{"https://a.test/1", "https://a.test/2"}));
  EXPECT_EQ(r.Json()["pending"], 0);
  auto reply = r.Receive(Ping({"https://a.test/3"}));
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(signaled_.back(), "https://a.test/3");
  EXPECT_TRUE(fetches_.empty());
  EXPECT_EQ(r.Json()["accepted"], 3);
}

TEST_F(IndexNowReceiverTest, WrongOrMissingKeyDropsAndRefusesUntilExpiry) {
  IndexNowReceiver::Options o;
  o.key_cache_s = 60;
  IndexNowReceiver& r = Receiver(o);
  EXPECT_EQ(r.Receive(Ping({"https://a.test/1"})).status, 202);
  Answer("some other key");
  EXPECT_TRUE(signaled_.empty());
  EXPECT_EQ(r.Json()["dropped"], 1);
  EXPECT_EQ(r.Receive(Ping({"https://a.test/1"})).status, 403);
  EXPECT_TRUE(fetches_.empty());  // the verdict is cached
  now_ += 61;                     // ... for key_cache only
  EXPECT_EQ(r.Receive(Ping({"https://a.test/1"})).status, 202);
  Answer("", 404);
  EXPECT_EQ(r.Receive(Ping({"https://a.test/1"})).status, 403);
  EXPECT_TRUE(signaled_.empty());
}

TEST_F(IndexNowReceiverTest, TheHostsQueueIsBounded) {
  IndexNowReceiver::Options o;
  o.max_pending_per_host = 3;
  IndexNowReceiver& r = Receiver(o);
  EXPECT_EQ(r.Receive(Ping({"https://a.test/1", "https://a.test/2"})).status,
            202);
  EXPECT_EQ(r.Receive(Ping({"https://a.test/3", "https://a.test/4"})).status,
            429);
  EXPECT_EQ(r.Json()["refused"]["pending_full"], 1);
  // Key checks per host are bounded too: new keys past the cap wait.
  for (size_t i = 1; i < kMaxKeyChecksPerHost; ++i) {
    EXPECT_EQ(r.Receive(Ping({"https://a.test/k"},
                             "key-" + std::to_string(10000 + i)))
                  .status,
              i < 2 ? 202 : 429)
        << i;  // the queue holds 3 URLs
  }
}

TEST_F(IndexNowReceiverTest, VerifiedHostsHaveTheirOwnLimit) {
  IndexNowReceiver::Options o;
  o.host_requests_per_minute = 3;
  IndexNowReceiver& r = Receiver(o);
  EXPECT_EQ(r.Receive(Ping({"https://a.test/0"})).status, 202);
  Answer("abcd1234");
  int ok = 0, limited = 0;
  for (int i = 0; i < 6; ++i) {
    int s = r.Receive(Ping({"https://a.test/" + std::to_string(i)})).status;
    ok += s == 200;
    limited += s == 429;
  }
  EXPECT_EQ(ok, 3);
  EXPECT_EQ(limited, 3);
  now_ += 20;  // a third of a minute: one more
  EXPECT_EQ(r.Receive(Ping({"https://a.test/x"})).status, 200);
  EXPECT_EQ(r.Receive(Ping({"https://a.test/y"})).status, 429);
  EXPECT_EQ(r.Json()["refused"]["host_rate"], 4);
}

TEST_F(IndexNowReceiverTest, OnlyInScopeUrlsOfAPingAreTaken) {
  IndexNowReceiver& r = Receiver();
  parse::IndexNowRequest ping{
      "a.test", "abcd1234", "", {"https://a.test/in", "http://a.test/out"}};
  auto reply = r.Receive(ping);
  EXPECT_EQ(reply.status, 202);
  EXPECT_EQ(reply.body["ignored"], 1);
  Answer("abcd1234");
  EXPECT_EQ(signaled_, std::vector<std::string>{"https://a.test/in"});
}

}  // namespace
}  // namespace freshd::daemon
