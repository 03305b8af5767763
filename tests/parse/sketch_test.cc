// base/sketch.h: bottom-m min-hash sketches (docs/MATH.md Paper 3 (c)): the
// estimator against exact fragment staleness, its variance against
// Var = J(1-J)/m · (N-m)/(N-1), real page pairs, and the binary encoding.

#include "base/sketch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "parse/html_extract.h"
#include "parse/shingle.h"

namespace freshd::parse {
namespace {

std::string Words(int from, int to) {
  std::string s;
  for (int i = from; i < to; ++i) s += "w" + std::to_string(i) + " ";
  return s;
}

double FormulaVar(double j, double m, double n) {
  if (n <= m) return 0.0;
  return j * (1 - j) / m * (n - m) / (n - 1);
}

TEST(SketchTest, SketchKeepsTheMSmallest) {
  std::vector<uint64_t> set = {1, 5, 9, 20, 33, 40};
  BottomSketch s = Sketch(set, 4);
  EXPECT_EQ(s.m, 4u);
  EXPECT_EQ(s.hashes, (std::vector<uint64_t>{1, 5, 9, 20}));
  EXPECT_FALSE(s.complete());
  BottomSketch all = Sketch(set, 64);
  EXPECT_EQ(all.hashes, set);
  EXPECT_TRUE(all.complete());
}

TEST(SketchTest, EstimateIsExactWhenTheUnionFitsInM) {
  ShingleSet a = ShingleText(Words(0, 40), 2, 7);
  ShingleSet b = ShingleText(Words(20, 50), 2, 7);
  EXPECT_DOUBLE_EQ(SketchDivergence(Sketch(a, 64), Sketch(b, 64)),
                   ExactDivergence(a, b));
  EXPECT_EQ(SketchDivergence(Sketch(a, 64), Sketch(a, 64)), 0.0);
}

TEST(SketchTest, EmptyAndDisjoint) {
  BottomSketch empty = Sketch({}, 64);
  BottomSketch x = Sketch({3, 4}, 64);
  EXPECT_EQ(SketchDivergence(empty, empty), 0.0);
  EXPECT_EQ(SketchDivergence(empty, x), 1.0);
  EXPECT_EQ(SketchDivergence(x, Sketch({5, 6}, 64)), 1.0);
}

TEST(SketchTest, HandComputedEstimate) {
  // X_A = {1,2,3,4}, X_B = {2,4,5,6}, m = 4: S = {1,2,3,4}, in both {2,4}.
  BottomSketch a = Sketch({1, 2, 3, 4, 10}, 4);
  BottomSketch b = Sketch({2, 4, 5, 6, 11}, 4);
  EXPECT_DOUBLE_EQ(SketchDivergence(a, b), 0.5);
  // Different m compare at the smaller: m = 2 gives S = {1,2}, both {2}.
  EXPECT_DOUBLE_EQ(SketchDivergence(Sketch({1, 2, 3, 4, 10}, 2), b), 0.5);
  EXPECT_DOUBLE_EQ(SketchDivergence(Sketch({1, 3, 4, 10}, 2), b), 1.0);
}

// Empirical mean and variance of the estimate over many hash seeds, against
// docs/MATH.md's Var = J(1-J)/m · (N-m)/(N-1). With T trials the sample
// variance has relative standard error ~sqrt(2/(T-1)) (≈ 2.9% for T = 2500,
// normal approximation; the hypergeometric is close to normal here), so a ±15%
// band is ~5 standard errors: a wrong estimator (e.g. one that ignores the
// finite-population factor, off by 6-25% at these N) fails, chance does not.
TEST(SketchTest, EstimatorIsUnbiasedWithTheMathMdVariance) {
  struct Config {
    int a_only, both, b_only;
    size_t m;
  };
  const Config configs[] = {{250, 500, 250, 64},  // J = 0.5, N = 1000
                            {300, 100, 100, 16},  // J = 0.2, N = 500
                            {40, 120, 40, 64}};   // J = 0.6, N = 200
  const int kTrials = 2500;
  for (const Config& c : configs) {
    // k = 1 over distinct words: the shingle sets have exactly these sizes.
    std::string ta = Words(0, c.a_only + c.both);
    std::string tb = Words(c.a_only, c.a_only + c.both + c.b_only);
    const double n = c.a_only + c.both + c.b_only;
    const double j = c.both / n;
    double sum = 0, sum2 = 0;
    for (int seed = 1; seed <= kTrials; ++seed) {  // fixed seeds 1..T
      ShingleSet a = ShingleText(ta, 1, seed), b = ShingleText(tb, 1, seed);
      ASSERT_NEAR(ExactDivergence(a, b), 1 - j, 1e-12);
      double est = 1 - SketchDivergence(Sketch(a, c.m), Sketch(b, c.m));
      sum += est;
      sum2 += est * est;
    }
    double mean = sum / kTrials;
    double var = (sum2 - kTrials * mean * mean) / (kTrials - 1);
    double want = FormulaVar(j, static_cast<double>(c.m), n);
    std::printf(
        "J=%.2f N=%.0f m=%zu: mean %.4f, variance %.6f, docs/MATH.md %.6f "
        "(ratio %.3f) over %d seeds\n",
        j, n, c.m, mean, var, want, var / want, kTrials);
    SCOPED_TRACE(testing::Message() << "J=" << j << " N=" << n << " m=" << c.m
                                    << " var=" << var << " formula=" << want);
    EXPECT_NEAR(mean, j, 4 * std::sqrt(want / kTrials));
    EXPECT_NEAR(var / want, 1.0, 0.15);
  }
}

// Real page pairs: python3-doc pages (Debian package python3-doc, needed by
// this test) and edited versions of them: a share of their paragraphs
// removed and a new paragraph added, as a page update would. Each estimate
// must lie within 4.5 sd (docs/MATH.md variance) of the exact value, and the
// mean signed error over all pairs within 4 standard errors of 0
// (unbiasedness).
TEST(SketchTest, EstimateTracksExactStalenessOnRealPagePairs) {
  const std::string dir = "/usr/share/doc/python3/html/library";
  ASSERT_TRUE(std::filesystem::is_directory(dir))
      << dir << " missing: apt-get install python3-doc";
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".html") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  ASSERT_GE(paths.size(), 100u);
  std::mt19937_64 rng(20240601);  // fixed seed
  // One hash seed per pair: all pages share boilerplate (navigation, footer),
  // so under a single seed the same few boilerplate shingles sit in every
  // sketch and the pairs' errors are correlated; fresh seeds make them
  // independent, which the mean-error check below assumes.
  uint64_t seed = 0xfeedface;
  const size_t m = kDefaultSketchM;
  double err_sum = 0, var_sum = 0;
  int pairs = 0;
  auto text_of = [](const std::string& html) {
    auto page = ExtractHtml(html, "text/html", "http://docs.invalid/x.html");
    return page.ok() ? page->text : std::string();
  };
  auto check = [&](const std::string& old_text, const std::string& new_text,
                   const std::string& what) {
    ++seed;
    ShingleSet a = ShingleText(old_text, 4, seed);
    ShingleSet b = ShingleText(new_text, 4, seed);
    double exact = ExactDivergence(a, b);
    double est = SketchDivergence(Sketch(a, m), Sketch(b, m));
    double n =
        static_cast<double>(a.size() + b.size() - IntersectionSize(a, b));
    double var = FormulaVar(1 - exact, static_cast<double>(m), n);
    EXPECT_LE(std::abs(est - exact), 4.5 * std::sqrt(var) + 1e-12)
        << what << ": exact " << exact << " estimate " << est;
    err_sum += est - exact;
    var_sum += var;
    ++pairs;
  };
  for (size_t i = 0; i + 1 < paths.size(); i += paths.size() / 40) {
    std::ifstream in(paths[i]);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string html = ss.str();
    // Edited version: drop each <p> with probability q, add one paragraph.
    double q = std::uniform_real_distribution<double>(0.02, 0.6)(rng);
    std::string edited;
    size_t pos = 0;
    while (true) {
      size_t p = html.find("<p>", pos);
      if (p == std::string::npos) break;
      size_t end = html.find("</p>", p);
      if (end == std::string::npos) break;
      edited.append(html, pos, p - pos);
      if (std::bernoulli_distribution(1 - q)(rng))
        edited.append(html, p, end + 4 - p);
      pos = end + 4;
    }
    edited.append(html, pos);
    edited += "<p>A new paragraph about release " + std::to_string(i) +
              " added by this edit, with several words.</p>";
    std::string t0 = text_of(html);
    check(t0, text_of(edited), paths[i] + " edited");
    // A pair of different (neighbouring) pages.
    std::ifstream in2(paths[i + 1]);
    std::stringstream ss2;
    ss2 << in2.rdbuf();
    check(t0, text_of(ss2.str()), paths[i] + " vs " + paths[i + 1]);
  }
  ASSERT_GE(pairs, 60);
  std::printf(
      "%d real page pairs: mean signed error %.5f, standard error %.5f\n",
      pairs, err_sum / pairs, std::sqrt(var_sum) / pairs);
  EXPECT_LE(std::abs(err_sum / pairs), 4 * std::sqrt(var_sum) / pairs)
      << "mean signed error over " << pairs << " pairs";
}

TEST(SketchTest, EncodeDecodeRoundTrip) {
  BottomSketch s = Sketch(ShingleText(Words(0, 200), 4, 99), 64);
  std::string bytes = EncodeSketch(s);
  EXPECT_EQ(bytes.size(), 5u + 8 * 64);
  EXPECT_EQ(bytes[0], 1);
  Result<BottomSketch> back = DecodeSketch(bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
  BottomSketch empty = Sketch({}, 8);
  EXPECT_EQ(*DecodeSketch(EncodeSketch(empty)), empty);
  EXPECT_EQ(SketchToHex(Sketch({0x0102030405060708ULL}, 2)),
            "01020001000807060504030201");
}

TEST(SketchTest, DecodeRejectsCorruptInput) {
  std::string good = EncodeSketch(Sketch({1, 2, 3}, 4));
  auto corrupt = [](std::string s) {
    Result<BottomSketch> r = DecodeSketch(s);
    return !r.ok() && r.status().code() == Status::Code::kCorruption;
  };
  EXPECT_TRUE(corrupt(""));
  EXPECT_TRUE(corrupt(good.substr(0, 4)));
  EXPECT_TRUE(corrupt(good.substr(0, good.size() - 1)));
  EXPECT_TRUE(corrupt(good + "x"));
  std::string v = good;
  v[0] = 2;
  EXPECT_TRUE(corrupt(v));  // unknown version
  std::string m0 = good;
  m0[1] = m0[2] = 0;
  EXPECT_TRUE(corrupt(m0));  // m = 0
  std::string over = good;
  over[3] = 5;  // count 5 > m 4 (length also wrong)
  EXPECT_TRUE(corrupt(over));
  std::string unsorted = EncodeSketch(Sketch({1, 2, 3}, 4));
  std::swap(unsorted[5], unsorted[13]);  // 2,1,3
  EXPECT_TRUE(corrupt(unsorted));
}

}  // namespace
}  // namespace freshd::parse
