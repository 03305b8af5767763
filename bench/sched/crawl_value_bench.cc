// Benchmark of the crawl-value functions on the selector's hot path
// (sched/crawl_value.h): mean nanoseconds per call of GreedyValue, AgeValue,
// CisValue and NcisValue (exact, APPROX-1, APPROX-2) over 4096 pages drawn as
// in docs/MATH.md Paper 2 (d): μ ~ U(0,1), α ~ Beta(.5,.5), ν ~ U(0,.5), signal
// count n ~ Poisson((αΔ+ν)τ). Two workloads:
//   typical: Δ ~ U(0.05, 1), τ ~ U(0, 3/(Δ+ν)) — pages crawled every few change
//   intervals; tail:    Δ ~ U(0.001, 1), τ ~ U(0, 4/Δ) — includes
//   long-neglected, rarely changing
//            pages with (Δ+ν)τ in the hundreds, where the L and G sums have
//            many terms;
//   stale:   a store's pages after the daemon was away for two months
//            (the 10M-page restart of issue 29): Δ log-uniform over
//            [1/60, 10] a day, ν log-uniform over [0.01, 10] a day, τ ~
//            U(60, 90) days, n = 0 for half the pages (no signal since) and
//            Poisson((αΔ+ν)τ) for the rest: (Δ+ν)τ up to ~1,800.
// Prints the median over 7 runs of the mean per call. Rerun:
//   build-<you>/bench/crawl_value_bench

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "sched/crawl_value.h"

namespace {

using freshd::sched::PageParams;

struct Input {
  PageParams p;
  double tau;
  int n;
};

template <typename F>
double MedianNsPerCall(const std::vector<Input>& in, const F& f, double* sink,
                       int passes) {
  constexpr int kRuns = 7;
  const int kPasses = passes;
  std::vector<double> ns;
  for (int run = 0; run < kRuns; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    double acc = 0;
    for (int pass = 0; pass < kPasses; ++pass)
      for (const Input& x : in) acc += f(x);
    const auto t1 = std::chrono::steady_clock::now();
    *sink += acc;
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                 (static_cast<double>(kPasses) * in.size()));
  }
  std::sort(ns.begin(), ns.end());
  return ns[kRuns / 2];
}

enum class Workload { kTypical, kTail, kStale };

std::vector<Input> MakeStaleInputs() {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0, 1);
  std::gamma_distribution<double> g(0.5, 1);
  auto log_uniform = [&](double lo, double hi) {
    return lo * std::pow(hi / lo, u(rng));
  };
  std::vector<Input> in;
  for (int i = 0; i < 4096; ++i) {
    const double x = g(rng), y = g(rng);
    PageParams p{log_uniform(1.0 / 60, 10), u(rng), x / (x + y),
                 log_uniform(0.01, 10)};
    const double tau = 60 + 30 * u(rng);
    std::poisson_distribution<int> signals((p.alpha * p.delta + p.nu) * tau);
    in.push_back({p, tau, i % 2 == 0 ? 0 : std::min(signals(rng), 65535)});
  }
  return in;
}

std::vector<Input> MakeInputs(Workload workload) {
  if (workload == Workload::kStale) return MakeStaleInputs();
  const bool tail = workload == Workload::kTail;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> u(0, 1), nu(0, 0.5);
  std::gamma_distribution<double> g(0.5, 1);
  std::vector<Input> in;
  for (int i = 0; i < 4096; ++i) {
    const double x = g(rng), y = g(rng);
    const double delta = tail ? std::max(u(rng), 1e-3) : 0.05 + 0.95 * u(rng);
    PageParams p{delta, u(rng), x / (x + y), nu(rng)};
    const double tau =
        tail ? u(rng) * 4 / p.delta : u(rng) * 3 / (p.delta + p.nu);
    std::poisson_distribution<int> signals((p.alpha * p.delta + p.nu) * tau);
    in.push_back({p, tau, signals(rng)});
  }
  return in;
}

// Per-page cost of exact NcisValue: for each input the minimum over 3
// repetitions of 10 calls (filters out preemption on a shared machine); prints
// p50, p90, max and the mean.
void PerPageNcis(const std::vector<Input>& in, double* sink) {
  std::vector<double> ns;
  for (const Input& x : in) {
    double best = 1e300;
    for (int rep = 0; rep < 3; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int k = 0; k < 10; ++k)
        *sink += freshd::sched::NcisValue(x.p, x.tau, x.n);
      const auto t1 = std::chrono::steady_clock::now();
      best = std::min(
          best, std::chrono::duration<double, std::nano>(t1 - t0).count() / 10);
    }
    ns.push_back(best);
  }
  std::sort(ns.begin(), ns.end());
  double mean = 0;
  for (double v : ns) mean += v / ns.size();
  std::printf(
      "  NcisValue exact per page (min of 3x10 calls): p50 %.0f  p90 %.0f  max "
      "%.0f  "
      "mean %.0f ns\n",
      ns[ns.size() / 2], ns[ns.size() * 9 / 10], ns.back(), mean);
}

void Run(const char* workload, const std::vector<Input>& in, int passes) {
  double sink = 0;
  struct Row {
    const char* name;
    double ns;
  };
  const Row rows[] = {
      {"GreedyValue", MedianNsPerCall(
                          in,
                          [](const Input& x) {
                            return freshd::sched::GreedyValue(x.p.delta, x.p.mu,
                                                              x.tau);
                          },
                          &sink, passes)},
      {"AgeValue", MedianNsPerCall(
                       in,
                       [](const Input& x) {
                         return freshd::sched::AgeValue(x.p.delta, x.p.mu,
                                                        x.tau);
                       },
                       &sink, passes)},
      {"CisValue", MedianNsPerCall(
                       in,
                       [](const Input& x) {
                         return freshd::sched::CisValue(x.p, x.tau, x.n);
                       },
                       &sink, passes)},
      {"NcisValue exact", MedianNsPerCall(
                              in,
                              [](const Input& x) {
                                return freshd::sched::NcisValue(x.p, x.tau,
                                                                x.n);
                              },
                              &sink, passes)},
      {"NcisValue APPROX-1", MedianNsPerCall(
                                 in,
                                 [](const Input& x) {
                                   return freshd::sched::NcisValue(x.p, x.tau,
                                                                   x.n, 1);
                                 },
                                 &sink, passes)},
      {"NcisValue APPROX-2", MedianNsPerCall(
                                 in,
                                 [](const Input& x) {
                                   return freshd::sched::NcisValue(x.p, x.tau,
                                                                   x.n, 2);
                                 },
                                 &sink, passes)},
  };
  std::printf("workload %s: 4096 pages x %d passes, median of 7 runs\n",
              workload, passes);
  for (const Row& r : rows)
    std::printf("  %-20s %8.1f ns/call\n", r.name, r.ns);
  PerPageNcis(in, &sink);
  std::printf("  (checksum %.6g)\n", sink);
}

}  // namespace

int main() {
  Run("typical", MakeInputs(Workload::kTypical), 100);
  Run("tail", MakeInputs(Workload::kTail), 100);
  Run("stale", MakeInputs(Workload::kStale), 2);
  std::printf("rerun: build-<you>/bench/crawl_value_bench\n");
  return 0;
}
