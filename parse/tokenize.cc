#include "parse/tokenize.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "parse/text_utf8.h"

namespace freshd::parse {
namespace {

// ASCII class table: 0 = separator, else the lowercased byte.
constexpr std::array<char, 128> MakeAsciiTable() {
  std::array<char, 128> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = static_cast<char>(c);
  for (int c = 'a'; c <= 'z'; ++c) t[c] = static_cast<char>(c);
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = static_cast<char>(c + 32);
  return t;
}
constexpr std::array<char, 128> kAscii = MakeAsciiTable();

struct Range {
  char32_t lo, hi;
};

// Non-ASCII code points that are NOT letters/digits (punctuation, symbols,
// spaces, private use, emoji), sorted. Everything else >= U+0080 counts as a
// word character: a deliberately coarse but cheap approximation of the
// Unicode L*/N*/M* categories that is exact for the common scripts.
constexpr Range kNonWord[] = {
    {0x0080, 0x00A9},   {0x00AB, 0x00B4},   {0x00B6, 0x00B9},
    {0x00BB, 0x00BF},   {0x00D7, 0x00D7},   {0x00F7, 0x00F7},
    {0x02C2, 0x02C5},   {0x02D2, 0x02DF},   {0x037E, 0x037E},
    {0x0387, 0x0387},   {0x055A, 0x055F},   {0x0589, 0x058A},
    {0x05BE, 0x05BE},   {0x05C0, 0x05C0},   {0x05C3, 0x05C3},
    {0x05C6, 0x05C6},   {0x05F3, 0x05F4},   {0x0600, 0x060F},
    {0x061B, 0x061F},   {0x066A, 0x066D},   {0x06D4, 0x06D4},
    {0x0964, 0x0965},   {0x0970, 0x0970},   {0x0E3F, 0x0E3F},
    {0x0E4F, 0x0E4F},   {0x0E5A, 0x0E5B},   {0x10FB, 0x10FB},
    {0x1360, 0x1368},   {0x166D, 0x166E},   {0x1680, 0x1680},
    {0x16EB, 0x16ED},   {0x17D4, 0x17DA},   {0x1800, 0x180A},
    {0x2000, 0x206F},   {0x20A0, 0x20FF},   {0x2100, 0x2101},
    {0x2103, 0x2106},   {0x2108, 0x2109},   {0x2116, 0x2118},
    {0x211E, 0x2123},   {0x2125, 0x2125},   {0x2127, 0x2127},
    {0x2129, 0x2129},   {0x212E, 0x212E},   {0x213A, 0x213B},
    {0x2140, 0x2144},   {0x214A, 0x214D},   {0x214F, 0x214F},
    {0x218A, 0x245F},   {0x2500, 0x2775},   {0x2794, 0x2BFF},
    {0x2CF9, 0x2CFC},   {0x2CFE, 0x2CFF},   {0x2E00, 0x2E7F},
    {0x2FF0, 0x2FFF},   {0x3000, 0x3004},   {0x3008, 0x3020},
    {0x3030, 0x3030},   {0x303D, 0x303F},   {0x30A0, 0x30A0},
    {0x30FB, 0x30FB},   {0xA4D0, 0xA4FF},   {0xD800, 0xF8FF},
    {0xFD3E, 0xFD3F},   {0xFE10, 0xFE1F},   {0xFE30, 0xFE6F},
    {0xFEFF, 0xFEFF},   {0xFF00, 0xFF0F},   {0xFF1A, 0xFF20},
    {0xFF3B, 0xFF40},   {0xFF5B, 0xFF65},   {0xFFE0, 0xFFFF},
    {0x1D000, 0x1D24F}, {0x1F000, 0x1FBFF}, {0xE0000, 0x10FFFF},
};

bool InRanges(char32_t c, const Range* begin, const Range* end) {
  const Range* it = std::upper_bound(
      begin, end, c, [](char32_t v, const Range& r) { return v < r.lo; });
  return it != begin && c <= (it - 1)->hi;
}

}  // namespace

bool IsWordCodePoint(char32_t c) {
  if (c < 0x80) return kAscii[c] != 0;
  if (c > 0x10FFFF) return false;
  return !InRanges(c, std::begin(kNonWord), std::end(kNonWord));
}

bool IsSingletonCodePoint(char32_t c) {
  return (c >= 0x3040 && c <= 0x30FF) ||  // Hiragana, Katakana
         (c >= 0x31F0 && c <= 0x31FF) ||  // Katakana extension
         (c >= 0x3400 && c <= 0x4DBF) ||  // Han extension A
         (c >= 0x4E00 && c <= 0x9FFF) ||  // Han
         (c >= 0xF900 && c <= 0xFAFF) ||  // Han compatibility
         (c >= 0x20000 && c <= 0x3FFFF);  // Han extensions B..
}

char32_t LowerCodePoint(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  if (c < 0x100) return (c >= 0xC0 && c <= 0xDE && c != 0xD7) ? c + 32 : c;
  if (c < 0x180) {  // Latin Extended-A: mostly upper/lower pairs
    if (c == 0x130) return 'i';
    if (c == 0x178) return 0xFF;
    if ((c >= 0x100 && c <= 0x137) || (c >= 0x14A && c <= 0x177))
      return (c % 2 == 0) ? c + 1 : c;
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E))
      return (c % 2 == 1) ? c + 1 : c;
    return c;
  }
  if (c >= 0x370 && c < 0x400) {  // Greek
    if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
    if (c == 0x386) return 0x3AC;
    if (c >= 0x388 && c <= 0x38A) return c + 37;
    if (c == 0x38C) return 0x3CC;
    if (c == 0x38E || c == 0x38F) return c + 63;
    if (c == 0x3C2) return 0x3C3;  // final sigma folds to sigma
    return c;
  }
  if (c >= 0x400 && c < 0x500) {  // Cyrillic
    if (c < 0x410) return c + 80;
    if (c < 0x430) return c + 32;
    if ((c >= 0x460 && c <= 0x481) || (c >= 0x48A && c <= 0x4BF))
      return (c % 2 == 0) ? c + 1 : c;
  }
  return c;
}

bool WordTokenizer::Next(std::string_view* token) {
  const std::string_view s = text_;
  const size_t n = s.size();
  size_t i = pos_;
  buf_.clear();
  // Skip separators.
  while (i < n) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      if (kAscii[b]) break;
      ++i;
      continue;
    }
    size_t next = i;
    char32_t cp = DecodeUtf8(s, &next);
    if (cp != kInvalidCodePoint && IsWordCodePoint(cp)) {
      if (IsSingletonCodePoint(cp)) {
        AppendUtf8(cp, &buf_);
        pos_ = next;
        *token = buf_;
        return true;
      }
      break;
    }
    i = next;
  }
  if (i >= n) {
    pos_ = n;
    return false;
  }
  // Fast path: a lowercase ASCII word followed by ASCII (or the end) is
  // returned as a view into the text, without copying.
  {
    size_t j = i;
    const char* d = s.data();
    while (j < n &&
           ((d[j] >= 'a' && d[j] <= 'z') || (d[j] >= '0' && d[j] <= '9')))
      ++j;
    if (j > i && j - i <= kMaxTokenBytes &&
        (j >= n || (static_cast<unsigned char>(d[j]) < 0x80 &&
                    !kAscii[static_cast<unsigned char>(d[j])]))) {
      pos_ = j;
      *token = s.substr(i, j - i);
      return true;
    }
  }
  // Collect one run of word code points.
  while (i < n) {
    unsigned char b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      char lower = kAscii[b];
      if (!lower) break;
      if (buf_.size() < kMaxTokenBytes) buf_.push_back(lower);
      ++i;
      continue;
    }
    size_t next = i;
    char32_t cp = DecodeUtf8(s, &next);
    if (cp == kInvalidCodePoint || !IsWordCodePoint(cp) ||
        IsSingletonCodePoint(cp))
      break;
    if (buf_.size() + 4 <= kMaxTokenBytes)
      AppendUtf8(LowerCodePoint(cp), &buf_);
    i = next;
  }
  pos_ = i;
  *token = buf_;
  return true;
}

}  // namespace freshd::parse
