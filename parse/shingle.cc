#include "parse/shingle.h"

#include <xxhash.h>

#include <algorithm>

#include "parse/tokenize.h"

namespace freshd::parse {
namespace {

// Domain separation: token, shingle and whole-text hashes use different keys
// derived from the one secret seed.
constexpr uint64_t kShingleDomain = 0x9E3779B97F4A7C15ULL;
constexpr uint64_t kTextDomain = 0xC2B2AE3D27D4EB4FULL;

// Hash of every token, in order.
std::vector<uint64_t> TokenHashes(std::string_view text, uint64_t seed) {
  std::vector<uint64_t> hashes;
  hashes.reserve(text.size() / 6 + 1);
  WordTokenizer tok(text);
  std::string_view word;
  while (tok.Next(&word))
    hashes.push_back(XXH3_64bits_withSeed(word.data(), word.size(), seed));
  return hashes;
}

uint64_t HashOfTokenHashes(const std::vector<uint64_t>& tokens, uint64_t seed) {
  return XXH3_64bits_withSeed(tokens.data(), tokens.size() * sizeof(uint64_t),
                              seed ^ kTextDomain);
}

// Sorts 64-bit hashes ascending: LSD radix sort with six 11-bit digits
// (one counting pass, six scatter passes) for large inputs, where it beats
// std::sort by ~4x on the uniformly distributed hashes; std::sort otherwise.
void SortHashes(std::vector<uint64_t>* v) {
  const size_t n = v->size();
  if (n < 512) {
    std::sort(v->begin(), v->end());
    return;
  }
  constexpr int kBits = 11, kPasses = 6;
  constexpr size_t kBuckets = size_t{1} << kBits;
  std::vector<uint32_t> counts(kBuckets * kPasses, 0);
  for (uint64_t h : *v)
    for (int p = 0; p < kPasses; ++p)
      ++counts[p * kBuckets + ((h >> (p * kBits)) & (kBuckets - 1))];
  std::vector<uint64_t> tmp(n);
  uint64_t* src = v->data();
  uint64_t* dst = tmp.data();
  for (int p = 0; p < kPasses; ++p) {
    uint32_t* c = &counts[p * kBuckets];
    uint32_t sum = 0;
    for (size_t b = 0; b < kBuckets; ++b) {
      uint32_t x = c[b];
      c[b] = sum;
      sum += x;
    }
    for (size_t i = 0; i < n; ++i) {
      uint64_t h = src[i];
      dst[c[(h >> (p * kBits)) & (kBuckets - 1)]++] = h;
    }
    std::swap(src, dst);
  }
  // An even number of passes leaves the result in v itself.
  static_assert(kPasses % 2 == 0);
}

// Sorted unique shingle hashes from the token hash sequence. Each shingle
// hash is XXH3 over the k token hashes in memory order (little endian here;
// all supported targets are).
ShingleSet ShinglesOf(const std::vector<uint64_t>& tokens, int k,
                      uint64_t seed) {
  ShingleSet out;
  if (tokens.empty()) return out;
  const size_t kk = std::min<size_t>(static_cast<size_t>(k), tokens.size());
  const size_t count = tokens.size() - kk + 1;
  out.resize(count);
  const uint64_t key = seed ^ kShingleDomain;
  for (size_t i = 0; i < count; ++i)
    out[i] =
        XXH3_64bits_withSeed(tokens.data() + i, kk * sizeof(uint64_t), key);
  SortHashes(&out);
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

ShingleSet ShingleText(std::string_view text, int k, uint64_t seed) {
  k = std::clamp(k, 1, kMaxShingleK);
  return ShinglesOf(TokenHashes(text, seed), k, seed);
}

uint64_t TextHash(std::string_view text, uint64_t seed) {
  return HashOfTokenHashes(TokenHashes(text, seed), seed);
}

size_t IntersectionSize(const ShingleSet& a, const ShingleSet& b) {
  size_t i = 0, j = 0, both = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++i, ++j, ++both;
    }
  }
  return both;
}

double ExactDivergence(const ShingleSet& a, const ShingleSet& b) {
  if (a.empty() && b.empty()) return 0.0;
  const size_t both = IntersectionSize(a, b);
  const size_t uni = a.size() + b.size() - both;
  return 1.0 - static_cast<double>(both) / static_cast<double>(uni);
}

TextFingerprint FingerprintText(std::string_view text, int k, size_t m,
                                uint64_t seed, bool keep_shingles) {
  k = std::clamp(k, 1, kMaxShingleK);
  m = std::clamp<size_t>(m, 1, kMaxSketchM);
  TextFingerprint fp;
  std::vector<uint64_t> tokens = TokenHashes(text, seed);
  fp.token_count = tokens.size();
  fp.text_hash = HashOfTokenHashes(tokens, seed);
  ShingleSet set = ShinglesOf(tokens, k, seed);
  fp.shingle_count = set.size();
  fp.sketch = Sketch(set, m);
  if (keep_shingles) fp.shingles = std::move(set);
  return fp;
}

}  // namespace freshd::parse
