#include "base/sketch.h"

#include <algorithm>

namespace freshd {
namespace {

void PutLe(uint64_t v, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i)
    out->push_back(static_cast<char>(v >> (8 * i)));
}

uint64_t GetLe(std::string_view s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= static_cast<uint64_t>(static_cast<unsigned char>(s[at + i]))
         << (8 * i);
  return v;
}

}  // namespace

BottomSketch Sketch(const std::vector<uint64_t>& sorted_unique, size_t m) {
  m = std::clamp<size_t>(m, 1, kMaxSketchM);
  BottomSketch s;
  s.m = static_cast<uint32_t>(m);
  size_t take = std::min(m, sorted_unique.size());
  s.hashes.assign(sorted_unique.begin(), sorted_unique.begin() + take);
  return s;
}

double SketchDivergence(const BottomSketch& a, const BottomSketch& b) {
  if (a.hashes.empty() && b.hashes.empty()) return 0.0;
  if (a.hashes.empty() || b.hashes.empty()) return 1.0;
  // Compare at the smaller capacity: bottom_m' of a bottom_m sketch is the
  // bottom_m' of the set, so truncating the larger one is exact.
  const size_t m = std::max<size_t>(1, std::min(a.m, b.m));
  const size_t na = std::min(a.hashes.size(), m);
  const size_t nb = std::min(b.hashes.size(), m);
  // S = bottom_m(X_A ∪ X_B); count the elements of S present in both.
  size_t i = 0, j = 0, s = 0, both = 0;
  while (s < m && (i < na || j < nb)) {
    if (j >= nb || (i < na && a.hashes[i] < b.hashes[j])) {
      ++i;
    } else if (i >= na || b.hashes[j] < a.hashes[i]) {
      ++j;
    } else {
      ++i, ++j, ++both;
    }
    ++s;
  }
  // The loop cannot exhaust a full sketch (|X| = m) before |S| = m, and a
  // sketch with |X| < m is its whole set, so every element of S is present in
  // X_A (X_B) exactly when it is in A (B).
  return 1.0 - static_cast<double>(both) / static_cast<double>(s);
}

std::string EncodeSketch(const BottomSketch& sketch) {
  std::string out;
  out.reserve(5 + 8 * sketch.hashes.size());
  out.push_back(static_cast<char>(kSketchVersion));
  PutLe(sketch.m, 2, &out);
  PutLe(sketch.hashes.size(), 2, &out);
  for (uint64_t h : sketch.hashes) PutLe(h, 8, &out);
  return out;
}

Result<BottomSketch> DecodeSketch(std::string_view bytes) {
  if (bytes.size() < 5) return Status::Corruption("sketch: too short");
  if (static_cast<uint8_t>(bytes[0]) != kSketchVersion)
    return Status::Corruption("sketch: unknown version");
  BottomSketch s;
  s.m = static_cast<uint32_t>(GetLe(bytes, 1, 2));
  size_t count = GetLe(bytes, 3, 2);
  if (s.m == 0 || s.m > kMaxSketchM)
    return Status::Corruption("sketch: m out of range");
  if (count > s.m) return Status::Corruption("sketch: count > m");
  if (bytes.size() != 5 + 8 * count)
    return Status::Corruption("sketch: length does not match count");
  s.hashes.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    uint64_t h = GetLe(bytes, 5 + 8 * i, 8);
    if (!s.hashes.empty() && h <= s.hashes.back())
      return Status::Corruption("sketch: hashes not strictly ascending");
    s.hashes.push_back(h);
  }
  return s;
}

std::string SketchToHex(const BottomSketch& sketch) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string bin = EncodeSketch(sketch), out;
  out.reserve(bin.size() * 2);
  for (unsigned char c : bin) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

}  // namespace freshd
