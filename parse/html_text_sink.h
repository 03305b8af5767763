// Appends HTML character data to a UTF-8 text buffer the way a browser lays it
// out for reading: references decoded, runs of ASCII whitespace and control
// characters collapsed to one separator (a '\n' if a block boundary was
// crossed, else ' '), no leading or trailing separator, output capped at a
// byte limit on a code point boundary. The input must be valid UTF-8.
// Thread-safety: a HtmlTextSink is not thread-safe; use one per thread.

#ifndef FRESHD_PARSE_HTML_TEXT_SINK_H_
#define FRESHD_PARSE_HTML_TEXT_SINK_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace freshd::parse {

class HtmlTextSink {
 public:
  // REQUIRES: `out` outlives the sink.
  HtmlTextSink(std::string* out, size_t max_bytes)
      : out_(out), max_bytes_(max_bytes) {}

  // Appends raw character data (references undecoded).
  void Append(std::string_view raw);
  // Marks a word boundary (inline separation) / block boundary.
  void Space() { pending_space_ = true; }
  void Block() { pending_block_ = true; }
  // True once something was cut off at max_bytes.
  bool truncated() const { return truncated_; }

 private:
  void Put(std::string_view run);  // a run without whitespace or '&'

  std::string* out_;
  size_t max_bytes_;
  bool pending_space_ = false;
  bool pending_block_ = false;
  bool truncated_ = false;
  std::string scratch_;  // decoded character reference
};

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_HTML_TEXT_SINK_H_
