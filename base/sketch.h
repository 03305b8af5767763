// Bottom-m min-hash sketch of a shingle set (Broder 1997; docs/MATH.md Paper 3
// (c); Olston & Pandey §5.2): the m smallest distinct 64-bit shingle hashes.
// Two sketches estimate the Jaccard similarity without the full sets:
//   S = bottom_m(X_A ∪ X_B),  Ĵ = |S ∩ X_A ∩ X_B| / |S|,  D̂ = 1 - Ĵ,
// unbiased with Var = J(1-J)/m · (N-m)/(N-1), N = |A∪B| (exact if N <= m).
// Binary form (for store/ and sched/), little endian:
//   u8 version (=1) | u16 m | u16 count | count × u64 hashes, ascending.
// Thread-safety: value type and pure functions; concurrent reads are safe.

#ifndef FRESHD_BASE_SKETCH_H_
#define FRESHD_BASE_SKETCH_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace freshd {

inline constexpr size_t kDefaultSketchM = 64;
inline constexpr size_t kMaxSketchM = 4096;
inline constexpr uint8_t kSketchVersion = 1;

struct BottomSketch {
  uint32_t m = 0;                // capacity the sketch was built with
  std::vector<uint64_t> hashes;  // ascending, distinct, size() <= m
  // True if hashes is the whole set (the set had fewer than m elements).
  bool complete() const { return hashes.size() < m; }
  bool operator==(const BottomSketch&) const = default;
};

// The m smallest elements of a sorted unique set. REQUIRES: `sorted_unique`
// ascending without duplicates; 1 <= m <= kMaxSketchM (clamped).
BottomSketch Sketch(const std::vector<uint64_t>& sorted_unique, size_t m);

// Estimated fragment staleness 1 - Ĵ in [0, 1] (estimator above). Sketches
// built with different m are compared at the smaller m. Both empty -> 0,
// exactly one empty -> 1.
double SketchDivergence(const BottomSketch& a, const BottomSketch& b);

// Binary encoding (format above); at most 5 + 8·kMaxSketchM bytes.
std::string EncodeSketch(const BottomSketch& sketch);
// Decodes EncodeSketch output. Fails with Corruption on a wrong version,
// length, m = 0, count > m, or hashes not strictly ascending.
Result<BottomSketch> DecodeSketch(std::string_view bytes);

// Lowercase hex of the encoding (for JSON output).
std::string SketchToHex(const BottomSketch& sketch);

}  // namespace freshd

#endif  // FRESHD_BASE_SKETCH_H_
