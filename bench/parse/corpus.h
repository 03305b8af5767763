// Helpers shared by the parse benchmarks: loading an HTML corpus (every
// *.html under a directory, default the python3-doc HTML of Debian 12),
// per-process CPU time, and medians.

#ifndef FRESHD_BENCH_PARSE_CORPUS_H_
#define FRESHD_BENCH_PARSE_CORPUS_H_

#include <time.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace freshd::bench {

inline constexpr const char* kDefaultCorpus = "/usr/share/doc/python3/html";

struct Page {
  std::string path;
  std::string body;
};

// Every regular *.html file under `dir`, sorted by path (deterministic).
inline std::vector<Page> LoadCorpus(const std::string& dir) {
  std::vector<Page> pages;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(
           dir, std::filesystem::directory_options::follow_directory_symlink,
           ec);
       !ec && it != std::filesystem::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".html") continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    pages.push_back({it->path().string(), ss.str()});
  }
  std::sort(pages.begin(), pages.end(),
            [](const Page& a, const Page& b) { return a.path < b.path; });
  return pages;
}

// CPU seconds used by this process so far (all threads).
inline double CpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  if (n == 0) return 0;
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace freshd::bench

#endif  // FRESHD_BENCH_PARSE_CORPUS_H_
