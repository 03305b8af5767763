#include "parse/charset.h"

#include <iconv.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/ascii.h"
#include "parse/html_tokenizer.h"
#include "parse/text_utf8.h"

namespace freshd::parse {
namespace {

constexpr size_t kMaxLabel = 40;

struct LabelEntry {
  const char* label;
  const char* name;
  const char* iconv;
};

// WHATWG Encoding Standard labels for the encodings seen on the web; any
// other well-formed label is tried with iconv under its own name.
constexpr LabelEntry kLabels[] = {
    {"utf-8", "utf-8", ""},
    {"utf8", "utf-8", ""},
    {"unicode-1-1-utf-8", "utf-8", ""},
    {"windows-1252", "windows-1252", ""},
    {"cp1252", "windows-1252", ""},
    {"x-cp1252", "windows-1252", ""},
    {"iso-8859-1", "windows-1252", ""},
    {"iso8859-1", "windows-1252", ""},
    {"iso_8859-1", "windows-1252", ""},
    {"latin1", "windows-1252", ""},
    {"l1", "windows-1252", ""},
    {"us-ascii", "windows-1252", ""},
    {"ascii", "windows-1252", ""},
    {"iso-ir-100", "windows-1252", ""},
    {"cp819", "windows-1252", ""},
    {"ibm819", "windows-1252", ""},
    {"csisolatin1", "windows-1252", ""},
    {"x-user-defined", "windows-1252", ""},
    {"shift_jis", "shift_jis", "CP932"},
    {"shift-jis", "shift_jis", "CP932"},
    {"sjis", "shift_jis", "CP932"},
    {"x-sjis", "shift_jis", "CP932"},
    {"ms_kanji", "shift_jis", "CP932"},
    {"ms932", "shift_jis", "CP932"},
    {"windows-31j", "shift_jis", "CP932"},
    {"csshiftjis", "shift_jis", "CP932"},
    {"euc-jp", "euc-jp", "EUC-JP"},
    {"iso-2022-jp", "iso-2022-jp", "ISO-2022-JP"},
    {"gb2312", "gbk", "GBK"},
    {"gbk", "gbk", "GBK"},
    {"x-gbk", "gbk", "GBK"},
    {"chinese", "gbk", "GBK"},
    {"gb18030", "gb18030", "GB18030"},
    {"big5", "big5", "BIG5-HKSCS"},
    {"big5-hkscs", "big5", "BIG5-HKSCS"},
    {"euc-kr", "euc-kr", "CP949"},
    {"ks_c_5601-1987", "euc-kr", "CP949"},
    {"windows-949", "euc-kr", "CP949"},
    {"koi8-r", "koi8-r", "KOI8-R"},
    {"koi8-u", "koi8-u", "KOI8-U"},
    {"utf-16", "utf-16le", "UTF-16LE"},
    {"utf-16le", "utf-16le", "UTF-16LE"},
    {"utf-16be", "utf-16be", "UTF-16BE"},
};

// windows-1252 bytes 0x80..0x9F; the five undefined ones map to C1 controls
// as in the Encoding Standard.
constexpr char16_t kCp1252High[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
    0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008D, 0x017D, 0x008F,
    0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
    0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

std::string_view Trim(std::string_view s) {
  auto junk = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
           c == '"' || c == '\'';
  };
  while (!s.empty() && junk(s.front())) s.remove_prefix(1);
  while (!s.empty() && junk(s.back())) s.remove_suffix(1);
  return s;
}

// Finds "charset" (case-insensitive) followed by optional spaces and '=' and
// returns the value up to ';', whitespace or a quote (HTML §2.4.3).
std::string_view CharsetFromMetaContent(std::string_view s) {
  for (size_t i = 0; i + 7 <= s.size(); ++i) {
    bool match = true;
    for (size_t k = 0; k < 7 && match; ++k)
      match = AsciiLower(s[i + k]) == "charset"[k];
    if (!match) continue;
    size_t j = i + 7;
    while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
    if (j >= s.size() || s[j] != '=') continue;
    ++j;
    while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
    char quote = (j < s.size() && (s[j] == '"' || s[j] == '\'')) ? s[j++] : 0;
    size_t start = j;
    while (j < s.size() && s[j] != ';' && s[j] != quote &&
           (quote || (s[j] != ' ' && s[j] != '\t')))
      ++j;
    return s.substr(start, j - start);
  }
  return {};
}

// Finds the first <meta charset> / <meta http-equiv=content-type content>.
class MetaPrescan : public HtmlTokenHandler {
 public:
  void OnText(std::string_view) override {}
  bool OnTag(const HtmlTag& tag) override {
    if (tag.end_tag || tag.name != "meta") return true;
    if (const HtmlAttribute* cs = tag.Find("charset")) {
      label_ = cs->value;
    } else if (const HtmlAttribute* eq = tag.Find("http-equiv")) {
      const HtmlAttribute* content = tag.Find("content");
      std::string_view v = Trim(eq->value);
      bool is_ct = v.size() == 12;
      for (size_t i = 0; is_ct && i < 12; ++i)
        is_ct = AsciiLower(v[i]) == "content-type"[i];
      if (is_ct && content) label_ = CharsetFromMetaContent(content->value);
    }
    Charset c;
    if (!label_.empty() && LookupCharset(label_, &c)) {
      found_ = true;
      // A meta tag cannot truthfully declare UTF-16 (HTML §13.2.3.2).
      if (c.name == "utf-16le" || c.name == "utf-16be")
        LookupCharset("utf-8", &c);
      result_ = c;
      return false;
    }
    label_ = {};
    return true;
  }
  bool found_ = false;
  Charset result_;

 private:
  std::string_view label_;
};

void DecodeCp1252(std::string_view s, std::string* out) {
  out->reserve(out->size() + s.size() + s.size() / 8);
  for (unsigned char b : s) {
    if (b < 0x80) {
      out->push_back(static_cast<char>(b));
    } else {
      AppendUtf8(b < 0xA0 ? kCp1252High[b - 0x80] : b, out);
    }
  }
}

bool DecodeIconv(std::string_view s, const char* from, std::string* out) {
  iconv_t cd = iconv_open("UTF-8", from);
  if (cd == reinterpret_cast<iconv_t>(-1)) return false;
  char* in = const_cast<char*>(s.data());
  size_t in_left = s.size();
  char buf[8192];
  while (in_left > 0) {
    char* o = buf;
    size_t o_left = sizeof(buf);
    size_t r = iconv(cd, &in, &in_left, &o, &o_left);
    out->append(buf, o - buf);
    if (r != static_cast<size_t>(-1)) continue;
    if (errno == E2BIG) continue;
    // EILSEQ (invalid) or EINVAL (truncated at the end): one U+FFFD per
    // bad byte, then resynchronize.
    AppendUtf8(kReplacementChar, out);
    ++in, --in_left;
    iconv(cd, nullptr, nullptr, nullptr, nullptr);
  }
  // Flush a pending shift state (ISO-2022-JP).
  char* o = buf;
  size_t o_left = sizeof(buf);
  iconv(cd, nullptr, nullptr, &o, &o_left);
  out->append(buf, o - buf);
  iconv_close(cd);
  return true;
}

}  // namespace

bool LookupCharset(std::string_view label, Charset* out) {
  label = Trim(label);
  if (label.empty() || label.size() > kMaxLabel) return false;
  std::string lower;
  for (char c : label) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
              c == ':';
    if (!ok) return false;
    lower.push_back(AsciiLower(c));
  }
  for (const LabelEntry& e : kLabels) {
    if (lower == e.label) {
      *out = Charset{e.name, e.iconv, 0};
      return true;
    }
  }
  // Some other label (iso-8859-2, windows-1251, ...): usable if iconv knows it.
  std::string upper;
  for (char c : lower) upper.push_back((c >= 'a' && c <= 'z') ? c - 32 : c);
  iconv_t cd = iconv_open("UTF-8", upper.c_str());
  if (cd == reinterpret_cast<iconv_t>(-1)) return false;
  iconv_close(cd);
  *out = Charset{lower, upper, 0};
  return true;
}

std::string_view CharsetParam(std::string_view content_type) {
  size_t semi = content_type.find(';');
  if (semi == std::string_view::npos) return {};
  return Trim(CharsetFromMetaContent(content_type.substr(semi)));
}

Charset SniffCharset(std::string_view body, std::string_view content_type) {
  Charset c;
  if (body.substr(0, 3) == "\xEF\xBB\xBF") {
    LookupCharset("utf-8", &c);
    c.bom_bytes = 3;
    return c;
  }
  if (body.substr(0, 2) == "\xFE\xFF" || body.substr(0, 2) == "\xFF\xFE") {
    LookupCharset(body[0] == '\xFE' ? "utf-16be" : "utf-16le", &c);
    c.bom_bytes = 2;
    return c;
  }
  if (LookupCharset(CharsetParam(content_type), &c)) return c;
  MetaPrescan prescan;
  HtmlTokenizer tokenizer;
  tokenizer.Run(body.substr(0, kPrescanBytes), &prescan);
  if (prescan.found_) return prescan.result_;
  bool utf8 = ValidUtf8Prefix(body) == body.size();
  LookupCharset(utf8 ? "utf-8" : "windows-1252", &c);
  return c;
}

std::string DecodeToUtf8(std::string_view body, const Charset& charset,
                         bool* fallback) {
  if (fallback) *fallback = false;
  body.remove_prefix(std::min(charset.bom_bytes, body.size()));
  std::string out;
  if (charset.name == "utf-8") return ScrubUtf8(body);
  if (!charset.iconv.empty() && DecodeIconv(body, charset.iconv.c_str(), &out))
    return out;
  if (fallback && !charset.iconv.empty()) *fallback = true;
  out.clear();
  DecodeCp1252(body, &out);
  return out;
}

}  // namespace freshd::parse
