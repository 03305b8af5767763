// libcurl alone (no freshd code) fetching one page from each of N distinct
// hosts, at most C transfers at once on one multi handle, as a crawler of
// many hosts does: prints transfers per second for each 5,000 completed, so
// a cost that grows with the hosts contacted so far shows as a falling rate.
// The hosts are loopback addresses 127.a.b.c:PORT served by one catch-all
// server (nginx `listen PORT default_server`, bench/scale/README.md).
//
// Found with it (session 27, curl 7.88.1 of Debian 12, 64 at once, 30,000
// hosts): 8,687 -> 378 transfers/s; perf: most of the time in one libcurl
// loop over its connection cache's hash (at 0x193d0 in libcurl.so.4.8.0),
// whose size grows with the hosts seen. The same loop held freshd's network
// thread on the 10M-page store (BENCHMARKS.md, session 27).
//
// Usage: curl_hosts_bench [N [C [MAXCONNECTS [MODE [RECYCLE]]]]]; MODE bits:
// 1 CURLOPT_FORBID_REUSE, 2 no DNS cache, 4 a 2 s DNS cache, 8 no
// CURLMOPT_MAX_TOTAL_CONNECTIONS (C is kept by the bench alone). RECYCLE > 0:
// a new multi handle takes the transfers after each RECYCLE hosts, the old
// one finishes its own and is cleaned up.
// Rerun: build/bench/curl_hosts_bench 30000 64 64 0   (nginx on 18090)

#include <curl/curl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

size_t Discard(char*, size_t size, size_t n, void*) { return size * n; }

struct Flags {
  int total = 30000;
  int concurrent = 64;
  long max_connects = 64;
  int mode = 0;
  int recycle_hosts = 0;  // 0: one multi handle for the whole run
  int port = 18090;
};

CURL* NewTransfer(const Flags& f, int i) {
  CURL* e = curl_easy_init();
  char url[128];
  std::snprintf(url, sizeof url, "http://127.%d.%d.%d:%d/p", 1 + i / 65536,
                (i / 256) % 256, i % 256, f.port);
  curl_easy_setopt(e, CURLOPT_URL, url);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Discard);
  if (f.mode & 1) curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
  if (f.mode & 2) curl_easy_setopt(e, CURLOPT_DNS_CACHE_TIMEOUT, 0L);
  if (f.mode & 4) curl_easy_setopt(e, CURLOPT_DNS_CACHE_TIMEOUT, 2L);
  return e;
}

}  // namespace

CURLM* NewMulti(const Flags& f) {
  CURLM* multi = curl_multi_init();
  if (!(f.mode & 8)) {
    curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS,
                      static_cast<long>(f.concurrent));
  }
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, f.max_connects);
  return multi;
}

int main(int argc, char** argv) {
  Flags f;
  if (argc > 1) f.total = std::atoi(argv[1]);
  if (argc > 2) f.concurrent = std::atoi(argv[2]);
  if (argc > 3) f.max_connects = std::atol(argv[3]);
  if (argc > 4) f.mode = std::atoi(argv[4]);
  if (argc > 5) f.recycle_hosts = std::atoi(argv[5]);
  if (f.total < 1 || f.total > 254 * 65536 || f.concurrent < 1 ||
      f.recycle_hosts < 0) {
    std::fprintf(stderr, "usage: %s [N [C [MAXCONNECTS [MODE [RECYCLE]]]]]\n",
                 argv[0]);
    return 2;
  }
  curl_global_init(CURL_GLOBAL_ALL);
  // The newest multi handle takes new transfers; older ones (with
  // RECYCLE > 0, one is retired after RECYCLE hosts) only finish theirs.
  std::vector<CURLM*> multis = {NewMulti(f)};
  std::vector<int> live = {0};
  int on_newest = 0, max_multis = 1;
  int started = 0, done = 0, failed = 0, running = 0, reported = 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto last = t0;
  while (done < f.total) {
    const int done_before = done;
    while (started < f.total && started - done < f.concurrent) {
      if (f.recycle_hosts > 0 && on_newest >= f.recycle_hosts) {
        multis.push_back(NewMulti(f));
        live.push_back(0);
        on_newest = 0;
      }
      CURL* e = NewTransfer(f, started++);
      curl_easy_setopt(e, CURLOPT_PRIVATE,
                       reinterpret_cast<void*>(multis.size() - 1));
      curl_multi_add_handle(multis.back(), e);
      ++live.back();
      ++on_newest;
    }
    for (size_t m = 0; m < multis.size(); ++m) {
      curl_multi_perform(multis[m], &running);
      int queued = 0;
      while (CURLMsg* msg = curl_multi_info_read(multis[m], &queued)) {
        if (msg->msg != CURLMSG_DONE) continue;
        failed += msg->data.result != CURLE_OK;
        curl_multi_remove_handle(multis[m], msg->easy_handle);
        curl_easy_cleanup(msg->easy_handle);
        --live[m];
        ++done;
      }
    }
    for (size_t m = 0; m + 1 < multis.size();) {  // retire drained ones
      if (live[m] == 0) {
        curl_multi_cleanup(multis[m]);
        multis.erase(multis.begin() + m);
        live.erase(live.begin() + m);
      } else {
        ++m;
      }
    }
    if (static_cast<int>(multis.size()) > max_multis) {
      max_multis = static_cast<int>(multis.size());
    }
    if (done - reported >= 5000) {
      const auto now = std::chrono::steady_clock::now();
      std::printf("%7d done: %6.0f transfers/s\n", done,
                  (done - reported) /
                      std::chrono::duration<double>(now - last).count());
      std::fflush(stdout);
      reported = done;
      last = now;
    }
    // Sleep only when nothing finished: a finished transfer frees a slot the
    // next turn fills at once.
    if (done == done_before) {
      curl_multi_poll(multis.back(), nullptr, 0, multis.size() > 1 ? 1 : 100,
                      nullptr);
    }
  }
  std::printf(
      "%d transfers (%d failed) in %.1f s, at most %d multi handles at once\n",
      f.total, failed,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count(),
      max_multis);
  for (CURLM* m : multis) curl_multi_cleanup(m);
  curl_global_cleanup();
  return 0;
}
