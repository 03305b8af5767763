// The XML sitemap formats, read as a stream by libxml2's SAX2 push parser
// (see sitemap.h for the safety rules). SAX rather than xmlTextReader: the
// reader returns nodes one step behind the parser and drops them all when
// a truncated file ends in an error; SAX hands over every event as soon as
// it is parsed, so a cut file yields everything before the cut. Element names
// are matched by local name, case-insensitively, whatever their namespace: a
// sitemap with a wrong or missing namespace is still read (crawler-commons'
// lenient mode).

#include <libxml/parser.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>

#include "parse/sitemap_internal.h"
#include "parse/url.h"
#include "parse/w3c_datetime.h"

namespace freshd::parse::internal {
namespace {

// Longest text kept for one field; longer values are invalid anyway.
constexpr size_t kMaxFieldBytes = 2 * kMaxUrlLength;

// Never XML_PARSE_NOENT (entity substitution), XML_PARSE_DTDLOAD,
// XML_PARSE_DTDATTR, XML_PARSE_XINCLUDE or XML_PARSE_HUGE (which would lift
// libxml2's depth and text-size limits).
constexpr int kParserOptions = XML_PARSE_NONET | XML_PARSE_NOCDATA;

bool NameIs(const xmlChar* name, std::string_view want) {
  if (name == nullptr) return false;
  std::string_view n(reinterpret_cast<const char*>(name));
  if (n.size() != want.size()) return false;
  for (size_t i = 0; i < n.size(); ++i) {
    char c = n[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + ('a' - 'A'));
    if (c != want[i]) return false;
  }
  return true;
}

std::optional<SitemapFormat> FormatOfRoot(const xmlChar* name) {
  if (NameIs(name, "urlset")) return SitemapFormat::kUrlset;
  if (NameIs(name, "sitemapindex")) return SitemapFormat::kSitemapIndex;
  if (NameIs(name, "rss") || NameIs(name, "rdf")) return SitemapFormat::kRss;
  if (NameIs(name, "feed")) return SitemapFormat::kAtom;
  return std::nullopt;
}

std::string_view ContainerName(SitemapFormat f) {
  switch (f) {
    case SitemapFormat::kUrlset:
      return "url";
    case SitemapFormat::kSitemapIndex:
      return "sitemap";
    case SitemapFormat::kRss:
      return "item";
    case SitemapFormat::kAtom:
      return "entry";
    case SitemapFormat::kText:
      break;
  }
  return "";
}

enum class Field { kNone, kLoc, kDate, kPublished, kGuid };

std::optional<int64_t> ParseDate(std::string_view text, bool rss) {
  std::string_view t = TrimUnicodeSpace(text);
  if (rss) {
    if (auto v = ParseRfc822Date(t)) return v;
    return ParseW3cDatetime(t);
  }
  if (auto v = ParseW3cDatetime(t)) return v;
  return ParseRfc822Date(t);
}

// The entry being read: one <url>, <sitemap>, <item> or <entry>.
struct Pending {
  std::string loc;
  bool has_loc = false;
  std::optional<int64_t> lastmod;
  std::optional<int64_t> published;  // Atom <published>: used without <updated>
  std::string guid;
  std::string about;      // RSS 1.0 <item rdf:about>
  std::string bare_text;  // text directly inside <sitemap> (malformed)
};

class XmlSitemapReader {
 public:
  XmlSitemapReader(const SitemapOptions& options, SitemapResult* result)
      : sink_(options, result), result_(result) {}

  // Parses `data` with a SAX2 push parser. Returns ok or the error that
  // ended the parse; `*fatal` is set when the input is not a sitemap.
  Status Run(std::string_view data, bool* fatal);

 private:
  static void OnStart(void* ctx, const xmlChar* localname,
                      const xmlChar* /*prefix*/, const xmlChar* /*uri*/,
                      int /*nb_namespaces*/, const xmlChar** /*namespaces*/,
                      int nb_attributes, int /*nb_defaulted*/,
                      const xmlChar** attributes) {
    auto* self = static_cast<XmlSitemapReader*>(ctx);
    self->OnElement(localname, nb_attributes, attributes);
    ++self->depth_;
  }
  static void OnEnd(void* ctx, const xmlChar* /*localname*/,
                    const xmlChar* /*prefix*/, const xmlChar* /*uri*/) {
    auto* self = static_cast<XmlSitemapReader*>(ctx);
    --self->depth_;
    if (!self->OnEndElement(self->depth_)) self->Stop();
  }
  static void OnChars(void* ctx, const xmlChar* ch, int len) {
    static_cast<XmlSitemapReader*>(ctx)->OnText(
        std::string_view(reinterpret_cast<const char*>(ch), len));
  }
  // A DOCTYPE: internal entities are how expansion bombs and XXE start,
  // and a sitemap never needs a DTD, so none is accepted. Called before
  // the internal subset is read.
  static void OnDoctype(void* ctx, const xmlChar*, const xmlChar*,
                        const xmlChar*) {
    auto* self = static_cast<XmlSitemapReader*>(ctx);
    self->refused_doctype_ = true;
    self->Stop();
  }
  static xmlEntityPtr OnGetEntity(void*, const xmlChar*) {
    return nullptr;  // only the predefined entities exist
  }
  static void OnError(void* ctx, xmlErrorPtr error) {
    auto* self = static_cast<XmlSitemapReader*>(ctx);
    if (error == nullptr || error->level < XML_ERR_ERROR ||
        !self->first_error_.empty() || error->code == XML_ERR_USER_STOP) {
      return;
    }
    std::string msg = error->message ? error->message : "XML error";
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' '))
      msg.pop_back();
    self->first_error_ = "line " + std::to_string(error->line) + ": " + msg;
  }

  void Stop() {
    stopped_ = true;
    if (ctxt_ != nullptr) xmlStopParser(ctxt_);
  }
  void OnElement(const xmlChar* name, int nb_attributes,
                 const xmlChar** attributes);
  // A feed-level <link rel=... href=...> (Atom's, or RSS's atom:link):
  // WebSub discovery's hub and self links (W3C WebSub §4), bounded.
  void NoteFeedLink(int nb_attributes, const xmlChar** attributes) {
    std::optional<std::string_view> rel, href;
    for (int i = 0; i < nb_attributes; ++i) {
      const xmlChar** a = attributes + 5 * i;
      std::string_view value(reinterpret_cast<const char*>(a[3]),
                             static_cast<size_t>(a[4] - a[3]));
      if (NameIs(a[0], "rel")) rel = value;
      if (NameIs(a[0], "href")) href = value;
    }
    if (!rel || !href) return;
    std::string_view target = TrimUnicodeSpace(*href);
    if (target.empty() || target.size() > kMaxUrlLength) return;
    // rel may list several space-separated types (RFC 8288 style).
    std::string_view r = *rel;
    while (!r.empty()) {
      const size_t sp = r.find_first_of(" \t\r\n");
      std::string_view type = r.substr(0, sp);
      r = sp == std::string_view::npos ? std::string_view() : r.substr(sp + 1);
      if (type.empty()) continue;
      std::string lower(type);
      for (char& c : lower) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + ('a' - 'A'));
      }
      if (lower == "hub" && result_->hub_links.size() < kMaxFeedHubLinks) {
        result_->hub_links.emplace_back(target);
      } else if (lower == "self" && result_->self_link.empty()) {
        result_->self_link = std::string(target);
      }
    }
  }
  bool OnEndElement(int depth);
  void OnText(std::string_view text) {
    if (stopped_) return;
    if (field_ != Field::kNone) {
      AppendText(&field_text_, text);
    } else if (container_depth_ >= 0 && depth_ == container_depth_ + 1) {
      AppendText(&pending_.bare_text, text);
    }
  }
  static void AppendText(std::string* to, std::string_view text) {
    if (to->size() >= kMaxFieldBytes) return;
    to->append(text.substr(0, kMaxFieldBytes - to->size()));
  }
  // Emits the pending entry if it has a loc; false when max_urls stops us.
  bool Flush() {
    bool keep_going = true;
    if (!pending_.lastmod) pending_.lastmod = pending_.published;
    if (!pending_.has_loc && format_ == SitemapFormat::kRss &&
        !pending_.about.empty()) {
      pending_.loc = pending_.about;  // RSS 1.0: the item's resource URI
      pending_.has_loc = true;
    }
    if (!pending_.has_loc && format_ == SitemapFormat::kRss &&
        !pending_.guid.empty()) {
      pending_.loc = pending_.guid;  // a guid is often the permalink
      pending_.has_loc = true;
    }
    if (!pending_.has_loc && format_ == SitemapFormat::kSitemapIndex &&
        !TrimUnicodeSpace(pending_.bare_text).empty()) {
      pending_.loc = pending_.bare_text;  // <sitemap>URL</sitemap>
      pending_.has_loc = true;
    }
    if (pending_.has_loc) {
      keep_going = sink_.Add(pending_.loc, pending_.lastmod,
                             format_ == SitemapFormat::kSitemapIndex
                                 ? SitemapEntry::Kind::kSitemap
                                 : SitemapEntry::Kind::kUrl,
                             /*allow_relative=*/true);
    }
    pending_ = Pending{};
    return keep_going;
  }

  EntrySink sink_;
  SitemapResult* result_;
  xmlParserCtxtPtr ctxt_ = nullptr;  // owned by Run
  bool stopped_ = false;
  bool refused_doctype_ = false;
  bool unknown_root_ = false;
  std::string root_name_;
  std::string first_error_;
  SitemapFormat format_ = SitemapFormat::kUrlset;
  bool root_seen_ = false;
  int depth_ = 0;             // depth of the next element to start
  int container_depth_ = -1;  // depth of the open entry element, or -1
  Field field_ = Field::kNone;
  int field_depth_ = -1;
  std::string field_text_;
  Pending pending_;
};

Status XmlSitemapReader::Run(std::string_view data, bool* fatal) {
  xmlSAXHandler sax{};
  sax.initialized = XML_SAX2_MAGIC;
  sax.startElementNs = OnStart;
  sax.endElementNs = OnEnd;
  sax.characters = OnChars;
  sax.cdataBlock = OnChars;
  sax.ignorableWhitespace = OnChars;
  sax.internalSubset = OnDoctype;
  sax.externalSubset = OnDoctype;
  sax.getEntity = OnGetEntity;
  sax.serror = OnError;
  // The first bytes let libxml2 detect the encoding (UTF-16, ...).
  const int head = static_cast<int>(std::min<size_t>(data.size(), 4));
  ctxt_ = xmlCreatePushParserCtxt(&sax, this, data.data(), head, nullptr);
  if (ctxt_ == nullptr) return Status::Internal("xmlCreatePushParserCtxt");
  xmlCtxtUseOptions(ctxt_, kParserOptions);
  // Feed in slices so that a stop (limit, DOCTYPE) takes effect early.
  constexpr size_t kSlice = 64 * 1024;
  size_t pos = static_cast<size_t>(head);
  int rc = 0;
  do {
    size_t n = std::min(kSlice, data.size() - pos);
    bool last = pos + n == data.size();
    rc = xmlParseChunk(ctxt_, data.data() + pos, static_cast<int>(n), last);
    pos += n;
  } while (rc == 0 && !stopped_ && pos < data.size());
  bool well_formed = rc == 0 && ctxt_->wellFormed;
  xmlFreeParserCtxt(ctxt_);
  ctxt_ = nullptr;

  if (refused_doctype_) {
    *fatal = true;
    return Status::InvalidArgument(
        "not a sitemap: DOCTYPE declarations are refused");
  }
  if (unknown_root_) {
    *fatal = true;
    return Status::InvalidArgument("not a sitemap: unknown root element <" +
                                   root_name_ + ">");
  }
  if (stopped_) return result_->status;  // max_urls reached
  if (well_formed && root_seen_) return Status::OK();
  // Keep the open entry only if its <loc> was closed: a loc cut by the end
  // of input may be a cut URL.
  if (container_depth_ >= 0 && pending_.has_loc) Flush();
  *fatal = !root_seen_;
  return Status::Corruption(
      "malformed or truncated XML" +
      (first_error_.empty() ? std::string() : ": " + first_error_));
}

void XmlSitemapReader::OnElement(const xmlChar* name, int nb_attributes,
                                 const xmlChar** attributes) {
  if (stopped_) return;
  const int depth = depth_;
  if (!root_seen_) {
    auto format = FormatOfRoot(name);
    root_seen_ = true;
    if (!format) {
      unknown_root_ = true;
      root_name_ =
          std::string(reinterpret_cast<const char*>(name)).substr(0, 64);
      Stop();
      return;
    }
    format_ = *format;
    result_->format = format_;
    return;
  }
  if (field_ != Field::kNone) return;  // markup inside <loc>: text only
  if (container_depth_ < 0 && depth <= 2 && NameIs(name, "link") &&
      (format_ == SitemapFormat::kAtom || format_ == SitemapFormat::kRss)) {
    NoteFeedLink(nb_attributes, attributes);  // <feed> or <channel> level
    return;
  }
  if (container_depth_ < 0) {
    if (NameIs(name, ContainerName(format_))) {
      container_depth_ = depth;
      pending_ = Pending{};
      if (format_ == SitemapFormat::kRss) {
        // RSS 1.0 (RDF): <item rdf:about="URI">. Attributes come as
        // 5-tuples (localname, prefix, URI, value begin, value end).
        for (int i = 0; i < nb_attributes; ++i) {
          const xmlChar** a = attributes + 5 * i;
          if (!NameIs(a[0], "about")) continue;
          size_t n = static_cast<size_t>(a[4] - a[3]);
          pending_.about.assign(reinterpret_cast<const char*>(a[3]),
                                std::min(n, kMaxFieldBytes));
        }
      }
    }
    return;
  }
  if (depth != container_depth_ + 1) return;  // e.g. <image:loc>
  Field field = Field::kNone;
  switch (format_) {
    case SitemapFormat::kUrlset:
    case SitemapFormat::kSitemapIndex:
      if (NameIs(name, "loc")) field = Field::kLoc;
      if (NameIs(name, "lastmod")) field = Field::kDate;
      break;
    case SitemapFormat::kRss:
      if (NameIs(name, "link")) field = Field::kLoc;
      if (NameIs(name, "guid")) field = Field::kGuid;
      if (NameIs(name, "pubdate") || NameIs(name, "date")) field = Field::kDate;
      break;
    case SitemapFormat::kAtom:
      if (NameIs(name, "link") && !pending_.has_loc) {
        // Atom: the entry's own page is the link with no rel or
        // rel="alternate". Attributes come as 5-tuples (localname, prefix,
        // URI, value begin, value end).
        std::optional<std::string_view> rel, href;
        for (int i = 0; i < nb_attributes; ++i) {
          const xmlChar** a = attributes + 5 * i;
          std::string_view value(reinterpret_cast<const char*>(a[3]),
                                 static_cast<size_t>(a[4] - a[3]));
          if (NameIs(a[0], "rel")) rel = value;
          if (NameIs(a[0], "href")) href = value;
        }
        if (href && (!rel || *rel == "alternate")) {
          pending_.loc = std::string(*href);
          pending_.has_loc = true;
        }
      }
      if (NameIs(name, "updated")) field = Field::kDate;
      if (NameIs(name, "published")) field = Field::kPublished;
      break;
    case SitemapFormat::kText:
      break;
  }
  if (field != Field::kNone) {
    field_ = field;
    field_depth_ = depth;
    field_text_.clear();
  }
}

bool XmlSitemapReader::OnEndElement(int depth) {
  if (stopped_) return true;
  if (field_ != Field::kNone) {
    if (depth != field_depth_) return true;
    Field done = field_;
    field_ = Field::kNone;
    bool rss = format_ == SitemapFormat::kRss;
    switch (done) {
      case Field::kLoc:
        if (pending_.has_loc && !rss) {
          // A second <loc> in one entry starts another entry; the lastmod
          // read so far belongs to the first one.
          if (!Flush()) return false;
        }
        if (!pending_.has_loc) {
          pending_.loc = field_text_;
          pending_.has_loc = true;
        }
        break;
      case Field::kDate:
        pending_.lastmod = ParseDate(field_text_, rss);
        break;
      case Field::kPublished:
        pending_.published = ParseDate(field_text_, rss);
        break;
      case Field::kGuid:
        pending_.guid = field_text_;
        break;
      case Field::kNone:
        break;
    }
    return true;
  }
  if (depth == container_depth_) {
    container_depth_ = -1;
    return Flush();
  }
  return true;
}

}  // namespace

Result<SitemapResult> ParseXmlSitemap(std::string_view data,
                                      const SitemapOptions& options) {
  static std::once_flag init_once;
  std::call_once(init_once, [] { xmlInitParser(); });
  SitemapResult result;
  XmlSitemapReader parser(options, &result);
  bool fatal = false;
  Status status = parser.Run(data, &fatal);
  if (fatal) {
    if (status.code() != Status::Code::kInvalidArgument)
      return Status::InvalidArgument("not a sitemap: " + status.message());
    return status;
  }
  if (result.status.ok()) result.status = status;
  return result;
}

}  // namespace freshd::parse::internal
