// Deterministic randomness for the simulated web: every draw is a pure
// function of (seed, stream key, counter), so a page's content at time t is
// reproducible from (seed, page, t) alone (sim/page_process.h) and the same
// web can later be served over HTTP. SplitMix64 mixing; no global state.
// Distribution is the "number drawn per page" of the web TOML (sim/README.md).
// Value types; thread-safe to share const.

#ifndef FRESHD_SIM_RANDOM_H_
#define FRESHD_SIM_RANDOM_H_

#include <cstdint>
#include <string>

namespace freshd::sim {

// SplitMix64 finalizer: a bijective 64-bit mix.
uint64_t Mix64(uint64_t x);

// Hash of up to four words, order sensitive.
uint64_t HashKey(uint64_t a, uint64_t b, uint64_t c = 0, uint64_t d = 0);

// A sequential stream keyed by a 64-bit key: draw i = Mix64(key + i·golden).
class Rng {
 public:
  explicit Rng(uint64_t key) : key_(key) {}
  uint64_t Next();
  double Uniform();                 // in (0, 1), never 0 or 1
  double Exponential(double rate);  // mean 1/rate; +inf when rate <= 0
  double Normal();                  // standard normal (Box–Muller)
  double Gamma(double shape);       // Marsaglia–Tsang; shape > 0
  double Beta(double a, double b);

 private:
  uint64_t key_;
  uint64_t counter_ = 0;
};

// One TOML distribution: a number, or a table {dist = "uniform", min, max} |
// {dist = "beta", a, b} | {dist = "exponential", mean} | {dist =
// "loguniform", min, max} | {dist = "const", value}.
struct Distribution {
  enum class Kind { kConst, kUniform, kBeta, kExponential, kLogUniform };
  Kind kind = Kind::kConst;
  double a = 0;  // const value, min, beta a, exponential mean
  double b = 0;  // max, beta b

  static Distribution Const(double v) { return {Kind::kConst, v, 0}; }
  double Sample(Rng& rng) const;
  double Mean() const;
  std::string ToString() const;
};

}  // namespace freshd::sim

#endif  // FRESHD_SIM_RANDOM_H_
