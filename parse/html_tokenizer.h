// A streaming HTML tokenizer in the spirit of the WHATWG tokenizer (HTML
// §13.2.5): data, tag open/name, attribute name/value (quoted and unquoted),
// comments (incl. <!--> and --!>), bogus comments (<!DOCTYPE>, <?...>, </ >),
// and the raw-text / RCDATA / PLAINTEXT content of script, style, xmp,
// iframe, noembed, noframes, noscript (scripting on), title, textarea and
// plaintext. It builds no tree, copies nothing and reports tokens to a
// handler; character references are left to the handler (html_entities.h).
// Not modelled: script-data escape states, CDATA in foreign content, the
// tree builder's implied tags. Every byte sequence is accepted; cost is
// linear in the input (each byte is examined a bounded number of times).
// Thread-safety: a HtmlTokenizer is not thread-safe; use one per thread.

#ifndef FRESHD_PARSE_HTML_TOKENIZER_H_
#define FRESHD_PARSE_HTML_TOKENIZER_H_

#include <cstddef>
#include <string_view>
#include <vector>

namespace freshd::parse {

struct HtmlAttribute {
  std::string_view name;   // as written (compare case-insensitively)
  std::string_view value;  // raw: quotes removed, references undecoded
};

// One start or end tag. Views point into the tokenizer's input and buffers
// and are valid only during the handler call.
struct HtmlTag {
  std::string_view name;  // lowercased, cut to kMaxTagName bytes
  const HtmlAttribute* attributes = nullptr;
  size_t num_attributes = 0;  // at most kMaxAttributes are kept
  bool end_tag = false;
  bool self_closing = false;

  // The first attribute named `lower_name` (ASCII-case-insensitive match), or
  // nullptr.
  const HtmlAttribute* Find(std::string_view lower_name) const;
};

class HtmlTokenHandler {
 public:
  virtual ~HtmlTokenHandler() = default;
  // Character data (data state and RCDATA), references undecoded. Raw-text
  // element content (script, style, ...) and comments are never reported.
  virtual void OnText(std::string_view raw) = 0;
  // A start or end tag. Return false to stop tokenizing.
  virtual bool OnTag(const HtmlTag& tag) = 0;
};

class HtmlTokenizer {
 public:
  static constexpr size_t kMaxTagName = 32;
  static constexpr size_t kMaxAttributes = 64;

  HtmlTokenizer() = default;
  HtmlTokenizer(const HtmlTokenizer&) = delete;
  HtmlTokenizer& operator=(const HtmlTokenizer&) = delete;

  // Tokenizes `html` start to end, calling `handler` for each token. A tag
  // cut off by the end of input is dropped (as the spec does).
  void Run(std::string_view html, HtmlTokenHandler* handler);

 private:
  // Parses the tag whose '<' is at s[lt]; returns the position after '>' or
  // npos if the input ends inside the tag. Fills tag_/attrs_.
  size_t ParseTag(std::string_view s, size_t lt, bool end_tag);

  char name_[kMaxTagName];
  std::vector<HtmlAttribute> attrs_;
  HtmlTag tag_;
};

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_HTML_TOKENIZER_H_
