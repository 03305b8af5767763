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
// Usage: curl_hosts_bench [N [C [MAXCONNECTS [MODE]]]]; MODE bits: 1
// CURLOPT_FORBID_REUSE, 2 no DNS cache, 4 a 2 s DNS cache.
// Rerun: build/bench/curl_hosts_bench 30000 64 64 0   (nginx on 18090)

#include <curl/curl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

size_t Discard(char*, size_t size, size_t n, void*) { return size * n; }

struct Flags {
  int total = 30000;
  int concurrent = 64;
  long max_connects = 64;
  int mode = 0;
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

int main(int argc, char** argv) {
  Flags f;
  if (argc > 1) f.total = std::atoi(argv[1]);
  if (argc > 2) f.concurrent = std::atoi(argv[2]);
  if (argc > 3) f.max_connects = std::atol(argv[3]);
  if (argc > 4) f.mode = std::atoi(argv[4]);
  if (f.total < 1 || f.total > 254 * 65536 || f.concurrent < 1) {
    std::fprintf(stderr, "usage: %s [N [C [MAXCONNECTS [MODE]]]]\n", argv[0]);
    return 2;
  }
  curl_global_init(CURL_GLOBAL_ALL);
  CURLM* multi = curl_multi_init();
  curl_multi_setopt(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS,
                    static_cast<long>(f.concurrent));
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, f.max_connects);
  int started = 0, done = 0, failed = 0, running = 0, reported = 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto last = t0;
  while (done < f.total) {
    while (started < f.total && started - done < f.concurrent) {
      curl_multi_add_handle(multi, NewTransfer(f, started++));
    }
    curl_multi_perform(multi, &running);
    int queued = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &queued)) {
      if (msg->msg != CURLMSG_DONE) continue;
      failed += msg->data.result != CURLE_OK;
      curl_multi_remove_handle(multi, msg->easy_handle);
      curl_easy_cleanup(msg->easy_handle);
      ++done;
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
    curl_multi_poll(multi, nullptr, 0, 100, nullptr);
  }
  std::printf(
      "%d transfers (%d failed) in %.1f s\n", f.total, failed,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count());
  curl_multi_cleanup(multi);
  curl_global_cleanup();
  return 0;
}
