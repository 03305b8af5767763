// The cluster change feed's publish throughput (cluster/change_publisher.h):
// a real nats-server with JetStream on 127.0.0.1 (the tests' launcher,
// tests/cluster/nats_process.h, no GoogleTest; its store in a temp dir); one
// ChangePublisher, connected first; then N events of ~`--bytes` B JSON are
// queued with Publish() and the clock runs until the stream's state holds all N
// (js_GetStreamInfo, polled every 5 ms). Reports events/s (wall) and the
// publisher's stats. Run: build/bench/change_publish_bench [--events N]
// [--bytes B] [--runs R]

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include "cluster/change_publisher.h"
#include "cluster/nats_conn.h"
#include "tests/cluster/nats_process.h"

namespace freshd::cluster {
namespace {

struct Args {
  uint64_t events = 20000;
  size_t bytes = 400;
  int runs = 1;
};

std::string EventJson(uint64_t seq, size_t bytes) {
  std::string j = "{\"node\":\"bench\",\"seq\":" + std::to_string(seq) +
                  ",\"kind\":\"changed\",\"url\":\"http://bench.test/p/" +
                  std::to_string(seq) + "\",\"pad\":\"";
  if (j.size() + 2 < bytes) j.append(bytes - j.size() - 2, 'x');
  return j + "\"}";
}

// The stream's message count; -1 on error.
int64_t StreamMsgs(jsCtx* js) {
  jsStreamInfo* si = nullptr;
  if (js_GetStreamInfo(&si, js, kChangeStream, nullptr, nullptr) != NATS_OK) {
    return -1;
  }
  const int64_t n = static_cast<int64_t>(si->State.Msgs);
  jsStreamInfo_Destroy(si);
  return n;
}

int RunOnce(const Args& a, int run) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      ("change_publish_bench_" + std::to_string(getpid()) + "_" +
       std::to_string(run));
  std::filesystem::remove_all(dir);
  testing::NatsProcess server(dir);
  if (!server.ok()) {
    std::fprintf(stderr, "bench: %s\n", server.error().c_str());
    return 1;
  }

  ChangePublisherOptions o;
  o.nats_url = server.url();
  o.node = "bench";
  auto p = ChangePublisher::Create(o);
  if (!p.ok()) {
    std::fprintf(stderr, "%s\n", p.status().ToString().c_str());
    return 1;
  }
  (*p)->Start();
  natsConnection* nc = nullptr;
  jsCtx* js = nullptr;
  if (ConnectNats(server.url(), "bench reader", &nc) != NATS_OK ||
      natsConnection_JetStream(&js, nc, nullptr) != NATS_OK) {
    std::fprintf(stderr, "bench: no connection\n");
    return 1;
  }
  // Connected and the stream created: the clock measures publishing only.
  for (int i = 0; i < 2000 && (!(*p)->stats().connected || StreamMsgs(js) < 0);
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::vector<std::string> jsons;
  jsons.reserve(a.events);
  for (uint64_t s = 1; s <= a.events; ++s)
    jsons.push_back(EventJson(s, a.bytes));

  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t s = 1; s <= a.events; ++s)
    (*p)->Publish(s, std::move(jsons[s - 1]));
  const auto queued = std::chrono::steady_clock::now();
  int64_t msgs = 0;
  const auto bound = t0 + std::chrono::seconds(600);
  while ((msgs = StreamMsgs(js)) < static_cast<int64_t>(a.events) &&
         std::chrono::steady_clock::now() < bound) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const auto t1 = std::chrono::steady_clock::now();
  const double wall = std::chrono::duration<double>(t1 - t0).count();
  const double queue_s = std::chrono::duration<double>(queued - t0).count();
  const ChangePublisherStats st = (*p)->stats();
  std::printf(
      "run %d: events %llu bytes %zu stored %lld in %.3f s (queueing %.3f s): "
      "%.0f events/s; published %llu skipped %llu failures %llu\n",
      run, static_cast<unsigned long long>(a.events), a.bytes,
      static_cast<long long>(msgs), wall, queue_s,
      static_cast<double>(msgs) / wall,
      static_cast<unsigned long long>(st.published),
      static_cast<unsigned long long>(st.skipped),
      static_cast<unsigned long long>(st.failures));
  (*p)->Stop();
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
  return msgs == static_cast<int64_t>(a.events) ? 0 : 1;
}

}  // namespace
}  // namespace freshd::cluster

int main(int argc, char** argv) {
  freshd::cluster::Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const long long v = std::atoll(argv[i + 1]);
    if (v <= 0) {
      std::fprintf(stderr, "bad value for %s\n", k.c_str());
      return 2;
    }
    if (k == "--events") {
      a.events = static_cast<uint64_t>(v);
    } else if (k == "--bytes") {
      a.bytes = static_cast<size_t>(v);
    } else if (k == "--runs") {
      a.runs = static_cast<int>(v);
    } else {
      std::fprintf(stderr,
                   "usage: change_publish_bench [--events N] [--bytes B] "
                   "[--runs R]\n");
      return 2;
    }
  }
  int rc = 0;
  for (int r = 1; r <= a.runs; ++r) rc |= freshd::cluster::RunOnce(a, r);
  return rc;
}
