// Tests of sched/allocation: Cho & Garcia-Molina Tables IV and V (JSON vectors,
// docs/MATH.md, and the paper's 2 decimals), Table VII under docs/MATH.md's
// stated assumptions, the age crawl value's threshold policy reproducing the
// age optimum, the Azar and NCIS continuous optima (2-page vectors, the four
// 100-page instances), and optimality against random feasible perturbations;
// the fragment-staleness optimum (churn-only pages reduce to the Azar optimum,
// mixed pages against numeric integration and perturbations).

#include "sched/allocation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "sched/crawl_value.h"
#include "sched/refresh_math.h"
#include "sched/special_functions.h"
#include "tests/sched/math_vectors.h"

namespace freshd::sched {
namespace {

using testing::LoadVectors;
using testing::Num;

std::vector<double> Vec(const nlohmann::json& j) {
  return j.get<std::vector<double>>();
}

// instance_seed<k>.csv: page,Delta,mu,alpha,nu.
std::vector<PageParams> LoadInstance(int seed) {
  std::ifstream in(std::string(FRESHD_TEST_DATA_DIR) + "/math/instance_seed" +
                   std::to_string(seed) + ".csv");
  EXPECT_TRUE(in.good());
  std::vector<PageParams> pages;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string cell;
    std::vector<double> v;
    while (std::getline(ss, cell, ',')) v.push_back(std::stod(cell));
    if (v.size() == 5) pages.push_back({v[1], v[2], v[3], v[4]});
  }
  return pages;
}

struct ChoCase {
  const char* key;
  SyncMetric metric;
  const char* objective_key;
};

TEST(AllocationTest, ChoTablesMatchJsonVectors) {
  const nlohmann::json v = LoadVectors();
  ASSERT_FALSE(v.is_discarded());
  const ChoCase cases[] = {
      {"P1.optimal_TableIV_fresh", SyncMetric::kFreshness, "weighted_F"},
      {"P1.optimal_TableIV_age", SyncMetric::kAge, "weighted_A"},
      {"P1.optimal_TableV_fresh", SyncMetric::kFreshness, "weighted_F"},
      {"P1.optimal_TableV_age", SyncMetric::kAge, "weighted_A"},
  };
  for (const ChoCase& c : cases) {
    SCOPED_TRACE(c.key);
    const auto& e = v.at(c.key).at(0);
    const std::vector<double> lams = Vec(e["inputs"]["lams"]),
                              w = Vec(e["inputs"]["w"]);
    const Result<SyncAllocation> a = OptimalSyncAllocation(
        lams, w, e["inputs"]["total"].get<double>(), c.metric);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_NEAR(a->multiplier, e["outputs"]["mu"].get<double>(), 1e-9);
    EXPECT_NEAR(a->objective, e["outputs"][c.objective_key].get<double>(),
                1e-9);
    const std::vector<double> f = Vec(e["outputs"]["f"]);
    ASSERT_EQ(a->frequencies.size(), f.size());
    double sum = 0;
    for (size_t i = 0; i < f.size(); ++i) {
      EXPECT_NEAR(a->frequencies[i], f[i], 6e-7)
          << i;  // JSON rounds f to 6 decimals
      sum += a->frequencies[i];
    }
    EXPECT_NEAR(sum, e["inputs"]["total"].get<double>(), 1e-9);
  }
}

TEST(AllocationTest, ChoTablesMatchPaperToTwoDecimals) {
  const std::vector<double> lam4 = {1, 2, 3, 4, 5};
  const auto fresh4 =
      OptimalSyncAllocation(lam4, {}, 5, SyncMetric::kFreshness);
  const auto age4 = OptimalSyncAllocation(lam4, {}, 5, SyncMetric::kAge);
  const std::vector<double> lam5 = {1, 2, 3, 1, 2, 3}, w5 = {1, 1, 1, 2, 2, 2};
  const auto fresh5 =
      OptimalSyncAllocation(lam5, w5, 6, SyncMetric::kFreshness);
  const auto age5 = OptimalSyncAllocation(lam5, w5, 6, SyncMetric::kAge);
  ASSERT_TRUE(fresh4.ok() && age4.ok() && fresh5.ok() && age5.ok());
  const double paper_fresh4[] = {1.15, 1.36, 1.35, 1.14, 0.00};
  // The paper prints 0.84 for e₁ (age); the exact optimum is 0.8349
  // (docs/MATH.md (b)).
  const double paper_age4[] = {0.83, 0.97, 1.03, 1.07, 1.09};
  const double paper_fresh5[] = {0.78, 0.76, 0.00, 1.28, 1.56, 1.62};
  const double paper_age5[] = {0.76, 0.88, 0.94, 0.99, 1.17, 1.26};
  auto round2 = [](double x) { return std::round(x * 100) / 100; };
  for (int i = 0; i < 5; ++i) {
    EXPECT_DOUBLE_EQ(round2(fresh4->frequencies[i]), paper_fresh4[i]) << i;
    EXPECT_DOUBLE_EQ(round2(age4->frequencies[i]), paper_age4[i]) << i;
  }
  EXPECT_NEAR(age4->frequencies[0], 0.8349, 5e-5);
  for (int i = 0; i < 6; ++i) {
    EXPECT_DOUBLE_EQ(round2(fresh5->frequencies[i]), paper_fresh5[i]) << i;
    EXPECT_DOUBLE_EQ(round2(age5->frequencies[i]), paper_age5[i]) << i;
  }
  // docs/MATH.md (b) multipliers and objectives to 4 decimals.
  EXPECT_NEAR(fresh4->multiplier, 0.2164, 5e-5);
  EXPECT_NEAR(fresh4->objective, 0.3739, 5e-5);
  EXPECT_NEAR(age4->multiplier, 0.3808, 5e-5);
  EXPECT_NEAR(age4->objective, 0.2503, 5e-5);
  EXPECT_NEAR(fresh5->multiplier, 0.3681, 5e-5);
  EXPECT_NEAR(fresh5->objective, 0.4824, 5e-5);
  EXPECT_NEAR(age5->multiplier, 0.4790, 5e-5);
  EXPECT_NEAR(age5->objective, 0.1958, 5e-5);
}

TEST(AllocationTest, ChoOptimumBeatsRandomFeasibleAllocations) {
  const unsigned seed = 11;
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed 11");
  const std::vector<double> lam = {0.3, 1, 2, 3, 5, 8}, w = {1, 3, 2, 1, 2, 1};
  for (SyncMetric metric : {SyncMetric::kFreshness, SyncMetric::kAge}) {
    const auto opt = OptimalSyncAllocation(lam, w, 7, metric);
    ASSERT_TRUE(opt.ok());
    std::uniform_real_distribution<double> u(-0.05, 0.05);
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<double> f = opt->frequencies;
      const int i = trial % 6, j = (trial / 6) % 6;
      if (i == j) continue;
      const double d = std::min(u(rng), f[j]);
      if (f[i] + d < 0) continue;
      f[i] += d;
      f[j] -= d;
      double obj = 0;
      for (int k = 0; k < 6; ++k) {
        obj +=
            w[k] * (metric == SyncMetric::kFreshness
                        ? TimeAveragedFreshness(SyncOrder::kFixed, lam[k], f[k])
                        : TimeAveragedAge(SyncOrder::kFixed, lam[k], f[k]));
      }
      obj /= std::accumulate(w.begin(), w.end(), 0.0);
      if (metric == SyncMetric::kFreshness) {
        EXPECT_LE(obj, opt->objective + 1e-12);
      } else {
        EXPECT_GE(obj, opt->objective - 1e-12);
      }
    }
  }
}

// Table VII with docs/MATH.md's assumptions: bucket rates 1/day, 1/week, 1/30,
// 1/120, 1/365 days; shares .23/.15/.16/.16/.30 (as 100 equal pages); mean sync
// rate 1/30 per day; fixed order.
TEST(AllocationTest, TableSevenUnderStatedAssumptions) {
  const double rates[] = {1, 1.0 / 7, 1.0 / 30, 1.0 / 120, 1.0 / 365};
  const int counts[] = {23, 15, 16, 16, 30};
  std::vector<double> lam;
  for (int b = 0; b < 5; ++b) lam.insert(lam.end(), counts[b], rates[b]);
  const double fbar = 1.0 / 30, n = lam.size();
  const double lam_bar = std::accumulate(lam.begin(), lam.end(), 0.0) / n;
  double prop_f = 0, prop_a = 0, uni_f = 0, uni_a = 0;
  for (double l : lam) {
    const double f_prop = l * fbar / lam_bar;
    prop_f += TimeAveragedFreshness(SyncOrder::kFixed, l, f_prop) / n;
    prop_a += TimeAveragedAge(SyncOrder::kFixed, l, f_prop) / n;
    uni_f += TimeAveragedFreshness(SyncOrder::kFixed, l, fbar) / n;
    uni_a += TimeAveragedAge(SyncOrder::kFixed, l, fbar) / n;
  }
  const auto opt_f =
      OptimalSyncAllocation(lam, {}, n * fbar, SyncMetric::kFreshness);
  const auto opt_a = OptimalSyncAllocation(lam, {}, n * fbar, SyncMetric::kAge);
  ASSERT_TRUE(opt_f.ok() && opt_a.ok());
  EXPECT_NEAR(prop_f, 0.1287, 5e-5);
  EXPECT_NEAR(uni_f, 0.5729, 5e-5);
  EXPECT_NEAR(opt_f->objective, 0.6162, 5e-5);
  EXPECT_NEAR(prop_a, 406.0, 0.05);
  EXPECT_NEAR(uni_a, 5.61, 0.005);
  EXPECT_NEAR(opt_a->objective, 4.30, 0.005);
  // Paper: 0.12 / 0.57 / 0.62 and 400 / 5.6 / 4.3 days; proportional freshness
  // is the known mismatch (docs/MATH.md (c)).
  EXPECT_NEAR(uni_f, 0.57, 0.005);
  EXPECT_NEAR(opt_f->objective, 0.62, 0.005);
  EXPECT_NEAR(uni_a, 5.6, 0.05);
  EXPECT_NEAR(opt_a->objective, 4.3, 0.05);
  // Optimal freshness allocation per bucket (per day). docs/MATH.md lists 0,
  // .0880, .0583, .0323, .0192, but those spend Σ s_b f_b = 0.033456 > 1/30;
  // the optimum within the budget is 0, .0876, .0581, .0322, .0192
  // (independently re-solved by bisection; same F̄ = 0.6162).
  const double want[] = {0, 0.0876, 0.0581, 0.0322, 0.0192};
  double spent = 0;
  for (double f : opt_f->frequencies) spent += f;
  EXPECT_NEAR(spent / n, fbar, 1e-12);
  for (int b = 0, i = 0; b < 5; i += counts[b], ++b) {
    EXPECT_NEAR(opt_f->frequencies[i], want[b], 5e-5) << b;
  }
}

// The threshold policy "crawl when AgeValue ≥ λ" with Σ1/τ_i = B is the age
// optimum: solve it from AgeValue alone and compare with the Cho &
// Garcia-Molina solver.
TEST(AllocationTest, AgeValueThresholdPolicyReproducesAgeOptimum) {
  struct Case {
    std::vector<double> lam, w;
    double total;
  };
  const Case cases[] = {{{1, 2, 3, 4, 5}, {1, 1, 1, 1, 1}, 5},
                        {{1, 2, 3, 1, 2, 3}, {1, 1, 1, 2, 2, 2}, 6}};
  for (const Case& c : cases) {
    auto interval = [&](size_t i, double lam_mult) {
      return FindRoot(
          [&](double t) { return AgeValue(c.lam[i], c.w[i], t) - lam_mult; },
          1e-9, 1e6);
    };
    auto sum_rates = [&](double lam_mult) {
      double s = 0;
      for (size_t i = 0; i < c.lam.size(); ++i) s += 1 / interval(i, lam_mult);
      return s - c.total;
    };
    const double lam_mult = FindRoot(sum_rates, 1e-6, 1e3);
    const auto opt =
        OptimalSyncAllocation(c.lam, c.w, c.total, SyncMetric::kAge);
    ASSERT_TRUE(opt.ok());
    EXPECT_NEAR(lam_mult, opt->multiplier, 1e-9);
    for (size_t i = 0; i < c.lam.size(); ++i)
      EXPECT_NEAR(1 / interval(i, lam_mult), opt->frequencies[i], 1e-9) << i;
  }
}

TEST(AllocationTest, AzarVectorsFromJson) {
  const nlohmann::json v = LoadVectors();
  ASSERT_FALSE(v.is_discarded());
  for (const char* key : {"P2.azar_optimum_2page", "P2.azar_optimum_TableIV"}) {
    SCOPED_TRACE(key);
    const auto& e = v.at(key).at(0);
    const auto opt = GreedyContinuousOptimum(Vec(e["inputs"]["Delta"]),
                                             Vec(e["inputs"]["mu"]),
                                             e["inputs"]["R"].get<double>());
    ASSERT_TRUE(opt.ok()) << opt.status().ToString();
    EXPECT_NEAR(opt->multiplier, e["outputs"]["lam"].get<double>(), 1e-9);
    EXPECT_NEAR(opt->accuracy, e["outputs"]["accuracy"].get<double>(), 1e-9);
    const std::vector<double> r = Vec(e["outputs"]["rates"]);
    for (size_t i = 0; i < r.size(); ++i) {
      EXPECT_NEAR(opt->rates[i], r[i], 1e-4)
          << i;  // JSON rounds to 4-6 decimals
      if (r[i] > 0) {
        EXPECT_NEAR(GreedyValue(Vec(e["inputs"]["Delta"])[i],
                                Vec(e["inputs"]["mu"])[i], opt->theta[i]),
                    opt->multiplier, 1e-9);  // KKT: V_i(θ_i) = λ
      }
    }
  }
}

TEST(AllocationTest, NcisTwoPageLagrangianFromJson) {
  const nlohmann::json v = LoadVectors();
  ASSERT_FALSE(v.is_discarded());
  const auto& e = v.at("P2.ncis_optimum_2page").at(0);
  std::vector<PageParams> pages;
  for (const auto& p : e["inputs"]["pages"])
    pages.push_back({p[0], p[1], p[2], p[3]});
  const auto opt = NcisContinuousOptimum(pages, e["inputs"]["R"].get<double>());
  ASSERT_TRUE(opt.ok()) << opt.status().ToString();
  EXPECT_NEAR(opt->multiplier, 0.9106, 5e-5);
  EXPECT_NEAR(opt->multiplier, e["outputs"]["lam"].get<double>(), 1e-8);
  EXPECT_NEAR(opt->accuracy, e["outputs"]["accuracy"].get<double>(), 1e-8);
  const std::vector<double> theta = Vec(e["outputs"]["theta"]),
                            r = Vec(e["outputs"]["rates"]);
  for (int i = 0; i < 2; ++i) {
    EXPECT_NEAR(opt->theta[i], theta[i], 1e-5) << i;
    EXPECT_NEAR(opt->rates[i], r[i], 1e-6) << i;
  }
  EXPECT_NEAR(opt->rates[0] + opt->rates[1], 0.6, 1e-12);
  EXPECT_EQ(opt->abandoned, 0);
}

// Accuracy of the threshold policies given each page's crawl rate (θ_i from
// L_i(θ_i) = 1/r_i).
double NcisAccuracyAtRates(const std::vector<PageParams>& pages,
                           const std::vector<double>& r) {
  double num = 0, den = 0;
  for (size_t i = 0; i < pages.size(); ++i) {
    den += pages[i].mu;
    if (r[i] <= 0) continue;
    auto gap = [&](double t) {
      return NcisCycleLength(pages[i], t) - 1 / r[i];
    };
    double hi = 2 / r[i];  // L(θ) ≤ θ, so θ ≥ 1/r
    while (gap(hi) < 0) hi *= 2;
    const double th = FindRoot(gap, 1 / r[i], hi);
    num += pages[i].mu * NcisFreshTime(pages[i], th) /
           NcisCycleLength(pages[i], th);
  }
  return num / den;
}

TEST(AllocationTest, NcisOptimumBeatsRandomFeasiblePerturbations) {
  const unsigned seed = 5;
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed 5");
  std::uniform_real_distribution<double> u(0, 1), nu(0, 0.5);
  std::gamma_distribution<double> g(0.5, 1);
  std::vector<PageParams> pages;
  for (int i = 0; i < 10; ++i) {
    const double x = g(rng), y = g(rng);
    pages.push_back(
        {u(rng), u(rng), x / (x + y), nu(rng)});  // α ~ Beta(.5, .5)
  }
  const auto opt = NcisContinuousOptimum(pages, 2);
  ASSERT_TRUE(opt.ok());
  EXPECT_NEAR(std::accumulate(opt->rates.begin(), opt->rates.end(), 0.0), 2,
              1e-9);
  EXPECT_NEAR(NcisAccuracyAtRates(pages, opt->rates), opt->accuracy, 1e-9);
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<double> r = opt->rates;
    const int i = trial % 10, j = (trial * 7 + 3) % 10;
    if (i == j) continue;
    const double d = std::min(0.05 * u(rng), r[j]);
    r[i] += d;
    r[j] -= d;
    EXPECT_LE(NcisAccuracyAtRates(pages, r), opt->accuracy + 1e-12) << trial;
  }
}

// docs/MATH.md Paper 2 (d): continuous optima of the four 100-page instances at
// R = 10.
TEST(AllocationTest, HundredPageInstancesMatchMathTable) {
  // Instance 4: docs/MATH.md's 0.3128 spends 9.9938 of the budget (see
  // HundredPageAzarOptimaMatchBisection); the optimum spending 10 is 0.31293.
  const double azar[] = {0.3538, 0.3842, 0.3469, 0.31293};
  const double ncis[] = {0.3771, 0.4205, 0.3750, 0.3334};
  for (int seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("instance_seed" + std::to_string(seed));
    const std::vector<PageParams> pages = LoadInstance(seed);
    ASSERT_EQ(pages.size(), 100u);
    std::vector<double> delta, mu;
    for (const PageParams& p : pages) {
      delta.push_back(p.delta);
      mu.push_back(p.mu);
    }
    const auto a = GreedyContinuousOptimum(delta, mu, 10);
    const auto n = NcisContinuousOptimum(pages, 10);
    ASSERT_TRUE(a.ok() && n.ok());
    EXPECT_NEAR(a->accuracy, azar[seed - 1], 5e-5);
    EXPECT_NEAR(n->accuracy, ncis[seed - 1], 5e-5);
    EXPECT_GT(n->accuracy, a->accuracy);  // signals help at the optimum
    if (seed == 1) {
      EXPECT_NEAR(a->multiplier, 0.9124, 5e-5);
      EXPECT_EQ(a->abandoned, 45);
      EXPECT_NEAR(n->multiplier, 0.9968, 5e-5);
      EXPECT_EQ(n->abandoned, 49);
    }
  }
}

TEST(AllocationTest, RejectsBadInput) {
  const std::vector<double> ok = {1, 2};
  EXPECT_FALSE(OptimalSyncAllocation({}, {}, 1, SyncMetric::kAge).ok());
  EXPECT_FALSE(OptimalSyncAllocation(ok, {}, 0, SyncMetric::kAge).ok());
  EXPECT_FALSE(OptimalSyncAllocation(ok, {}, NAN, SyncMetric::kAge).ok());
  EXPECT_FALSE(
      OptimalSyncAllocation(std::vector<double>{1, -2}, {}, 1, SyncMetric::kAge)
          .ok());
  EXPECT_FALSE(
      OptimalSyncAllocation(ok, std::vector<double>{1}, 1, SyncMetric::kAge)
          .ok());
  EXPECT_FALSE(OptimalSyncAllocation(ok, std::vector<double>{0, 0}, 1,
                                     SyncMetric::kFreshness)
                   .ok());
  EXPECT_FALSE(GreedyContinuousOptimum(ok, std::vector<double>{1}, 1).ok());
  EXPECT_FALSE(
      NcisContinuousOptimum(std::vector<PageParams>{{1, 1, 2, 0}}, 1).ok());
  EXPECT_FALSE(
      NcisContinuousOptimum(std::vector<PageParams>{{0, 1, .5, 0}}, 1).ok());
  const auto r =
      OptimalSyncAllocation(ok, {}, INFINITY, SyncMetric::kFreshness);
  EXPECT_EQ(r.status().code(), Status::Code::kInvalidArgument);
}

// An independent solution of the freshness KKT conditions for tests: plain
// bisection in long double, parametrized by the top page's x₁ = λ₁/f₁ (the
// page with the largest w/λ, assumed unique), so μ = m₁·γ₁(x₁) is never formed
// as 1 − (something close to 1) for that page.
std::vector<double> BisectedFreshness(const std::vector<double>& lambdas,
                                      const std::vector<double>& w,
                                      double total) {
  using LD = long double;
  const size_t n = lambdas.size();
  std::vector<LD> m(n);
  size_t top = 0;
  for (size_t i = 0; i < n; ++i) {
    m[i] = static_cast<LD>(w[i]) / lambdas[i];
    if (m[i] > m[top]) top = i;
  }
  auto gamma1 = [](LD x) { return -std::expm1(-x) - x * std::exp(-x); };
  auto bisect = [](auto f, LD lo, LD hi) {  // f increasing, root in [lo, hi]
    for (int k = 0; k < 160; ++k) {
      const LD mid = (lo + hi) / 2;
      (f(mid) < 0 ? lo : hi) = mid;
    }
    return (lo + hi) / 2;
  };
  auto freqs = [&](LD x1) {
    std::vector<LD> f(n, 0);
    const LD p1 = gamma1(x1), q1 = std::exp(std::log1p(x1) - x1);
    f[top] = lambdas[top] / x1;
    for (size_t j = 0; j < n; ++j) {
      if (j == top) continue;
      const LD q = (m[j] - m[top]) / m[j] + m[top] / m[j] * q1;
      if (q <= 0) continue;
      LD x;
      if (q >= 0.5) {
        const LD p = m[top] / m[j] * p1;
        x = bisect([&](LD y) { return gamma1(y) - p; }, 0, 3);
      } else {
        const LD l = -std::log(q);
        x = bisect([&](LD y) { return y - std::log1p(y) - l; }, l, 2 * l + 2);
      }
      f[j] = lambdas[j] / x;
    }
    return f;
  };
  auto sum = [&](LD x1) {
    LD s = 0;
    for (LD v : freqs(x1)) s += v;
    return s;
  };
  // Σf decreases in x₁: bisect ln x₁.
  const LD log_x1 = bisect(
      [&](LD y) { return static_cast<LD>(total) - sum(std::exp(y)); }, -60, 60);
  const std::vector<LD> f = freqs(std::exp(log_x1));
  return std::vector<double>(f.begin(), f.end());
}

void ExpectMatchesBisection(const std::vector<double>& lambdas,
                            const std::vector<double>& w, double total) {
  SCOPED_TRACE("total " + std::to_string(total));
  const Result<SyncAllocation> a =
      OptimalSyncAllocation(lambdas, w, total, SyncMetric::kFreshness);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const std::vector<double> want = BisectedFreshness(lambdas, w, total);
  double sum = 0;
  for (size_t i = 0; i < lambdas.size(); ++i) {
    EXPECT_NEAR(a->frequencies[i], want[i], 1e-9 * total) << i;
    sum += a->frequencies[i];
  }
  EXPECT_NEAR(sum, total, 1e-12 * total);
}

// Σf_i = total within rel_tol·total for each total (equal weights).
void ExpectSpendsEachTotal(const std::vector<double>& lambdas,
                           SyncMetric metric, const std::vector<double>& totals,
                           double rel_tol) {
  for (double total : totals) {
    const Result<SyncAllocation> a =
        OptimalSyncAllocation(lambdas, {}, total, metric);
    ASSERT_TRUE(a.ok()) << total;
    double sum = 0;
    for (double f : a->frequencies) sum += f;
    EXPECT_NEAR(sum, total, rel_tol * total) << total;
  }
}

// Issue 31 item 5: γ₁(x) = μλ/w inverted in double precision gave no f below
// ≈ λ/40, so these totals were overspent 2.5× (Σf 0.0252 and 2.55).
TEST(AllocationTest, FreshnessAllocationMeetsAnyTotal) {
  const std::vector<double> five = {1, 2, 3, 4, 5}, ones(5, 1.0);
  ExpectMatchesBisection(five, ones, 0.01);
  const std::vector<double> three = {100, 200, 300}, ones3(3, 1.0);
  ExpectMatchesBisection(three, ones3, 1);
  // Only the page of largest w/λ is crawled, at exactly the total.
  const Result<SyncAllocation> a =
      OptimalSyncAllocation(five, {}, 0.01, SyncMetric::kFreshness);
  ASSERT_TRUE(a.ok());
  EXPECT_NEAR(a->frequencies[0], 0.01, 1e-15);
  for (int i = 1; i < 5; ++i) EXPECT_EQ(a->frequencies[i], 0) << i;
  // Far below anything double-precision 1 − μλ/w could resolve, and far above.
  ExpectSpendsEachTotal(five, SyncMetric::kFreshness, {1e-12, 1e-100, 1e3, 1e9},
                        1e-12);
}

TEST(AllocationTest, FreshnessAllocationMatchesBisectionOnRandomInstance) {
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> log_rate(std::log(0.01),
                                                  std::log(100));
  std::uniform_real_distribution<double> weight(0.1, 3);
  std::vector<double> lambdas(40), w(40);
  double rate_sum = 0;
  for (size_t i = 0; i < lambdas.size(); ++i) {
    lambdas[i] = std::exp(log_rate(rng));
    w[i] = weight(rng);
    rate_sum += lambdas[i];
  }
  for (double share : {1e-7, 1e-4, 0.01, 0.3, 2.0, 50.0}) {
    ExpectMatchesBisection(lambdas, w, share * rate_sum);
  }
}

// The 100-page instances at R = 10 against the independent bisection (Azar:
// weights μ, rates Δ). Instance 4's optimum has page 62 at its threshold:
// its frequency, 0.00623534071833441 (60-digit arithmetic anchored at its
// m = w/λ, μ = m(1 − e^{−139.87})), needs 1 − μ/m ≈ 1e−61, which neither
// double nor long double μ can hold: bisection on μ leaves it at 0 and
// spends 9.9938 of the 10 (accuracy 0.31282, docs/MATH.md's 0.3128); the
// solver spends 10 and reaches 0.312933.
TEST(AllocationTest, HundredPageAzarOptimaMatchBisection) {
  for (int seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("instance_seed" + std::to_string(seed));
    std::vector<double> delta, mu;
    for (const PageParams& p : LoadInstance(seed)) {
      delta.push_back(p.delta);
      mu.push_back(p.mu);
    }
    if (seed != 4) {
      ExpectMatchesBisection(delta, mu, 10);
      continue;
    }
    const Result<SyncAllocation> a =
        OptimalSyncAllocation(delta, mu, 10, SyncMetric::kFreshness);
    ASSERT_TRUE(a.ok());
    EXPECT_NEAR(a->frequencies[62], 0.00623534071833441, 1e-13);
    EXPECT_NEAR(a->objective, 0.312932733494939, 1e-12);
    EXPECT_NEAR(
        std::accumulate(a->frequencies.begin(), a->frequencies.end(), 0.0), 10,
        1e-11);
  }
}

TEST(AllocationTest, AgeAllocationMeetsSmallAndLargeTotals) {
  ExpectSpendsEachTotal({1, 2, 3, 4, 5}, SyncMetric::kAge, {1e-9, 0.01, 1e6},
                        1e-10);
}

TEST(AllocationTest, ZeroWeightPagesGetNothingAndAlphaOneIsClamped) {
  const auto a =
      OptimalSyncAllocation(std::vector<double>{1, 2, 3},
                            std::vector<double>{1, 0, 1}, 2, SyncMetric::kAge);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->frequencies[1], 0);
  EXPECT_NEAR(a->frequencies[0] + a->frequencies[2], 2, 1e-9);
  EXPECT_TRUE(std::isfinite(a->objective));
  const auto n = NcisContinuousOptimum(
      std::vector<PageParams>{{.5, 1, 1, .2}, {.5, 1, .5, .2}}, 0.5);
  ASSERT_TRUE(n.ok());
  EXPECT_NEAR(n->rates[0] + n->rates[1], 0.5, 1e-9);
}

// A churn-only page saturating at divergence a has D(t) = a(1 − e^{−λt}), so
// its time-averaged staleness is a·(1 − F̄): minimizing Σμ·S is maximizing
// Σ(μa)·F̄, the Azar optimum with weights μ·a.
TEST(AllocationTest, ChurnOnlyStalenessOptimumIsTheWeightedAzarOptimum) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.05, 1);
  std::vector<DivergenceModel> models;
  std::vector<double> delta, mu, weight;
  double weight_sum = 0, mu_sum = 0;
  for (int i = 0; i < 30; ++i) {
    const double a = u(rng), rate = u(rng);
    models.push_back(ChurnModelAtLevel(a, rate));
    delta.push_back(rate);
    mu.push_back(u(rng));
    weight.push_back(mu.back() * a);
    weight_sum += weight.back();
    mu_sum += mu.back();
  }
  for (double total : {1.0, 4.0, 12.0}) {
    SCOPED_TRACE("total " + std::to_string(total));
    const auto s = LongevityContinuousOptimum(models, mu, total);
    const auto f = GreedyContinuousOptimum(delta, weight, total);
    ASSERT_TRUE(s.ok() && f.ok());
    EXPECT_NEAR(std::accumulate(s->rates.begin(), s->rates.end(), 0.0), total,
                1e-9 * total);
    for (size_t i = 0; i < models.size(); ++i) {
      EXPECT_NEAR(s->rates[i], f->rates[i], 1e-6 * (1 + f->rates[i])) << i;
    }
    EXPECT_EQ(s->abandoned, f->abandoned);
    // Σμ·a·(1 − F̄)/Σμ with F̄ the Azar accuracy Σ(μa)F̄/Σ(μa).
    EXPECT_NEAR(s->staleness, (weight_sum - f->accuracy * weight_sum) / mu_sum,
                1e-9);
    const auto at_azar = PeriodicStaleness(models, mu, f->rates);
    ASSERT_TRUE(at_azar.ok());
    EXPECT_NEAR(*at_azar, s->staleness, 1e-9);
  }
}

// (1/τ)∫₀^τ D by the trapezoid rule, for PeriodicStaleness to be checked
// against something other than its own closed form.
double NumericStaleness(const DivergenceModel& m, double tau) {
  const int steps = 20000;
  double sum = 0.5 * (Divergence(m, 0) + Divergence(m, tau));
  for (int k = 1; k < steps; ++k) sum += Divergence(m, tau * k / steps);
  return sum / steps;
}

// Mixed static/churn/scroll pages: the optimum spends the budget, its
// staleness is what PeriodicStaleness (checked by numeric integration) gives
// its rates, it beats the Azar optimum's rates at the same budget and every
// random feasible shift of budget between two pages.
TEST(AllocationTest, MixedStalenessOptimumBeatsFeasibleAlternatives) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<DivergenceModel> models;
  std::vector<double> mu, delta;
  for (int i = 0; i < 12; ++i) {
    DivergenceModel m;
    m.static_share = 0.2 + 0.5 * u(rng);
    m.churn_share = (1 - m.static_share) * u(rng);
    m.churn_rate = 0.05 + 2 * u(rng);
    m.scroll_k = 1 + static_cast<int>(12 * u(rng));
    m.scroll_rate = 0.05 + 2 * u(rng);
    models.push_back(m);
    mu.push_back(0.1 + u(rng));
    delta.push_back(m.churn_rate + m.scroll_rate);
  }
  const double total = 3;
  const auto opt = LongevityContinuousOptimum(models, mu, total);
  ASSERT_TRUE(opt.ok());
  EXPECT_NEAR(std::accumulate(opt->rates.begin(), opt->rates.end(), 0.0), total,
              1e-9);
  double mu_sum = 0, numeric = 0;
  for (size_t i = 0; i < models.size(); ++i) {
    mu_sum += mu[i];
    if (opt->rates[i] == 0) {  // abandoned: its utility never reaches λ
      EXPECT_LE(mu[i] * SupUtility(models[i]), opt->multiplier) << i;
      numeric += mu[i] * SaturationDivergence(models[i]);
      continue;
    }
    numeric += mu[i] * NumericStaleness(models[i], 1 / opt->rates[i]);
    // The threshold rule: μ_i·U_i(τ_i) = λ on every refreshed page.
    EXPECT_NEAR(mu[i] * Utility(models[i], 1 / opt->rates[i]), opt->multiplier,
                1e-8 * opt->multiplier);
  }
  EXPECT_NEAR(opt->staleness, numeric / mu_sum, 1e-6);
  const auto azar = GreedyContinuousOptimum(delta, mu, total);
  ASSERT_TRUE(azar.ok());
  const auto at_azar = PeriodicStaleness(models, mu, azar->rates);
  ASSERT_TRUE(at_azar.ok());
  EXPECT_GT(*at_azar, opt->staleness);
  for (int trial = 0; trial < 60; ++trial) {
    std::vector<double> r = opt->rates;
    const int i = trial % 12, j = (trial * 5 + 1) % 12;
    if (i == j) continue;
    const double d = std::min(0.05 * u(rng), r[j]);
    r[i] += d;
    r[j] -= d;
    const auto s = PeriodicStaleness(models, mu, r);
    ASSERT_TRUE(s.ok());
    EXPECT_GE(*s, opt->staleness - 1e-12) << trial;
  }
}

TEST(AllocationTest, StalenessOptimumRejectsBadInputAndNeverRefreshesStatic) {
  DivergenceModel fixed;  // static: never changes
  DivergenceModel churn = ChurnModelAtLevel(0.5, 1);
  const std::vector<DivergenceModel> two = {fixed, churn};
  const std::vector<double> mu = {1, 1};
  const auto s = LongevityContinuousOptimum(two, mu, 2);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->rates[0], 0);
  EXPECT_EQ(s->abandoned, 1);
  EXPECT_NEAR(s->rates[1], 2, 1e-9);
  EXPECT_FALSE(LongevityContinuousOptimum(two, mu, 0).ok());
  EXPECT_FALSE(LongevityContinuousOptimum(two, std::vector<double>{1}, 1).ok());
  EXPECT_FALSE(
      LongevityContinuousOptimum(two, std::vector<double>{0, 0}, 1).ok());
  EXPECT_FALSE(LongevityContinuousOptimum(std::vector<DivergenceModel>{fixed},
                                          std::vector<double>{1},
                                          1)
                   .ok());  // nothing ever changes
  DivergenceModel bad = churn;
  bad.churn_share = 2;
  EXPECT_EQ(LongevityContinuousOptimum(std::vector<DivergenceModel>{bad},
                                       std::vector<double>{1}, 1)
                .status()
                .code(),
            Status::Code::kInvalidArgument);
  EXPECT_FALSE(PeriodicStaleness(two, mu, std::vector<double>{1, -1}).ok());
  EXPECT_FALSE(PeriodicStaleness(two, mu, std::vector<double>{1}).ok());
  const auto never = PeriodicStaleness(two, mu, std::vector<double>{0, 0});
  ASSERT_TRUE(never.ok());
  EXPECT_NEAR(*never, 0.5 * SaturationDivergence(churn), 1e-12);
}

}  // namespace
}  // namespace freshd::sched
