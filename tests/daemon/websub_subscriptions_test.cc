// WebSubSubscriptions alone (no network, no loop): its hooks are the seams,
// the clock is the test's. Verification of intent, denial, deliveries and
// their signatures (every §8 method, computed here with OpenSSL), renewal
// timing and the lease-storm bound, back-off, the total bound, forgetting,
// restore and what is stored.

#include "daemon/websub_subscriptions.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "parse/url.h"

namespace freshd::daemon {
namespace {

std::string Hmac(const EVP_MD* md, const std::string& key,
                 const std::string& body) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(md, key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(body.data()), body.size(), mac,
       &len);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(kHex[mac[i] >> 4]);
    out.push_back(kHex[mac[i] & 15]);
  }
  return out;
}

struct Request {
  std::string url;
  std::string mode, topic, callback, lease, secret;
  std::function<void(fetch::FetchResult)> done;
};

class WebSubSubscriptionsTest : public ::testing::Test {
 protected:
  std::unique_ptr<WebSubSubscriptions> Make(
      WebSubSubscriptions::Options o = {}) {
    if (o.public_url.empty()) o.public_url = "https://crawler.example/";
    WebSubSubscriptions::Hooks h;
    h.post = [this](std::string url, std::string form,
                    std::function<void(fetch::FetchResult)> done) {
      Request r;
      r.url = url;
      r.mode = parse::FormValue(form, "hub.mode").value_or("");
      r.topic = parse::FormValue(form, "hub.topic").value_or("");
      r.callback = parse::FormValue(form, "hub.callback").value_or("");
      r.lease = parse::FormValue(form, "hub.lease_seconds").value_or("");
      r.secret = parse::FormValue(form, "hub.secret").value_or("");
      r.done = std::move(done);
      requests_.push_back(std::move(r));
    };
    h.set_pushed = [this](const std::string& feed, bool pushed) {
      pushed_[feed] = pushed;
    };
    h.deliver = [this](const std::string& feed, std::string body) {
      delivered_.emplace_back(feed, std::move(body));
    };
    h.commit = [this] { ++commits_; };
    h.now = [this] { return now_; };
    h.elsewhere = [this](const std::string& feed) {
      return elsewhere_.count(feed) != 0;
    };
    return std::make_unique<WebSubSubscriptions>(o, std::move(h));
  }
  // The hub's answer to the last request.
  void Answer(int status) {
    fetch::FetchResult r;
    r.status = status;
    r.outcome = status >= 200 && status < 300 ? fetch::OutcomeClass::kOk
                                              : fetch::OutcomeClass::kHttp5xx;
    auto done = std::move(requests_.back().done);
    done(r);
  }
  static std::string IdOf(const Request& r) {
    return r.callback.substr(r.callback.rfind('/') + 1);
  }
  static std::string Query(const std::string& mode, const std::string& topic,
                           const std::string& challenge,
                           const std::string& lease = "") {
    std::string q = "hub.mode=" + mode + "&hub.topic=" + topic;
    if (!challenge.empty()) q += "&hub.challenge=" + challenge;
    if (!lease.empty()) q += "&hub.lease_seconds=" + lease;
    return q;
  }
  // Discovers `feed` (hub H) and verifies it with `lease` seconds.
  std::string Subscribe(WebSubSubscriptions& w, const std::string& feed,
                        const std::string& lease = "1000") {
    w.Discovered(feed, "", {"https://hub.example/"});
    EXPECT_FALSE(requests_.empty());
    const std::string id = IdOf(requests_.back());
    Answer(202);
    auto reply = w.Verify(id, Query("subscribe", feed, "c", lease));
    EXPECT_EQ(reply.status, 200);
    return id;
  }

  double now_ = 1'000'000;
  std::vector<Request> requests_;
  std::map<std::string, bool> pushed_;
  std::vector<std::pair<std::string, std::string>> delivered_;
  int commits_ = 0;
  std::set<std::string> elsewhere_;  // feeds whose host another node owns
};

TEST_F(WebSubSubscriptionsTest, SubscribeRequestCarriesTheProtocolFields) {
  auto w = Make();
  w->Discovered("https://s.example/feed", "https://s.example/self",
                {"https://hub.example/h", "https://other.example/"});
  ASSERT_EQ(requests_.size(), 1u);
  const Request& r = requests_[0];
  EXPECT_EQ(r.url, "https://hub.example/h");  // the first hub named
  EXPECT_EQ(r.mode, "subscribe");
  EXPECT_EQ(r.topic, "https://s.example/self");  // the self URL
  EXPECT_EQ(r.lease, "864000");
  EXPECT_EQ(r.callback.rfind("https://crawler.example/websub/", 0), 0u)
      << r.callback;
  const std::string id = IdOf(r);
  EXPECT_TRUE(WebSubSubscriptions::WellFormedId(id)) << id;
  EXPECT_EQ(r.secret.size(), 64u);  // 32 random bytes, hex
  // Another feed gets another id and secret (random, not derived).
  w->Discovered("https://s.example/feed2", "", {"https://hub.example/h"});
  ASSERT_EQ(requests_.size(), 2u);
  EXPECT_NE(IdOf(requests_[1]), id);
  EXPECT_NE(requests_[1].secret, requests_[0].secret);  // (r moved: realloc)
  EXPECT_EQ(requests_[1].topic, "https://s.example/feed2");  // no self
  // The same feed again: nothing new.
  w->Discovered("https://s.example/feed", "", {"https://hub.example/h"});
  EXPECT_EQ(requests_.size(), 2u);
  EXPECT_EQ(w->Json()["pending"], 2);
  EXPECT_GT(commits_, 0);
}

TEST_F(WebSubSubscriptionsTest, VerificationEchoesOnlyWhatIsAwaited) {
  auto w = Make();
  const std::string feed = "https://s.example/feed";
  w->Discovered(feed, "", {"https://hub.example/"});
  const std::string id = IdOf(requests_.back());
  Answer(202);
  // Unknown id, wrong topic, wrong mode, no challenge: 404.
  EXPECT_EQ(
      w->Verify(std::string(32, 'a'), Query("subscribe", feed, "x")).status,
      404);
  EXPECT_EQ(w->Verify(id, Query("subscribe", "https://evil/", "x")).status,
            404);
  EXPECT_EQ(w->Verify(id, Query("unsubscribe", feed, "x")).status, 404);
  EXPECT_EQ(w->Verify(id, Query("subscribe", feed, "")).status, 404);
  EXPECT_EQ(pushed_.count(feed), 0u);
  auto ok = w->Verify(id, Query("subscribe", feed, "chal-123", "3600"));
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body, "chal-123");
  EXPECT_TRUE(pushed_[feed]);
  nlohmann::json j = w->Json();
  EXPECT_EQ(j["active"], 1) << j.dump();
  EXPECT_EQ(j["verifications_total"], 1) << j.dump();
  EXPECT_EQ(j["unknown_callbacks_total"], 1) << j.dump();
}

TEST_F(WebSubSubscriptionsTest, DeliveriesNeedTheSignatureOfTheSecret) {
  auto w = Make();
  const std::string feed = "https://s.example/feed";
  w->Discovered(feed, "", {"https://hub.example/"});
  const std::string id = IdOf(requests_.back());
  const std::string secret = requests_.back().secret;
  Answer(202);
  ASSERT_EQ(w->Verify(id, Query("subscribe", feed, "c", "100")).status, 200);
  const std::string body = "<feed>new</feed>";
  int accepted = 0;
  for (auto [name, md] : std::vector<std::pair<std::string, const EVP_MD*>>{
           {"sha1", EVP_sha1()},
           {"sha256", EVP_sha256()},
           {"sha384", EVP_sha384()},
           {"sha512", EVP_sha512()},
           {"SHA256", EVP_sha256()}}) {
    auto r = w->Deliver(id, name + "=" + Hmac(md, secret, body), body);
    EXPECT_EQ(r.status, 202) << name;
    ++accepted;
  }
  ASSERT_EQ(delivered_.size(), 5u);
  EXPECT_EQ(delivered_[0].first, feed);
  EXPECT_EQ(delivered_[0].second, body);
  // Wrong: another secret, another body, a cut or bad hex, an unknown
  // method, none at all. Each answered 202, ignored and counted.
  const std::string good = Hmac(EVP_sha256(), secret, body);
  for (const std::string& sig :
       {"sha256=" + Hmac(EVP_sha256(), "not the secret", body),
        "sha256=" + Hmac(EVP_sha256(), secret, body + " "),
        "sha256=" + good.substr(2), "sha256=zz" + good.substr(2), "md5=" + good,
        std::string("sha256"), std::string()}) {
    EXPECT_EQ(w->Deliver(id, sig, body).status, 202) << sig;
  }
  EXPECT_EQ(delivered_.size(), 5u);
  nlohmann::json j = w->Json();
  EXPECT_EQ(j["deliveries_accepted_total"], accepted) << j.dump();
  EXPECT_EQ(j["signature_failures_total"], 7) << j.dump();
  // An unknown callback: 410 Gone.
  EXPECT_EQ(w->Deliver(std::string(32, 'b'), "sha256=" + good, body).status,
            410);
}

TEST_F(WebSubSubscriptionsTest, RenewsAt85PercentAndBoundsALeaseStorm) {
  WebSubSubscriptions::Options o;
  o.min_renew_interval_s = 60;
  auto w = Make(o);
  const std::string feed = "https://s.example/feed";
  Subscribe(*w, feed, "1000");
  ASSERT_EQ(requests_.size(), 1u);
  now_ += 849;
  w->Tick();
  EXPECT_EQ(requests_.size(), 1u);  // not yet: 85% of 1000 s
  now_ += 2;
  w->Tick();
  ASSERT_EQ(requests_.size(), 2u);  // the renewal
  EXPECT_EQ(requests_.back().mode, "subscribe");
  EXPECT_EQ(IdOf(requests_.back()), IdOf(requests_[0]));  // same callback
  Answer(202);
  EXPECT_EQ(
      w->Verify(IdOf(requests_[0]), Query("subscribe", feed, "c", "1")).status,
      200);
  EXPECT_EQ(w->Json()["renewals_total"], 1);
  // The hub grants 1 s leases from now on: an hour of ticks every 100 ms
  // makes at most one request a minute.
  const size_t before = requests_.size();
  for (int i = 0; i < 36000; ++i) {
    now_ += 0.1;
    w->Tick();
    if (requests_.size() > before && requests_.back().done) {
      Answer(202);
      w->Verify(IdOf(requests_[0]), Query("subscribe", feed, "c", "1"));
    }
  }
  const size_t storm = requests_.size() - before;
  EXPECT_GE(storm, 55u);
  EXPECT_LE(storm, 61u);
  // The lease is shorter than the renewal bound: mostly not pushed.
  EXPECT_FALSE(pushed_[feed]);
}

TEST_F(WebSubSubscriptionsTest, FailuresBackOffAndDenialWaits) {
  WebSubSubscriptions::Options o;
  o.retry_base_s = 60;
  o.retry_max_s = 1000;
  o.min_renew_interval_s = 1;
  o.denied_retry_s = 5000;
  auto w = Make(o);
  const std::string feed = "https://s.example/feed";
  w->Discovered(feed, "", {"https://hub.example/"});
  std::vector<double> sent = {now_};
  Answer(500);
  EXPECT_EQ(w->Json()["failed"], 1);
  for (int i = 0; i < 40000 && sent.size() < 7; ++i) {
    now_ += 1;
    const size_t n = requests_.size();
    w->Tick();
    if (requests_.size() > n) {
      sent.push_back(now_);
      Answer(503);
    }
  }
  ASSERT_EQ(sent.size(), 7u);
  // 60, 120, 240, 480, 960, then capped at 1000.
  EXPECT_NEAR(sent[1] - sent[0], 60, 1.5);
  EXPECT_NEAR(sent[2] - sent[1], 120, 1.5);
  EXPECT_NEAR(sent[3] - sent[2], 240, 1.5);
  EXPECT_NEAR(sent[4] - sent[3], 480, 1.5);
  EXPECT_NEAR(sent[5] - sent[4], 960, 1.5);
  EXPECT_NEAR(sent[6] - sent[5], 1000, 1.5);
  EXPECT_EQ(w->Json()["request_failures_total"], 7);
  // Accepted, then denied (§5.2): 200, no retry before denied_retry.
  now_ += 2000;
  w->Tick();
  const std::string id = IdOf(requests_.back());
  Answer(202);
  EXPECT_EQ(
      w->Verify(id, "hub.mode=denied&hub.topic=" + feed + "&hub.reason=no")
          .status,
      200);
  EXPECT_EQ(w->Json()["denied"], 1);
  EXPECT_EQ(w->Json()["denied_total"], 1);
  const size_t n = requests_.size();
  now_ += 4990;
  w->Tick();
  EXPECT_EQ(requests_.size(), n);
  now_ += 20;
  w->Tick();
  EXPECT_EQ(requests_.size(), n + 1);
  // A hub that accepts but never verifies: a failure after the timeout.
  Answer(202);
  now_ += o.verify_timeout_s + 1;
  w->Tick();
  EXPECT_EQ(w->Json()["failed"], 1);
}

// Cluster: a feed whose host another node owns is not subscribed, and a
// subscription whose host moves away is unsubscribed at the next Tick
// (same callback, no secret), its callback then gone (410); a node that
// does not know (the hook says false) keeps its subscription.
TEST_F(WebSubSubscriptionsTest, AFeedOwnedElsewhereIsLetGo) {
  auto w = Make();
  elsewhere_.insert("https://other.example/feed");
  w->Discovered("https://other.example/feed", "", {"https://hub.example/"});
  EXPECT_TRUE(requests_.empty());
  EXPECT_EQ(w->Json()["subscriptions"], 0);

  const std::string feed = "https://s.example/feed";
  const std::string id = Subscribe(*w, feed);
  EXPECT_TRUE(pushed_[feed]);
  now_ += 10;
  w->Tick();  // still ours: nothing sent
  EXPECT_EQ(requests_.size(), 1u);

  elsewhere_.insert(feed);  // the shard moved
  w->Tick();
  ASSERT_EQ(requests_.size(), 2u);
  EXPECT_EQ(requests_[1].mode, "unsubscribe");
  EXPECT_EQ(requests_[1].callback, requests_[0].callback);
  EXPECT_EQ(requests_[1].secret, "");
  EXPECT_FALSE(pushed_[feed]);  // polled at the normal rate meanwhile
  Answer(202);
  EXPECT_EQ(w->Deliver(id, "sha256=00", "x").status, 202);  // ignored
  EXPECT_TRUE(delivered_.empty());
  EXPECT_EQ(w->Verify(id, Query("unsubscribe", feed, "u")).status, 200);
  EXPECT_EQ(w->Json()["subscriptions"], 0);
  EXPECT_EQ(w->Deliver(id, "sha256=00", "x").status, 410);
  w->Tick();
  EXPECT_EQ(requests_.size(), 2u);  // once
}

TEST_F(WebSubSubscriptionsTest, TotalIsBoundedAndForgetUnsubscribes) {
  WebSubSubscriptions::Options o;
  o.max_subscriptions = 2;
  auto w = Make(o);
  const std::string a = Subscribe(*w, "https://a.example/feed");
  Subscribe(*w, "https://b.example/feed");
  w->Discovered("https://c.example/feed", "", {"https://hub.example/"});
  EXPECT_EQ(requests_.size(), 2u);
  EXPECT_EQ(w->Json()["refused_full_total"], 1);
  // a's feed forgotten: unsubscribe; verified: gone, no longer pushed.
  w->Forget("https://a.example/feed");
  ASSERT_EQ(requests_.size(), 3u);
  EXPECT_EQ(requests_.back().mode, "unsubscribe");
  EXPECT_EQ(IdOf(requests_.back()), a);
  EXPECT_FALSE(pushed_["https://a.example/feed"]);
  Answer(202);
  // A delivery meanwhile is dropped (acknowledged).
  EXPECT_EQ(w->Deliver(a, "", "x").status, 202);
  EXPECT_EQ(
      w->Verify(a, Query("subscribe", "https://a.example/feed", "c")).status,
      404);
  auto r = w->Verify(a, Query("unsubscribe", "https://a.example/feed", "u"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "u");
  EXPECT_EQ(w->Json()["subscriptions"], 1);
  // Room again.
  w->Discovered("https://c.example/feed", "", {"https://hub.example/"});
  EXPECT_EQ(requests_.size(), 4u);
  EXPECT_TRUE(delivered_.empty());
}

TEST_F(WebSubSubscriptionsTest, StoredRecordsRestoreWhatWasActive) {
  std::vector<store::SubscriptionRecord> stored;
  std::string id;
  {
    auto w = Make();
    id = Subscribe(*w, "https://a.example/feed", "1000");
    w->Discovered("https://b.example/feed", "", {"https://hub.example/"});
    store::StoreBatch batch;
    w->TakeBatch(&batch);
    EXPECT_EQ(batch.operations(), 2u);
    EXPECT_FALSE(w->marked());
  }
  // Read back as the store would: encode, decode.
  auto w1 = Make();
  {
    store::SubscriptionRecord r;
    r.id = id;
    r.feed_url = "https://a.example/feed";
    r.topic = r.feed_url;
    r.hub = "https://hub.example/";
    r.secret = std::string(64, 'f');
    r.state = static_cast<uint8_t>(WebSubSubscriptions::State::kActive);
    r.lease_end_unix = now_ + 500;
    r.next_action_unix = now_ + 400;
    store::SubscriptionRecord back;
    back.id = id;
    ASSERT_TRUE(
        store::DecodeSubscriptionValue(store::EncodeSubscriptionValue(r), &back)
            .ok());
    stored.push_back(back);
    store::SubscriptionRecord junk = back;
    junk.id = "not-an-id";
    stored.push_back(junk);
  }
  pushed_.clear();
  EXPECT_EQ(w1->Restore(stored), 1u);
  EXPECT_TRUE(pushed_["https://a.example/feed"]);
  EXPECT_EQ(w1->Json()["active"], 1);
  EXPECT_TRUE(w1->marked());  // the junk record is deleted
  // The same callback still takes the hub's deliveries.
  const std::string body = "<rss/>";
  EXPECT_EQ(
      w1->Deliver(id,
                  "sha256=" + Hmac(EVP_sha256(), std::string(64, 'f'), body),
                  body)
          .status,
      202);
  EXPECT_EQ(delivered_.size(), 1u);
  // Off without a public URL: nothing restored, nothing subscribed.
  WebSubSubscriptions::Options off;
  off.public_url = "";
  WebSubSubscriptions::Hooks h;
  h.now = [this] { return now_; };
  WebSubSubscriptions none(off, h);
  EXPECT_EQ(none.Restore(stored), 0u);
  none.Discovered("https://x.example/feed", "", {"https://hub.example/"});
  EXPECT_EQ(none.Json()["subscriptions"], 0);
}

}  // namespace
}  // namespace freshd::daemon
