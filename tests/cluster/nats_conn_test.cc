// cluster/nats_conn: streams made by several nodes at once, against a real
// nats-server. The server of Debian 12 (2.9.10) lists a stream before its
// store exists, and a message get in that window crashes it; EnsureStream
// returns only once the stream answers.

#include "cluster/nats_conn.h"

#include <gtest/gtest.h>
#include <nats/nats.h>
#include <signal.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "tests/cluster/nats_server.h"

namespace freshd::cluster {
namespace {

class NatsConnTest : public testing::NatsServerTest {
 protected:
  NatsConnTest() : NatsServerTest("nats_conn") {}
};

// One client connection with a JetStream context.
struct Client {
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  natsStatus status = NATS_OK;
  explicit Client(const std::string& url) {
    status = ConnectNats(url, "nats_conn_test", &nc);
    if (status == NATS_OK) {
      status = natsConnection_JetStream(&js, nc, nullptr);
    }
  }
  ~Client() {
    if (js != nullptr) jsCtx_Destroy(js);
    if (nc != nullptr) natsConnection_Destroy(nc);
  }
};

TEST(ReadyProbeSubjectTest, ReplacesEachWildcardToken) {
  EXPECT_EQ(ReadyProbeSubject("freshd.changes.>"),
            "freshd.changes._freshd_ready");
  EXPECT_EQ(ReadyProbeSubject("a.*.b"), "a._freshd_ready.b");
  EXPECT_EQ(ReadyProbeSubject("plain"), "plain");
}

TEST_F(NatsConnTest, TheReadyProbeStoresNothing) {
  Client c(nats_->url());
  ASSERT_EQ(c.status, NATS_OK);
  const char* subjects[] = {"probe.>"};
  jsStreamConfig cfg;
  jsStreamConfig_Init(&cfg);
  cfg.Name = "probe";
  cfg.Subjects = subjects;
  cfg.SubjectsLen = 1;
  cfg.Storage = js_FileStorage;
  ASSERT_EQ(EnsureStream(c.js, &cfg), NATS_OK);
  ASSERT_EQ(EnsureStream(c.js, &cfg), NATS_OK);  // bound as it is
  jsStreamInfo* si = nullptr;
  ASSERT_EQ(js_GetStreamInfo(&si, c.js, "probe", nullptr, nullptr), NATS_OK);
  EXPECT_EQ(si->State.Msgs, 0u);
  jsStreamInfo_Destroy(si);
  // No stream on the subject: no answer, reported after the wait.
  EXPECT_NE(WaitStreamReady(c.js, "nowhere.x"), NATS_OK);
}

// Eight nodes make and read each of 15 new streams at once; every read finds
// the stream empty and the server stays up. Without the wait for readiness
// the server crashed in about one round of seven with two nodes.
TEST_F(NatsConnTest, NodesMakingAStreamAtOnceNeverReadItHalfMade) {
  constexpr int kNodes = 8;
  constexpr int kRounds = 15;
  std::vector<std::unique_ptr<Client>> clients;
  for (int i = 0; i < kNodes; ++i) {
    clients.push_back(std::make_unique<Client>(nats_->url()));
    ASSERT_EQ(clients.back()->status, NATS_OK);
  }
  for (int round = 0; round < kRounds; ++round) {
    const std::string name = "race" + std::to_string(round);
    const std::string subjects = name + ".>";
    std::atomic<int> ready{0}, found_empty{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (int i = 0; i < kNodes; ++i) {
      threads.emplace_back([&, i] {
        const char* list[] = {subjects.c_str()};
        jsStreamConfig cfg;
        jsStreamConfig_Init(&cfg);
        cfg.Name = name.c_str();
        cfg.Subjects = list;
        cfg.SubjectsLen = 1;
        cfg.Storage = js_FileStorage;
        while (!go) std::this_thread::yield();
        if (EnsureStream(clients[i]->js, &cfg) != NATS_OK) return;
        ++ready;
        natsMsg* msg = nullptr;
        const std::string subject = name + ".node" + std::to_string(i);
        natsStatus s = js_GetLastMsg(&msg, clients[i]->js, name.c_str(),
                                     subject.c_str(), nullptr, nullptr);
        if (msg != nullptr) natsMsg_Destroy(msg);
        if (s == NATS_NOT_FOUND) ++found_empty;
      });
    }
    go = true;
    for (auto& t : threads) t.join();
    ASSERT_EQ(ready, kNodes) << "round " << round;
    ASSERT_EQ(found_empty, kNodes) << "round " << round;
    ASSERT_EQ(kill(nats_->pid(), 0), 0) << "the server died in round " << round;
  }
}

}  // namespace
}  // namespace freshd::cluster
