#include "sim/random.h"

#include <cmath>
#include <limits>
#include <numbers>

namespace freshd::sim {

uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t HashKey(uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
  uint64_t h = Mix64(a);
  h = Mix64(h ^ b);
  h = Mix64(h ^ c);
  return Mix64(h ^ d);
}

uint64_t Rng::Next() {
  return Mix64(key_ + (++counter_) * 0x9e3779b97f4a7c15ull);
}

double Rng::Uniform() {
  return (static_cast<double>(Next() >> 11) + 0.5) * 0x1.0p-53;
}

double Rng::Exponential(double rate) {
  if (!(rate > 0)) return std::numeric_limits<double>::infinity();
  return -std::log(Uniform()) / rate;
}

double Rng::Normal() {
  double u1 = Uniform(), u2 = Uniform();
  return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
}

double Rng::Gamma(double shape) {
  if (shape < 1) {
    double u = Uniform();
    return Gamma(shape + 1) * std::pow(u, 1 / shape);
  }
  double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
  for (int i = 0; i < 1000; ++i) {
    double x = Normal(), v = 1 + c * x;
    if (v <= 0) continue;
    v = v * v * v;
    double u = Uniform();
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
  return d;  // practically unreachable
}

double Rng::Beta(double a, double b) {
  double x = Gamma(a), y = Gamma(b);
  return x + y > 0 ? x / (x + y) : 0.5;
}

double Distribution::Sample(Rng& rng) const {
  switch (kind) {
    case Kind::kConst:
      return a;
    case Kind::kUniform:
      return a + (b - a) * rng.Uniform();
    case Kind::kBeta:
      return rng.Beta(a, b);
    case Kind::kExponential:
      return a * -std::log(rng.Uniform());
    case Kind::kLogUniform:
      return std::exp(std::log(a) +
                      (std::log(b) - std::log(a)) * rng.Uniform());
  }
  return a;
}

double Distribution::Mean() const {
  switch (kind) {
    case Kind::kConst:
    case Kind::kExponential:
      return a;
    case Kind::kUniform:
      return 0.5 * (a + b);
    case Kind::kBeta:
      return a / (a + b);
    case Kind::kLogUniform:
      return a == b ? a : (b - a) / (std::log(b) - std::log(a));
  }
  return a;
}

std::string Distribution::ToString() const {
  switch (kind) {
    case Kind::kConst:
      return std::to_string(a);
    case Kind::kUniform:
      return "U(" + std::to_string(a) + "," + std::to_string(b) + ")";
    case Kind::kBeta:
      return "Beta(" + std::to_string(a) + "," + std::to_string(b) + ")";
    case Kind::kExponential:
      return "Exp(mean " + std::to_string(a) + ")";
    case Kind::kLogUniform:
      return "LogU(" + std::to_string(a) + "," + std::to_string(b) + ")";
  }
  return "?";
}

}  // namespace freshd::sim
