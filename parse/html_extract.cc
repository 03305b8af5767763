#include "parse/html_extract.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_set>

#include "base/ascii.h"
#include "parse/charset.h"
#include "parse/html_entities.h"
#include "parse/html_text_sink.h"
#include "parse/html_tokenizer.h"
#include "parse/text_utf8.h"
#include "parse/url.h"

namespace freshd::parse {
namespace {

using namespace std::string_view_literals;

// Elements whose start and end separate blocks of text (the CSS display of
// these is block, list-item, table-* or a line break). Sorted.
constexpr std::array kBlockTags = {
    "address"sv,  "article"sv,    "aside"sv,    "blockquote"sv, "body"sv,
    "br"sv,       "caption"sv,    "center"sv,   "dd"sv,         "details"sv,
    "dialog"sv,   "dir"sv,        "div"sv,      "dl"sv,         "dt"sv,
    "fieldset"sv, "figcaption"sv, "figure"sv,   "footer"sv,     "form"sv,
    "frameset"sv, "h1"sv,         "h2"sv,       "h3"sv,         "h4"sv,
    "h5"sv,       "h6"sv,         "head"sv,     "header"sv,     "hgroup"sv,
    "hr"sv,       "html"sv,       "legend"sv,   "li"sv,         "main"sv,
    "menu"sv,     "nav"sv,        "ol"sv,       "option"sv,     "p"sv,
    "pre"sv,      "section"sv,    "select"sv,   "summary"sv,    "table"sv,
    "tbody"sv,    "td"sv,         "textarea"sv, "tfoot"sv,      "th"sv,
    "thead"sv,    "title"sv,      "tr"sv,       "ul"sv,
};

bool IsBlockTag(std::string_view name) {
  return std::binary_search(kBlockTags.begin(), kBlockTags.end(), name);
}

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

// Calls fn(token) for each whitespace/comma-separated token of `s`.
template <typename Fn>
void ForEachToken(std::string_view s, Fn fn) {
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (IsSpace(s[i]) || s[i] == ',')) ++i;
    size_t start = i;
    while (i < s.size() && !IsSpace(s[i]) && s[i] != ',') ++i;
    if (i > start) fn(s.substr(start, i - start));
  }
}

bool HasRelToken(std::string_view rel, std::string_view lower_token) {
  bool found = false;
  ForEachToken(rel, [&](std::string_view t) {
    if (EqualsAsciiLower(t, lower_token)) found = true;
  });
  return found;
}

// A <link type> naming a feed this crawler reads (parse/feed.h).
bool IsFeedType(std::string_view type) {
  type = type.substr(0, type.find(';'));
  while (!type.empty() && IsSpace(type.front())) type.remove_prefix(1);
  while (!type.empty() && IsSpace(type.back())) type.remove_suffix(1);
  return EqualsAsciiLower(type, "application/rss+xml") ||
         EqualsAsciiLower(type, "application/atom+xml");
}

struct RawLink {
  std::string href;  // references decoded, whitespace trimmed
  LinkKind kind;
  bool nofollow;
};

class Extractor : public HtmlTokenHandler {
 public:
  Extractor(const ExtractLimits& limits, ExtractedPage* page)
      : limits_(limits),
        page_(page),
        text_(&page->text, limits.max_text_bytes),
        title_(&page->title, limits.max_title_bytes) {}

  void OnText(std::string_view raw) override {
    if (template_depth_ > 0) return;
    if (in_title_) {
      if (!title_done_) title_.Append(raw);
      return;
    }
    text_.Append(raw);
  }

  bool OnTag(const HtmlTag& tag) override {
    std::string_view name = tag.name;
    if (name == "template") {
      if (!tag.end_tag) {
        ++template_depth_;
      } else if (tag.end_tag && template_depth_ > 0) {
        --template_depth_;
      }
      return true;
    }
    if (name == "title") {
      in_title_ = !tag.end_tag;
      if (tag.end_tag && !page_->title.empty()) title_done_ = true;
    }
    if (template_depth_ > 0) return true;
    if (IsBlockTag(name)) text_.Block();
    if (tag.end_tag) return true;
    switch (name.size()) {
      case 1:
        if (name == "a") AddAnchor(tag);
        break;
      case 4:
        if (name == "area") AddAnchor(tag);
        if (name == "link") AddLinkElement(tag);
        if (name == "meta") OnMeta(tag);
        if (name == "base") OnBase(tag);
        break;
      case 5:
        if (name == "frame") AddHref(tag, "src", LinkKind::kFrame, false);
        break;
      case 6:
        if (name == "iframe") AddHref(tag, "src", LinkKind::kFrame, false);
        break;
    }
    return true;
  }

  void Finish() {
    if (text_.truncated() || title_.truncated()) page_->truncated = true;
  }

  std::vector<RawLink> links;
  std::string base_href;
  bool have_base = false;
  bool links_dropped = false;

 private:
  void AddAnchor(const HtmlTag& tag) {
    const HtmlAttribute* rel = tag.Find("rel");
    AddHref(tag, "href", LinkKind::kAnchor,
            rel && HasRelToken(rel->value, "nofollow"));
  }

  void AddLinkElement(const HtmlTag& tag) {
    const HtmlAttribute* rel = tag.Find("rel");
    if (!rel) return;
    if (HasRelToken(rel->value, "canonical")) {
      AddHref(tag, "href", LinkKind::kCanonical, false);
    } else if (const HtmlAttribute* type = tag.Find("type");
               type && IsFeedType(type->value) &&
               HasRelToken(rel->value, "alternate")) {
      if (raw_feeds_ >= 4 * limits_.max_feeds) return;
      ++raw_feeds_;
      AddHref(tag, "href", LinkKind::kFeed, false);
    } else if (HasRelToken(rel->value, "alternate") ||
               HasRelToken(rel->value, "next") ||
               HasRelToken(rel->value, "prev")) {
      AddHref(tag, "href", LinkKind::kAlternate, false);
    }
  }

  void OnMeta(const HtmlTag& tag) {
    const HtmlAttribute* name = tag.Find("name");
    const HtmlAttribute* content = tag.Find("content");
    if (!name || !content || !EqualsAsciiLower(name->value, "robots")) return;
    std::string decoded;
    AppendDecoded(content->value, /*in_attribute=*/true, &decoded);
    RobotsDirectives d = ParseRobotsDirectives(decoded);
    page_->noindex |= d.noindex;
    page_->nofollow |= d.nofollow;
  }

  void OnBase(const HtmlTag& tag) {
    const HtmlAttribute* href = tag.Find("href");
    if (have_base || !href) return;
    have_base = true;  // only the first <base href> counts
    base_href = DecodeUrlAttribute(href->value);
  }

  std::string DecodeUrlAttribute(std::string_view raw) {
    std::string out;
    AppendDecoded(raw.substr(0, limits_.max_url_bytes + 1), true, &out);
    size_t b = 0, e = out.size();
    while (b < e && IsSpace(out[b])) ++b;
    while (e > b && IsSpace(out[e - 1])) --e;
    return out.substr(b, e - b);
  }

  void AddHref(const HtmlTag& tag, std::string_view attr, LinkKind kind,
               bool nofollow) {
    const HtmlAttribute* a = tag.Find(attr);
    if (!a) return;
    if (links.size() >= 4 * limits_.max_links) {
      links_dropped = true;
      return;
    }
    std::string href = DecodeUrlAttribute(a->value);
    // Empty and fragment-only references name this same document.
    if (href.empty() || href[0] == '#' || href.size() > limits_.max_url_bytes)
      return;
    links.push_back({std::move(href), kind, nofollow});
  }

  const ExtractLimits& limits_;
  ExtractedPage* page_;
  HtmlTextSink text_;
  HtmlTextSink title_;
  size_t template_depth_ = 0;  // open <template>s
  size_t raw_feeds_ = 0;       // feed links before resolution
  bool in_title_ = false;
  bool title_done_ = false;
};

// Resolves, de-duplicates and caps the raw links into page->links.
void ResolveLinks(const std::vector<RawLink>& raw, const ExtractLimits& limits,
                  ExtractedPage* page) {
  std::unordered_set<std::string> seen_raw, seen;
  size_t feeds = 0;
  std::string key;
  for (const RawLink& link : raw) {
    key.assign(1, static_cast<char>('0' + static_cast<int>(link.kind)));
    key += link.href;
    if (!seen_raw.insert(key).second) continue;
    Result<std::string> url = page->base_url.empty()
                                  ? NormalizeUrl(link.href)
                                  : ResolveUrl(page->base_url, link.href);
    if (!url.ok()) continue;  // javascript:, mailto:, malformed...
    key.resize(1);
    key += *url;
    if (!seen.insert(key).second) continue;
    if (link.kind == LinkKind::kFeed && ++feeds > limits.max_feeds) continue;
    if (page->links.size() >= limits.max_links) {
      page->truncated = true;
      break;
    }
    if (link.kind == LinkKind::kCanonical && page->canonical.empty())
      page->canonical = *url;
    page->links.push_back({std::move(url).value(), link.kind, link.nofollow});
  }
}

}  // namespace

const char* LinkKindName(LinkKind kind) {
  switch (kind) {
    case LinkKind::kAnchor:
      return "a";
    case LinkKind::kAlternate:
      return "alternate";
    case LinkKind::kCanonical:
      return "canonical";
    case LinkKind::kFrame:
      return "frame";
    case LinkKind::kFeed:
      return "feed";
  }
  return "?";
}

RobotsDirectives ParseRobotsDirectives(std::string_view value) {
  RobotsDirectives d;
  bool scoped = false;  // inside a "otheragent:" section
  ForEachToken(value, [&](std::string_view t) {
    size_t colon = t.find(':');
    if (colon != std::string_view::npos) {
      std::string lower;
      for (char c : t.substr(0, colon)) lower.push_back(AsciiLower(c));
      bool agent = !lower.empty() && lower[0] >= 'a' && lower[0] <= 'z';
      if (agent && lower != "unavailable_after" && lower != "max-snippet" &&
          lower != "max-image-preview" && lower != "max-video-preview")
        scoped = true;  // "agent: ..." applies to another crawler
      return;
    }
    if (scoped) return;
    if (EqualsAsciiLower(t, "noindex")) {
      d.noindex = true;
    } else if (EqualsAsciiLower(t, "nofollow")) {
      d.nofollow = true;
    } else if (EqualsAsciiLower(t, "none")) {
      d.noindex = d.nofollow = true;
    }
  });
  return d;
}

Result<ExtractedPage> ExtractHtml(std::string_view body,
                                  std::string_view content_type,
                                  std::string_view url,
                                  const ExtractLimits& limits,
                                  std::string_view x_robots_tag) {
  ExtractedPage page;
  if (!url.empty()) {
    Result<std::string> base = NormalizeUrl(url);
    if (!base.ok())
      return Status::InvalidArgument("page URL: " + base.status().message());
    page.base_url = std::move(base).value();
  }
  if (body.size() > limits.max_input_bytes) {
    body = body.substr(0, limits.max_input_bytes);
    page.truncated = true;
    // Drop a UTF-8 sequence cut in two by the limit (at most 3 bytes), so
    // that a UTF-8 page is still recognized as one.
    size_t valid = ValidUtf8Prefix(body);
    if (body.size() - valid <= 3) body = body.substr(0, valid);
  }
  Charset charset = SniffCharset(body, content_type);
  page.charset = charset.name;
  // Valid UTF-8 (the common case) is tokenized in place; anything else is
  // decoded into a UTF-8 copy first.
  std::string decoded;
  std::string_view html = body.substr(std::min(charset.bom_bytes, body.size()));
  if (charset.name != "utf-8" || ValidUtf8Prefix(html) != html.size()) {
    bool fallback = false;
    decoded = DecodeToUtf8(body, charset, &fallback);
    if (fallback) page.charset = "windows-1252";
    html = decoded;
  }

  // Visible text is typically a quarter to a third of the markup; one
  // reservation avoids repeated regrowth (bounded by the output cap).
  page.text.reserve(std::min(html.size() / 3, limits.max_text_bytes));
  Extractor extractor(limits, &page);
  HtmlTokenizer tokenizer;
  tokenizer.Run(html, &extractor);
  extractor.Finish();
  if (extractor.links_dropped) page.truncated = true;

  if (extractor.have_base && !extractor.base_href.empty()) {
    Result<std::string> base =
        page.base_url.empty() ? NormalizeUrl(extractor.base_href)
                              : ResolveUrl(page.base_url, extractor.base_href);
    if (base.ok()) page.base_url = std::move(base).value();
  }
  ResolveLinks(extractor.links, limits, &page);

  RobotsDirectives header = ParseRobotsDirectives(x_robots_tag);
  page.noindex |= header.noindex;
  page.nofollow |= header.nofollow;
  return page;
}

}  // namespace freshd::parse
