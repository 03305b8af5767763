// HTML character reference decoding (WHATWG HTML §13.2.5.72-80, simplified):
// numeric references (&#38; &#x26;, with or without ';', C1 controls mapped as
// windows-1252, NUL/surrogates/out-of-range -> U+FFFD) and a table of the 259
// common named references (parse/html_entity_table.cc), including the legacy
// names that may omit the ';'. Unknown names are kept literally.
// Thread-safety: pure functions over a constant table.

#ifndef FRESHD_PARSE_HTML_ENTITIES_H_
#define FRESHD_PARSE_HTML_ENTITIES_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace freshd::parse {

// Decodes the reference starting at s[amp] == '&', appends its UTF-8 to *out
// and returns the number of bytes consumed; returns 0 (appending nothing) if
// there is no reference there. In attribute values a legacy name without ';'
// followed by an alphanumeric or '=' is not decoded (the spec's rule).
size_t DecodeCharRef(std::string_view s, size_t amp, bool in_attribute,
                     std::string* out);

// Appends `raw` to *out with every character reference decoded.
void AppendDecoded(std::string_view raw, bool in_attribute, std::string* out);

namespace internal {
struct NamedEntity {
  const char* name;  // without '&' and ';'
  char32_t code_point;
  bool legacy;  // also recognized without the trailing ';'
};
extern const NamedEntity kNamedEntities[];
extern const size_t kNumNamedEntities;
}  // namespace internal

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_HTML_ENTITIES_H_
