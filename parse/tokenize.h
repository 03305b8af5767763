// Word tokenizer for shingling: splits UTF-8 text into lowercased word tokens.
// A token is a maximal run of Unicode letters and digits (apostrophes and all
// punctuation, symbols, spaces and controls separate tokens). Lowercasing is
// full for ASCII and covers Latin-1, Latin Extended-A, Greek and Cyrillic
// capitals; other scripts are kept as is. Han ideographs, Hiragana and
// Katakana (written without spaces) become one token per character. Invalid
// UTF-8 bytes separate tokens. Tokens longer than kMaxTokenBytes are cut.
// Thread-safety: a WordTokenizer is not thread-safe; use one per thread.

#ifndef FRESHD_PARSE_TOKENIZE_H_
#define FRESHD_PARSE_TOKENIZE_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace freshd::parse {

inline constexpr size_t kMaxTokenBytes = 256;

// Pull tokenizer over a borrowed text; no vector of tokens is built.
//   WordTokenizer tok(text);
//   std::string_view word;
//   while (tok.Next(&word)) { ... }   // `word` valid until the next Next()
class WordTokenizer {
 public:
  // REQUIRES: `text` outlives the tokenizer.
  explicit WordTokenizer(std::string_view text) : text_(text) {}
  WordTokenizer(const WordTokenizer&) = delete;
  WordTokenizer& operator=(const WordTokenizer&) = delete;

  // Stores the next lowercased token in *token (a view into the text or an
  // internal buffer, valid until the next call) and returns true; false at
  // the end.
  bool Next(std::string_view* token);

 private:
  std::string_view text_;
  size_t pos_ = 0;
  std::string buf_;  // the current token, lowercased
};

// True if the code point is a letter or digit for tokenizing purposes.
bool IsWordCodePoint(char32_t c);
// True for scripts written without spaces (one token per character).
bool IsSingletonCodePoint(char32_t c);
// Simple lowercase mapping (identity outside the covered blocks).
char32_t LowerCodePoint(char32_t c);

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_TOKENIZE_H_
