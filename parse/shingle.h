// Word k-gram shingles (Olston & Pandey 2008 §2.1.1; Broder 1997): a page's
// text is the set of hashes of its k consecutive word tokens (tokenize.h).
// Hashes are XXH3-64 keyed with a per-installation secret `seed`, so outsiders
// cannot craft collisions without it: each token is hashed with the seed, and
// a shingle's hash is XXH3(seed) of its k token hashes (64-bit each, little
// endian). A text with 1 <= n < k tokens has one shingle (all n tokens).
// Fragment staleness D = 1 - |A∩B|/|A∪B| (docs/MATH.md, Paper 3).
// Thread-safety: pure functions; concurrent calls are safe.

#ifndef FRESHD_PARSE_SHINGLE_H_
#define FRESHD_PARSE_SHINGLE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "base/sketch.h"

namespace freshd::parse {

inline constexpr int kDefaultShingleK = 4;
inline constexpr int kMaxShingleK = 64;

// Sorted ascending, no duplicates.
using ShingleSet = std::vector<uint64_t>;

// The shingle set of `text`. REQUIRES: 1 <= k <= kMaxShingleK (clamped).
ShingleSet ShingleText(std::string_view text, int k, uint64_t seed);

// 64-bit hash of the normalized text: XXH3 (keyed by the seed) over the
// sequence of token hashes (tokenize.h). Equal for texts that differ only in
// case, punctuation or spacing; the holistic "changed?" bit.
uint64_t TextHash(std::string_view text, uint64_t seed);

// Exact fragment staleness 1 - J(a, b) in [0, 1]; 0 if both are empty, 1 if
// exactly one is. REQUIRES: both sorted unique (as ShingleText returns).
double ExactDivergence(const ShingleSet& a, const ShingleSet& b);

// |a ∩ b| for sorted unique sets.
size_t IntersectionSize(const ShingleSet& a, const ShingleSet& b);

// Everything the crawler keeps about a page's text, from one tokenizer pass.
struct TextFingerprint {
  uint64_t text_hash = 0;    // TextHash(text, seed)
  size_t token_count = 0;    // word tokens in the text
  ShingleSet shingles;       // full set (empty unless keep_shingles)
  size_t shingle_count = 0;  // |shingle set|, also when not kept
  BottomSketch sketch;       // bottom-m of the shingle set
};

// Computes all of TextFingerprint in one pass. With keep_shingles = false
// the full set is still built (to count it) but then released.
// REQUIRES: 1 <= k <= kMaxShingleK, 1 <= m <= kMaxSketchM (both clamped).
TextFingerprint FingerprintText(std::string_view text, int k, size_t m,
                                uint64_t seed, bool keep_shingles = false);

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_SHINGLE_H_
