// Sitemap parsing (see sitemap.h): input preparation (gzip, BOM, format
// sniffing), the plain-text format, and the filters every entry passes.
// The XML formats are read by sitemap_xml.cc.

#include "parse/sitemap.h"

#include <algorithm>
#include <climits>

#include "parse/sitemap_gzip.h"
#include "parse/sitemap_internal.h"
#include "parse/url.h"

namespace freshd::parse {

const char* SitemapFormatName(SitemapFormat format) {
  switch (format) {
    case SitemapFormat::kUrlset:
      return "urlset";
    case SitemapFormat::kSitemapIndex:
      return "sitemapindex";
    case SitemapFormat::kText:
      return "text";
    case SitemapFormat::kRss:
      return "rss";
    case SitemapFormat::kAtom:
      return "atom";
  }
  return "unknown";
}

namespace internal {

// Length of a Unicode space (UTF-8) at the start of `s`, or 0.
size_t SpaceAt(std::string_view s) {
  if (s.empty()) return 0;
  unsigned char c0 = static_cast<unsigned char>(s[0]);
  if (c0 == ' ' || (c0 >= '\t' && c0 <= '\r')) return 1;
  if (s.size() >= 2 && c0 == 0xC2 &&
      (static_cast<unsigned char>(s[1]) == 0xA0 ||
       static_cast<unsigned char>(s[1]) == 0x85)) {
    return 2;  // U+00A0, U+0085
  }
  if (s.size() < 3) return 0;
  unsigned char c1 = static_cast<unsigned char>(s[1]);
  unsigned char c2 = static_cast<unsigned char>(s[2]);
  if (c0 == 0xE2 && c1 == 0x80 &&
      (c2 <= 0x8B || c2 == 0xA8 || c2 == 0xA9 || c2 == 0xAF)) {
    return 3;  // U+2000..U+200B, U+2028, U+2029, U+202F
  }
  if (c0 == 0xE2 && c1 == 0x81 && c2 == 0x9F) return 3;  // U+205F
  if (c0 == 0xE3 && c1 == 0x80 && c2 == 0x80) return 3;  // U+3000
  if (c0 == 0xE1 && c1 == 0x9A && c2 == 0x80) return 3;  // U+1680
  if (c0 == 0xEF && c1 == 0xBB && c2 == 0xBF) return 3;  // U+FEFF
  return 0;
}

std::string_view TrimUnicodeSpace(std::string_view s) {
  while (size_t n = SpaceAt(s)) s.remove_prefix(n);
  // Trailing: check the last 1..3 bytes.
  while (!s.empty()) {
    size_t n = 0;
    for (size_t len = 1; len <= 3 && len <= s.size(); ++len) {
      if (SpaceAt(s.substr(s.size() - len)) == len) {
        n = len;
        break;
      }
    }
    if (n == 0) break;
    s.remove_suffix(n);
  }
  return s;
}

EntrySink::EntrySink(const SitemapOptions& options, SitemapResult* result)
    : options_(options), result_(result) {
  if (!options.sitemap_url.empty()) {
    auto base = NormalizeUrl(options.sitemap_url);
    if (base.ok()) {
      base_ = *base;
      base_host_ = std::string(UrlHost(base_));
      std::string_view pq = UrlPathAndQuery(base_);
      std::string_view path = pq.substr(0, pq.find('?'));
      base_dir_ = std::string(path.substr(0, path.rfind('/') + 1));
    }
  }
}

bool EntrySink::Add(std::string_view raw_loc, std::optional<int64_t> lastmod,
                    SitemapEntry::Kind kind, bool allow_relative) {
  std::string_view loc = TrimUnicodeSpace(raw_loc);
  if (loc.empty()) {
    ++result_->dropped_invalid;
    return true;
  }
  auto url = (base_.empty() || !allow_relative) ? NormalizeUrl(loc)
                                                : ResolveUrl(base_, loc);
  if (!url.ok()) {
    ++result_->dropped_invalid;
    return true;
  }
  ++well_formed_;
  // The host and path rules hold for page URLs. Child sitemaps of an index
  // are not filtered (as crawler-commons): each child's URLs are checked
  // against the child's own location when it is parsed.
  if (!base_.empty() && kind == SitemapEntry::Kind::kUrl) {
    std::string_view host = UrlHost(*url);
    if (host != base_host_ &&
        !(options_.cross_host_allowed && options_.cross_host_allowed(host))) {
      ++result_->dropped_cross_host;
      return true;
    }
    if (options_.require_same_path_prefix &&
        (host != base_host_ || !UrlPathAndQuery(*url).starts_with(base_dir_))) {
      ++result_->dropped_outside_path;
      return true;
    }
  }
  if (result_->entries.size() >= options_.max_urls) {
    result_->status = Status::ResourceExhausted(
        "sitemap has more than " + std::to_string(options_.max_urls) +
        " entries; the rest were ignored");
    return false;
  }
  result_->entries.push_back(SitemapEntry{std::move(*url), lastmod, kind});
  return true;
}

}  // namespace internal

namespace {

// One URL per line (sitemaps.org "Text file"). Fails if the text holds no
// URL at all or looks binary: it is then not a sitemap.
Result<SitemapResult> ParseText(std::string_view text,
                                const SitemapOptions& options) {
  if (text.find('\0') != std::string_view::npos)
    return Status::InvalidArgument("not a sitemap: binary data");
  SitemapResult result;
  result.format = SitemapFormat::kText;
  internal::EntrySink sink(options, &result);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find_first_of("\r\n", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line =
        internal::TrimUnicodeSpace(text.substr(pos, end - pos));
    pos = end + 1;
    if (line.empty()) continue;
    // sitemaps.org: a text sitemap holds full URLs only.
    if (!sink.Add(line, std::nullopt, SitemapEntry::Kind::kUrl,
                  /*allow_relative=*/false)) {
      break;
    }
  }
  if (sink.well_formed() == 0) {
    return Status::InvalidArgument(
        "not a sitemap: no XML and no URL line found");
  }
  return result;
}

}  // namespace

Result<SitemapResult> ParseSitemap(std::string_view bytes,
                                   const SitemapOptions& options) {
  if (!options.sitemap_url.empty()) {
    auto base = NormalizeUrl(options.sitemap_url);
    if (!base.ok())
      return Status::InvalidArgument("bad sitemap URL: " +
                                     base.status().message());
  }
  const size_t max_bytes =
      std::min<size_t>(options.max_bytes, static_cast<size_t>(INT_MAX));
  Status input_status;
  std::string inflated;
  std::string_view data = bytes;
  if (LooksGzipped(bytes)) {
    input_status = GunzipBounded(bytes, max_bytes, &inflated);
    if (inflated.empty() && !input_status.ok())
      return Status::InvalidArgument("not a sitemap: " +
                                     input_status.message());
    data = inflated;
  } else if (data.size() > max_bytes) {
    data = data.substr(0, max_bytes);
    input_status = Status::ResourceExhausted("sitemap larger than " +
                                             std::to_string(max_bytes) +
                                             " bytes; only the start was read");
  }
  // A UTF-8 BOM and leading whitespace are tolerated (not well-formed XML,
  // but common).
  if (data.starts_with("\xEF\xBB\xBF")) data.remove_prefix(3);
  while (!data.empty() && (data[0] == ' ' || data[0] == '\t' ||
                           data[0] == '\r' || data[0] == '\n')) {
    data.remove_prefix(1);
  }
  if (data.empty()) return Status::InvalidArgument("not a sitemap: empty");

  bool is_xml = data[0] == '<' || data.starts_with("\xFF\xFE") ||
                data.starts_with("\xFE\xFF");
  Result<SitemapResult> result = is_xml
                                     ? internal::ParseXmlSitemap(data, options)
                                     : ParseText(data, options);
  // A cut input explains a later XML error better than the error does.
  if (result.ok() && !input_status.ok() &&
      result->status.code() != Status::Code::kResourceExhausted) {
    result->status = input_status;
  }
  return result;
}

}  // namespace freshd::parse
