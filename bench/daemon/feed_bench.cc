// The change feed's cost per fetch on the writer thread
// (daemon/store_writer.h): the same stream of fetches (page record ~400 B, an 8
// KiB body archived as WARC request + response) is written with the feed off
// and on, in group commits of `--group` fetches, and the writer's thread CPU
// and the store's bytes on disk are compared. With the feed on, a fraction
// `--changed` of the fetches are new/changed pages: an event and the page's
// sketch (m = 64; the point read of its previous sketch is the page book's,
// on the scheduler's thread, not measured here); the rest are plain
// unchanged fetches (no event). Run: build/bench/feed_bench [--fetches N]
// [--group G]
// [--changed F] [--pages P].

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/sketch.h"
#include "daemon/store_writer.h"
#include "parse/url.h"
#include "store/page_store.h"
#include "store/warc_writer.h"

namespace freshd {
namespace {

struct Args {
  int fetches = 20000;
  int group = 50;
  double changed = 0.3;
  int pages = 5000;
};

uint64_t DirBytes(const std::string& dir) {
  uint64_t n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) n += e.file_size();
  }
  return n;
}

struct Measured {
  double cpu_us_per_fetch = 0;
  double wall_us_per_fetch = 0;
  uint64_t store_bytes = 0;
  uint64_t events = 0;
};

Measured RunOnce(const Args& a, bool feed, const std::string& base) {
  const std::string dir = base + (feed ? "/on" : "/off");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/warc");
  StoreConfig sc;
  sc.path = dir + "/db";
  sc.sync_interval_s = 1.0;
  auto store = store::PageStore::Open(sc);
  if (!store.ok()) std::abort();
  store::WarcWriterOptions wo;
  wo.dir = dir + "/warc";
  auto warc = store::WarcWriter::Open(wo);
  if (!warc.ok()) std::abort();
  FeedConfig fc;
  fc.enabled = feed;
  daemon::StoreWriter writer(store.value().get(), warc.value().get(), 1.0, fc);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  const std::string body(8192, 'x');
  const auto start = std::chrono::steady_clock::now();
  writer.Start();
  for (int done = 0; done < a.fetches;) {
    daemon::WriterJob job;
    for (int i = 0; i < a.group && done < a.fetches; ++i, ++done) {
      const int p = static_cast<int>(rng() % static_cast<uint64_t>(a.pages));
      store::PageRecord r;
      r.url =
          "http://h" + std::to_string(p % 50) + ".test/p/" + std::to_string(p);
      r.url_key = parse::UrlKey(r.url);
      r.sched_state = std::string(300, static_cast<char>(p));
      r.etag = "\"etag-" + std::to_string(done) + "\"";
      r.last_outcome = "ok";
      r.last_status = 200;
      r.content_hash = rng();
      if (!job.batch.PutPage(r).ok()) std::abort();
      fetch::FetchResult f;
      f.url = f.final_url = r.url;
      f.outcome = fetch::OutcomeClass::kOk;
      f.status = 200;
      f.raw_headers = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n";
      f.raw_body = body;
      f.raw_body.replace(0, 16, std::to_string(rng()));
      f.raw_request = "GET / HTTP/1.1\r\nHost: h.test\r\n\r\n";
      job.warc.push_back(daemon::WarcItem{std::move(f), 1.7e9 + done});
      if (feed && u(rng) < a.changed) {
        daemon::FeedItem item;
        item.event.url = r.url;
        item.event.time = 1.7e9 + done;
        item.event.kind = "changed";
        item.event.status = 200;
        item.event.text_hash = r.content_hash;
        item.url_key = r.url_key;
        std::vector<uint64_t> hashes(400);
        for (auto& h : hashes) h = rng();
        std::sort(hashes.begin(), hashes.end());
        // As the page book's batch carries it (daemon/page_book.h).
        if (!job.batch
                 .PutSketch(r.url_key, r.url, EncodeSketch(Sketch(hashes, 64)))
                 .ok()) {
          std::abort();
        }
        item.warc_item = static_cast<int>(job.warc.size()) - 1;
        job.feed.push_back(std::move(item));
      }
    }
    writer.Submit(std::move(job));
    while (writer.queued() > 4) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  if (!writer.Stop().ok()) std::abort();
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  Measured res;
  res.cpu_us_per_fetch = 1e6 * writer.stats().busy_s / a.fetches;
  res.wall_us_per_fetch = 1e6 * wall / a.fetches;
  res.events = writer.stats().feed_events;
  store.value()->CompactAll();
  if (!store.value()->Close().ok()) std::abort();
  res.store_bytes = DirBytes(sc.path);
  return res;
}

}  // namespace
}  // namespace freshd

int main(int argc, char** argv) {
  freshd::Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--fetches") a.fetches = std::atoi(argv[i + 1]);
    if (k == "--group") a.group = std::atoi(argv[i + 1]);
    if (k == "--changed") a.changed = std::atof(argv[i + 1]);
    if (k == "--pages") a.pages = std::atoi(argv[i + 1]);
  }
  char tmpl[] = "/tmp/freshd-feed-bench-XXXXXX";
  const std::string base = mkdtemp(tmpl);
  // Interleaved, best of 3 each: the machine may be shared.
  freshd::Measured best[2];
  for (int rep = 0; rep < 3; ++rep) {
    for (int feed = 0; feed < 2; ++feed) {
      freshd::Measured r = freshd::RunOnce(a, feed == 1, base);
      if (rep == 0 || r.cpu_us_per_fetch < best[feed].cpu_us_per_fetch) {
        best[feed] = r;
      }
    }
  }
  std::filesystem::remove_all(base);
  std::printf(
      "fetches %d, group %d, changed share %.2f, pages %d (best of 3)\n",
      a.fetches, a.group, a.changed, a.pages);
  for (int feed = 0; feed < 2; ++feed) {
    const auto& r = best[feed];
    std::printf(
        "feed %-3s  writer cpu %.2f us/fetch  wall %.2f us/fetch  events %llu  "
        "store %.2f MiB\n",
        feed ? "on" : "off", r.cpu_us_per_fetch, r.wall_us_per_fetch,
        static_cast<unsigned long long>(r.events),
        static_cast<double>(r.store_bytes) / (1 << 20));
  }
  const double events = static_cast<double>(best[1].events);
  std::printf(
      "feed cost: %+.2f us writer cpu per fetch, %+.0f store bytes per event\n",
      best[1].cpu_us_per_fetch - best[0].cpu_us_per_fetch,
      events > 0 ? (static_cast<double>(best[1].store_bytes) -
                    static_cast<double>(best[0].store_bytes)) /
                       events
                 : 0.0);
  return 0;
}
