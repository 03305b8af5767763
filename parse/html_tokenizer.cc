#include "parse/html_tokenizer.h"

#include <cstring>

#include "base/ascii.h"

namespace freshd::parse {
namespace {

constexpr size_t npos = std::string_view::npos;

inline bool IsWs(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f';
}

size_t Find(std::string_view s, char c, size_t from) {
  if (from >= s.size()) return npos;
  const void* p = std::memchr(s.data() + from, c, s.size() - from);
  return p ? static_cast<const char*>(p) - s.data() : npos;
}

enum class Content { kNormal, kRawText, kRcdata, kPlaintext };

// Content model switched to after a start tag (scripting enabled).
Content ContentOf(std::string_view name) {
  switch (name.size()) {
    case 3:
      if (name == "xmp") return Content::kRawText;
      break;
    case 5:
      if (name == "style" || name == "title") {
        return name[0] == 's' ? Content::kRawText : Content::kRcdata;
      }
      break;
    case 6:
      if (name == "script" || name == "iframe") return Content::kRawText;
      break;
    case 7:
      if (name == "noembed") return Content::kRawText;
      break;
    case 8:
      if (name == "noframes" || name == "noscript") return Content::kRawText;
      if (name == "textarea") return Content::kRcdata;
      break;
    case 9:
      if (name == "plaintext") return Content::kPlaintext;
      break;
  }
  return Content::kNormal;
}

// Position of the "</name" (followed by whitespace, '/' or '>') that ends a
// raw-text or RCDATA element, or npos.
size_t FindEndTag(std::string_view s, size_t from, std::string_view name) {
  size_t i = from;
  while ((i = Find(s, '<', i)) != npos) {
    size_t after = i + 2 + name.size();
    if (after < s.size() && s[i + 1] == '/' &&
        EqualsAsciiLower(s.substr(i + 2, name.size()), name) &&
        (IsWs(s[after]) || s[after] == '/' || s[after] == '>'))
      return i;
    ++i;
  }
  return npos;
}

// End of a comment whose "<!--" is at `lt`: the position after "-->",
// "--!>", or the "<!-->"/"<!--->" abrupt forms; s.size() if unterminated.
size_t CommentEnd(std::string_view s, size_t lt) {
  size_t start = lt + 4;
  if (start < s.size() && s[start] == '>') return start + 1;
  if (s.substr(start, 2) == "->") return start + 2;
  size_t i = start;
  while ((i = s.find("--", i)) != npos) {
    if (i + 2 < s.size() && s[i + 2] == '>') return i + 3;
    if (i + 3 < s.size() && s[i + 2] == '!' && s[i + 3] == '>') return i + 4;
    ++i;
  }
  return s.size();
}

// After a bogus comment / markup declaration starting at `from`.
size_t BogusCommentEnd(std::string_view s, size_t from) {
  size_t gt = Find(s, '>', from);
  return gt == npos ? s.size() : gt + 1;
}

}  // namespace

const HtmlAttribute* HtmlTag::Find(std::string_view lower_name) const {
  for (size_t i = 0; i < num_attributes; ++i)
    if (EqualsAsciiLower(attributes[i].name, lower_name)) return &attributes[i];
  return nullptr;
}

size_t HtmlTokenizer::ParseTag(std::string_view s, size_t lt, bool end_tag) {
  const size_t n = s.size();
  size_t i = lt + (end_tag ? 2 : 1);
  size_t len = 0;
  while (i < n) {
    char c = s[i];
    if (IsWs(c) || c == '/' || c == '>') break;
    if (len < kMaxTagName) name_[len++] = AsciiLower(c);
    ++i;
  }
  attrs_.clear();
  tag_ = HtmlTag();
  tag_.name = std::string_view(name_, len);
  tag_.end_tag = end_tag;
  for (;;) {
    // Before attribute name: whitespace and stray '/' separate attributes.
    while (i < n && (IsWs(s[i]) || s[i] == '/')) {
      if (s[i] == '/' && i + 1 < n && s[i + 1] == '>') tag_.self_closing = true;
      ++i;
    }
    if (i >= n) return npos;
    if (s[i] == '>') {
      ++i;
      break;
    }
    size_t name_start = i++;  // a leading '=' belongs to the name
    while (i < n && !IsWs(s[i]) && s[i] != '/' && s[i] != '>' && s[i] != '=')
      ++i;
    std::string_view name = s.substr(name_start, i - name_start);
    std::string_view value;
    size_t j = i;
    while (j < n && IsWs(s[j])) ++j;
    if (j < n && s[j] == '=') {
      i = j + 1;
      while (i < n && IsWs(s[i])) ++i;
      if (i >= n) return npos;
      if (s[i] == '"' || s[i] == '\'') {
        size_t close = Find(s, s[i], i + 1);
        if (close == npos) return npos;
        value = s.substr(i + 1, close - i - 1);
        i = close + 1;
      } else if (s[i] != '>') {
        size_t start = i;
        while (i < n && !IsWs(s[i]) && s[i] != '>') ++i;
        value = s.substr(start, i - start);
      }
    } else {
      i = j;
    }
    if (!end_tag && attrs_.size() < kMaxAttributes)
      attrs_.push_back({name, value});
  }
  tag_.attributes = attrs_.data();
  tag_.num_attributes = attrs_.size();
  return i;
}

void HtmlTokenizer::Run(std::string_view s, HtmlTokenHandler* handler) {
  const size_t n = s.size();
  size_t i = 0, text_start = 0;
  auto flush = [&](size_t end) {
    if (end > text_start)
      handler->OnText(s.substr(text_start, end - text_start));
  };
  while (i < n) {
    size_t lt = Find(s, '<', i);
    if (lt == npos || lt + 1 >= n) break;
    char c = s[lt + 1];
    if (IsAsciiAlpha(c) ||
        (c == '/' && lt + 2 < n && IsAsciiAlpha(s[lt + 2]))) {
      flush(lt);
      size_t after = ParseTag(s, lt, c == '/');
      if (after == npos) return;  // EOF inside a tag: dropped
      i = text_start = after;
      if (!handler->OnTag(tag_)) return;
      if (tag_.end_tag) continue;
      Content content = ContentOf(tag_.name);
      if (content == Content::kNormal) continue;
      if (content == Content::kPlaintext) {
        flush(n);
        return;
      }
      std::string_view name = tag_.name;  // name_ stays valid until next tag
      size_t end = FindEndTag(s, i, name);
      if (end == npos) end = n;
      if (content == Content::kRcdata) flush(end);
      i = text_start = end;
    } else if (c == '/') {
      if (lt + 2 >= n) break;  // "</" at the end is text
      flush(lt);
      i = text_start = s[lt + 2] == '>' ? lt + 3 : BogusCommentEnd(s, lt + 2);
    } else if (c == '!') {
      flush(lt);
      i = text_start = s.substr(lt + 2, 2) == "--" ? CommentEnd(s, lt)
                                                   : BogusCommentEnd(s, lt + 2);
    } else if (c == '?') {
      flush(lt);
      i = text_start = BogusCommentEnd(s, lt + 2);
    } else {
      i = lt + 1;  // a literal '<'
    }
  }
  flush(n);
}

}  // namespace freshd::parse
