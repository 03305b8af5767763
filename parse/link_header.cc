#include "parse/link_header.h"

#include <algorithm>

namespace freshd::parse {
namespace {

bool IsLinkSpace(char c) { return c == ' ' || c == '\t'; }

char LinkLower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c;
}

bool LinkEqualsNoCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (LinkLower(a[i]) != LinkLower(b[i])) return false;
  }
  return true;
}

std::string_view TrimLink(std::string_view s) {
  while (!s.empty() && IsLinkSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && (IsLinkSpace(s.back()) || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Reads from `s[*i]` to the next `stop` outside a quoted string (a
// backslash escapes in quotes); *i ends on the stop or at the end.
void SkipToStop(std::string_view s, size_t* i, std::string_view stops) {
  bool quoted = false;
  for (; *i < s.size(); ++*i) {
    const char c = s[*i];
    if (quoted) {
      if (c == '\\') {
        ++*i;
      } else if (c == '"') {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (stops.find(c) != std::string_view::npos) {
      return;
    }
  }
}

// A parameter's value: a quoted string (unescaped) or a token.
std::string LinkParamValue(std::string_view v) {
  v = TrimLink(v);
  if (v.empty() || v.front() != '"') return std::string(v);
  std::string out;
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] == '\\' && i + 1 < v.size()) {
      out.push_back(v[++i]);
    } else if (v[i] == '"') {
      break;
    } else {
      out.push_back(v[i]);
    }
  }
  return out;
}

}  // namespace

bool LinkValue::HasRel(std::string_view rel) const {
  return std::find(rels.begin(), rels.end(), rel) != rels.end();
}

std::vector<LinkValue> ParseLinkHeader(std::string_view value) {
  std::vector<LinkValue> out;
  value = value.substr(0, kMaxLinkHeaderBytes);
  size_t i = 0;
  while (i < value.size() && out.size() < kMaxLinkValues) {
    while (i < value.size() && (IsLinkSpace(value[i]) || value[i] == ',')) ++i;
    if (i >= value.size()) break;
    if (value[i] != '<') {  // malformed: skip this link-value
      SkipToStop(value, &i, ",");
      continue;
    }
    const size_t close = value.find('>', i + 1);
    if (close == std::string_view::npos) break;
    LinkValue link;
    std::string_view target = TrimLink(value.substr(i + 1, close - i - 1));
    bool usable = !target.empty() && target.size() <= kMaxLinkTargetBytes;
    link.target = usable ? std::string(target) : std::string();
    i = close + 1;
    // Parameters up to the next comma outside quotes.
    while (i < value.size() && value[i] != ',') {
      while (i < value.size() && IsLinkSpace(value[i])) ++i;
      if (i >= value.size() || value[i] == ',') break;
      if (value[i] != ';') {  // junk after the target: skip the value
        usable = false;
        SkipToStop(value, &i, ",");
        break;
      }
      ++i;
      const size_t start = i;
      SkipToStop(value, &i, ";,");
      std::string_view param = value.substr(start, i - start);
      const size_t eq = param.find('=');
      std::string_view name = TrimLink(param.substr(0, eq));
      if (!LinkEqualsNoCase(name, "rel") || eq == std::string_view::npos)
        continue;
      // RFC 8288 §3.3: only the first rel parameter counts.
      if (!link.rels.empty()) continue;
      const std::string rels = LinkParamValue(param.substr(eq + 1));
      size_t p = 0;
      while (p < rels.size() && link.rels.size() < 16) {
        while (p < rels.size() && (IsLinkSpace(rels[p]) || rels[p] == '\n'))
          ++p;
        size_t e = p;
        while (e < rels.size() && !IsLinkSpace(rels[e]) && rels[e] != '\n') ++e;
        if (e > p) {
          std::string r = rels.substr(p, e - p);
          for (char& c : r) c = LinkLower(c);
          link.rels.push_back(std::move(r));
        }
        p = e;
      }
    }
    if (usable && !link.target.empty()) out.push_back(std::move(link));
  }
  return out;
}

std::vector<std::string_view> LinkHeaderValues(std::string_view raw_head) {
  std::vector<std::string_view> out;
  // The last response's head: after the last status line.
  size_t from = 0;
  for (size_t p = raw_head.find("HTTP/"); p != std::string_view::npos;
       p = raw_head.find("HTTP/", p + 1)) {
    if (p == 0 || raw_head[p - 1] == '\n') from = p;
  }
  size_t pos = from;
  while (pos < raw_head.size() && out.size() < kMaxLinkValues) {
    size_t end = raw_head.find('\n', pos);
    if (end == std::string_view::npos) end = raw_head.size();
    std::string_view line = raw_head.substr(pos, end - pos);
    pos = end + 1;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    if (!LinkEqualsNoCase(TrimLink(line.substr(0, colon)), "link")) continue;
    out.push_back(TrimLink(line.substr(colon + 1)));
  }
  return out;
}

}  // namespace freshd::parse
