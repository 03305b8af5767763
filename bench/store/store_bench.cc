// store_bench: PageStore write throughput and on-disk size at scale.
//
// Per run, in a fresh temporary directory: (1) load N page records, one
// StoreBatch (page + host record) per observation as the daemon commits
// them; (2) U random updates of existing pages, same batching; (3) M
// "seen this URL?" probes for URLs not in the store; then a full compaction
// and the directory size / N. Records are realistic: ~70-byte URL, 100 bytes
// of scheduler state, ETag, Last-Modified, and a 64-entry sketch (512 bytes,
// its own key G as the writer puts it).
// Sync policy as in production: sync_interval 1 s of wall time. Prints each
// run and the medians, plus the command to rerun.
//
// Usage: store_bench [--pages N] [--updates U] [--probes M] [--runs R]
//                    [--dir PARENT]

#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "store/page_store.h"

namespace {

using freshd::StoreConfig;
using freshd::store::HostRecord;
using freshd::store::PageRecord;
using freshd::store::PageStore;
using freshd::store::StoreBatch;

uint64_t Mix(uint64_t x) {  // splitmix64: stands in for parse::UrlKey
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::string Url(uint64_t i) {
  return "https://www.site" + std::to_string(i % 5000) +
         ".example.com/articles/2026/11/" + std::to_string(Mix(i) % 1000000) +
         "/page-" + std::to_string(i) + ".html";
}

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = rng();
    std::memcpy(s.data() + i, &v, std::min<size_t>(8, n - i));
  }
  return s;
}

PageRecord MakePage(uint64_t i, uint64_t version, std::mt19937_64& rng) {
  PageRecord p;
  p.url = Url(i);
  p.url_key = Mix(i ^ 0x5555);
  // Scheduler state: a few doubles and counters (random bits: incompressible
  // like real estimator state) padded with small varint-like bytes.
  p.sched_state = RandomBytes(rng, 64) + std::string(36, '\x01');
  p.etag = "\"" + std::to_string(Mix(i + version) % 100000000) + "-gz\"";
  p.last_modified = "Sat, 21 Nov 2026 17:02:27 GMT";
  p.last_status = 200;
  p.last_outcome = "ok";
  p.last_fetch_time = 1763744547.0 + static_cast<double>(version);
  p.content_hash = rng();
  return p;
}

double Now() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// CPU seconds of the whole process (all threads, incl. LevelDB compaction).
double CpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

uint64_t DirBytes(const std::string& dir) {
  uint64_t total = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_regular_file()) total += e.file_size();
  return total;
}

struct RunResult {
  double load_per_s, update_per_s, probe_per_s, bytes_per_page,
      bytes_per_page_before_compaction, update_cpu_us, probe_compacted_per_s;
};

bool Check(const freshd::Status& s, const char* what) {
  if (s.ok()) return true;
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  return false;
}

bool RunOnce(const std::string& parent, uint64_t pages, uint64_t updates,
             uint64_t probes, uint64_t seed, RunResult* out) {
  std::string tmpl = parent + "/freshd-store-bench-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    std::perror("mkdtemp");
    return false;
  }
  StoreConfig config;
  config.path = tmpl + "/db";
  auto opened = PageStore::Open(config);
  if (!opened.ok()) return Check(opened.status(), "open");
  PageStore& store = **opened;
  std::mt19937_64 rng(seed);
  HostRecord host;
  // The fetcher's robots cache and gate state (daemon/fetch_state.h).
  host.fetch_state = std::string(300, 'r');
  host.pooled_estimates = RandomBytes(rng, 48);

  auto observe = [&](uint64_t i, uint64_t version) {
    StoreBatch batch;
    host.host = "www.site" + std::to_string(i % 5000) + ".example.com:443";
    host.fetch_state.replace(0, 8, std::to_string(10000000 + version % 1000));
    const PageRecord page = MakePage(i, version, rng);
    // A changed page's sketch, 64 x uint64 min-hashes, in its own key.
    const std::string sketch = RandomBytes(rng, 512);
    return Check(batch.PutPage(page), "put") &&
           Check(batch.PutSketch(page.url_key, page.url, sketch), "sketch") &&
           Check(batch.PutHost(host), "put host") &&
           Check(store.Commit(batch, Now()), "commit");
  };

  auto t0 = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < pages; ++i)
    if (!observe(i, 0)) return false;
  auto t1 = std::chrono::steady_clock::now();
  const double cpu1 = CpuSeconds();
  std::uniform_int_distribution<uint64_t> pick(0, pages - 1);
  for (uint64_t u = 0; u < updates; ++u)
    if (!observe(pick(rng), u + 1)) return false;
  auto t2 = std::chrono::steady_clock::now();
  out->update_cpu_us =
      updates ? (CpuSeconds() - cpu1) * 1e6 / static_cast<double>(updates) : 0;
  uint64_t hits = 0;
  for (uint64_t m = 0; m < probes; ++m) {
    uint64_t i = pages + m;  // never inserted
    auto has = store.ContainsPage(Mix(i ^ 0x5555), Url(i));
    if (!has.ok()) return Check(has.status(), "contains");
    hits += *has;
  }
  auto t3 = std::chrono::steady_clock::now();
  if (hits != 0)
    std::fprintf(stderr, "unexpected hits: %llu\n",
                 static_cast<unsigned long long>(hits));
  if (!Check(store.MaybeSync(Now(), true), "sync")) return false;
  out->bytes_per_page_before_compaction =
      static_cast<double>(DirBytes(config.path)) / static_cast<double>(pages);
  store.CompactAll();
  auto t4 = std::chrono::steady_clock::now();
  for (uint64_t m = 0; m < probes; ++m) {
    uint64_t i = pages + m;
    auto has = store.ContainsPage(Mix(i ^ 0x5555), Url(i));
    if (!has.ok()) return Check(has.status(), "contains");
    hits += *has;
  }
  auto t5 = std::chrono::steady_clock::now();
  if (hits != 0) {
    std::fprintf(stderr, "unexpected hits: %llu\n",
                 static_cast<unsigned long long>(hits));
    return false;
  }
  if (!Check(store.Close(), "close")) return false;
  out->bytes_per_page =
      static_cast<double>(DirBytes(config.path)) / static_cast<double>(pages);
  using Sec = std::chrono::duration<double>;
  out->load_per_s = static_cast<double>(pages) / Sec(t1 - t0).count();
  out->update_per_s = static_cast<double>(updates) / Sec(t2 - t1).count();
  out->probe_per_s = static_cast<double>(probes) / Sec(t3 - t2).count();
  out->probe_compacted_per_s =
      static_cast<double>(probes) / Sec(t5 - t4).count();
  opened->reset();
  std::filesystem::remove_all(tmpl);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t pages = 1000000, updates = 200000, probes = 200000, runs = 3;
  std::string dir = "/tmp";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--pages")
      pages = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--updates")
      updates = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--probes")
      probes = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--runs")
      runs = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--dir")
      dir = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (pages == 0 || runs == 0) return 2;
  std::vector<double> load, update, probe, probe_c, bytes, bytes_raw, cpu;
  for (uint64_t r = 0; r < runs; ++r) {
    RunResult res{};
    if (!RunOnce(dir, pages, updates, probes, 1000 + r, &res)) return 1;
    std::printf(
        "run %llu: load %.0f pages/s, update %.0f updates/s (%.1f CPU "
        "us/update), miss probe %.0f/s (%.0f/s compacted), %.1f bytes/page "
        "compacted (%.1f before compaction)\n",
        static_cast<unsigned long long>(r + 1), res.load_per_s,
        res.update_per_s, res.update_cpu_us, res.probe_per_s,
        res.probe_compacted_per_s, res.bytes_per_page,
        res.bytes_per_page_before_compaction);
    std::fflush(stdout);
    load.push_back(res.load_per_s);
    update.push_back(res.update_per_s);
    probe.push_back(res.probe_per_s);
    bytes.push_back(res.bytes_per_page);
    bytes_raw.push_back(res.bytes_per_page_before_compaction);
    cpu.push_back(res.update_cpu_us);
    probe_c.push_back(res.probe_compacted_per_s);
  }
  std::printf(
      "median of %llu runs at %llu pages: load %.0f pages/s, update %.0f "
      "updates/s (%.1f CPU us/update), miss probe %.0f/s (%.0f/s "
      "compacted), %.1f bytes/page compacted (%.1f before compaction)\n",
      static_cast<unsigned long long>(runs),
      static_cast<unsigned long long>(pages), Median(load), Median(update),
      Median(cpu), Median(probe), Median(probe_c), Median(bytes),
      Median(bytes_raw));
  std::printf(
      "rerun: build/bench/store_bench --pages %llu --updates %llu --probes "
      "%llu --runs %llu --dir %s\n",
      static_cast<unsigned long long>(pages),
      static_cast<unsigned long long>(updates),
      static_cast<unsigned long long>(probes),
      static_cast<unsigned long long>(runs), dir.c_str());
  return 0;
}
