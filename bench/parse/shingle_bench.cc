// Benchmark: tokenize + shingle + sketch (parse/shingle.h FingerprintText,
// k = 4, m = 64) over the visible text of a real corpus (default: the
// python3-doc HTML, extracted once with ExtractHtml, not timed). Reports
// CPU-seconds (CLOCK_PROCESS_CPUTIME_ID) and MB of text per CPU-second,
// medians of --runs runs, plus the sketch-only divergence throughput.
//
//   build-html/bench/shingle_bench [--runs 5] [DIR]

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/sketch.h"
#include "bench/parse/corpus.h"
#include "parse/html_extract.h"
#include "parse/shingle.h"

int main(int argc, char** argv) {
  using freshd::bench::CpuSeconds;
  using freshd::bench::Median;
  int runs = 5;
  std::string dir = freshd::bench::kDefaultCorpus;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else {
      dir = argv[i];
    }
  }
  std::vector<std::string> texts;
  double mb = 0;
  for (const auto& p : freshd::bench::LoadCorpus(dir)) {
    auto page = freshd::parse::ExtractHtml(p.body, "text/html", "");
    if (!page.ok()) continue;
    mb += page->text.size() / 1e6;
    texts.push_back(std::move(page->text));
  }
  if (texts.empty()) {
    std::fprintf(stderr, "no *.html files under %s\n", dir.c_str());
    return 2;
  }
  std::printf("corpus: %s, %zu texts, %.1f MB of visible text\n", dir.c_str(),
              texts.size(), mb);
  const uint64_t seed = 0x5eed5eed;
  std::vector<double> secs, div_secs;
  std::vector<freshd::BottomSketch> sketches(texts.size());
  size_t tokens = 0, shingles = 0;
  for (int r = 0; r < runs; ++r) {
    tokens = shingles = 0;
    double t0 = CpuSeconds();
    for (size_t i = 0; i < texts.size(); ++i) {
      auto fp = freshd::parse::FingerprintText(texts[i], 4, 64, seed);
      tokens += fp.token_count;
      shingles += fp.shingle_count;
      sketches[i] = std::move(fp.sketch);
    }
    double t1 = CpuSeconds();
    double sum = 0;
    for (int rep = 0; rep < 100; ++rep)
      for (size_t i = 0; i + 1 < sketches.size(); ++i)
        sum += freshd::SketchDivergence(sketches[i], sketches[i + 1]);
    double t2 = CpuSeconds();
    secs.push_back(t1 - t0);
    div_secs.push_back((t2 - t1) / (100.0 * (sketches.size() - 1)));
    std::printf("run %d: %.3f CPU-s, %.1f MB/CPU-s (checksum %.3f)\n", r + 1,
                t1 - t0, mb / (t1 - t0), sum);
  }
  double s = Median(secs);
  std::printf(
      "\nmedian of %d runs: tokenize+shingle+sketch %.3f CPU-s = "
      "%.1f MB of text per CPU-second (%.1f M tokens/s); %zu tokens, "
      "%zu shingles per run\n",
      runs, s, mb / s, tokens / s / 1e6, tokens, shingles);
  std::printf("SketchDivergence (m = 64): %.0f ns per pair (median)\n",
              Median(div_secs) * 1e9);
  std::printf("rerun: build-html/bench/shingle_bench --runs %d %s\n", runs,
              dir.c_str());
  return 0;
}
