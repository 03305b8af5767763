// freshd robots --robots FILE --agent NAME URL...
//   Prints "allowed URL" or "disallowed URL" per URL, in order, as the
//   crawler would decide: each URL is normalized (parse/url.h) and its path
//   and query are matched against FILE (parse/robots.h). Exit 0; 2 if FILE
//   is unreadable or a URL is not a valid http(s) URL (then nothing is
//   printed on stdout and each bad URL is named on stderr).
// freshd sitemap [--url URL] [--max-urls N] [--max-bytes N] FILE
//   Prints one JSON object per entry, in document order:
//   {"loc":"…","lastmod":"2017-01-05T12:34:50Z" or
//   null,"kind":"url"|"sitemap"}.
//   --url is where FILE was fetched from: relative locs are resolved
//   against it and page URLs on other hosts are dropped; without it nothing
//   is dropped. Exit 0 if the whole file was read; 2 if FILE is unreadable
//   or not a sitemap (nothing printed), and also 2 if parsing stopped early
//   (truncated or malformed XML, a limit reached): the entries read up to
//   that point are still printed and the reason goes to stderr.

#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/iso8601.h"
#include "cli/commands.h"
#include "parse/robots.h"
#include "parse/sitemap.h"
#include "parse/url.h"
#include "parse/w3c_datetime.h"

namespace freshd::cli {
namespace {

// Reads at most `max_bytes` of `path`; false if it cannot be opened/read.
bool ReadFileBounded(const std::string& path, size_t max_bytes,
                     std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->clear();
  std::vector<char> buf(64 * 1024);
  while (out->size() < max_bytes && in) {
    in.read(buf.data(), static_cast<std::streamsize>(
                            std::min(buf.size(), max_bytes - out->size())));
    out->append(buf.data(), static_cast<size_t>(in.gcount()));
  }
  return !in.bad();
}

void AddRobotsCommand(CLI::App& app, int* exit_code) {
  CLI::App* sub = app.add_subcommand(
      "robots",
      "Check URLs against a robots.txt file (RFC 9309); prints 'allowed URL' "
      "or 'disallowed URL' per URL. Exit 0, or 2 for an unreadable file or "
      "an invalid URL");
  struct Options {
    std::string robots_path;
    std::string agent;
    std::vector<std::string> urls;
  };
  auto opts = std::make_shared<Options>();
  sub->add_option("--robots", opts->robots_path, "robots.txt file")->required();
  sub->add_option("--agent", opts->agent, "product token to match, e.g. freshd")
      ->required();
  sub->add_option("URL", opts->urls, "absolute http(s) URLs")->required();
  sub->callback([exit_code, opts] {
    std::string body;
    // Only the first 500 KiB count (RFC 9309 2.5); read a little more so
    // the parser knows the file was cut.
    if (!ReadFileBounded(opts->robots_path, parse::kMaxRobotsBytes + 1,
                         &body)) {
      std::fprintf(stderr, "freshd robots: cannot read %s\n",
                   opts->robots_path.c_str());
      *exit_code = 2;
      return;
    }
    if (!parse::IsValidProductToken(opts->agent)) {
      std::fprintf(stderr,
                   "freshd robots: warning: '%s' is not a product token "
                   "(letters, '-', '_'); matching it as given\n",
                   opts->agent.c_str());
    }
    std::vector<std::string> paths;
    bool bad = false;
    for (const std::string& url : opts->urls) {
      auto normalized = parse::NormalizeUrl(url);
      if (!normalized.ok()) {
        std::fprintf(stderr, "freshd robots: %s: %s\n", url.c_str(),
                     normalized.status().message().c_str());
        bad = true;
        continue;
      }
      paths.emplace_back(parse::UrlPathAndQuery(*normalized));
    }
    if (bad) {
      *exit_code = 2;
      return;
    }
    parse::RobotsTxt robots = parse::ParseRobotsTxt(body);
    for (size_t i = 0; i < paths.size(); ++i) {
      bool allowed = robots.IsAllowed(opts->agent, paths[i]);
      std::printf("%s %s\n", allowed ? "allowed" : "disallowed",
                  opts->urls[i].c_str());
    }
    *exit_code = 0;
  });
}

void AddSitemapCommand(CLI::App& app, int* exit_code) {
  CLI::App* sub = app.add_subcommand(
      "sitemap",
      "Parse a sitemap (XML urlset/index, text, RSS, Atom; gzip by content) "
      "and print JSON Lines {loc, lastmod, kind}. Exit 0; 2 if unreadable, "
      "not a sitemap, or cut short (entries read so far are still printed)");
  struct Options {
    std::string path;
    std::string url;
    size_t max_urls = parse::SitemapOptions{}.max_urls;
    size_t max_bytes = parse::SitemapOptions{}.max_bytes;
  };
  auto opts = std::make_shared<Options>();
  sub->add_option("FILE", opts->path, "sitemap file (may be gzipped)")
      ->required();
  sub->add_option("--url", opts->url,
                  "where FILE was fetched from: resolves relative locs and "
                  "drops page URLs on other hosts");
  sub->add_option("--max-urls", opts->max_urls, "entry limit")
      ->capture_default_str();
  sub->add_option("--max-bytes", opts->max_bytes,
                  "limit on (decompressed) bytes")
      ->capture_default_str();
  sub->callback([exit_code, opts] {
    std::string bytes;
    // A compressed file may hold at most max_bytes once inflated; reading
    // more than max_bytes of it is never needed (zlib's best ratio is
    // ~1000:1, and a plain file is cut at max_bytes anyway).
    if (!ReadFileBounded(opts->path, opts->max_bytes + 1, &bytes)) {
      std::fprintf(stderr, "freshd sitemap: cannot read %s\n",
                   opts->path.c_str());
      *exit_code = 2;
      return;
    }
    parse::SitemapOptions options;
    options.sitemap_url = opts->url;
    options.max_urls = opts->max_urls;
    options.max_bytes = opts->max_bytes;
    auto result = parse::ParseSitemap(bytes, options);
    if (!result.ok()) {
      std::fprintf(stderr, "freshd sitemap: %s: %s\n", opts->path.c_str(),
                   result.status().message().c_str());
      *exit_code = 2;
      return;
    }
    for (const parse::SitemapEntry& e : result->entries) {
      nlohmann::ordered_json line;
      line["loc"] = e.loc;
      line["lastmod"] =
          e.lastmod ? nlohmann::ordered_json(FormatIso8601Utc(*e.lastmod))
                    : nlohmann::ordered_json(nullptr);
      line["kind"] =
          e.kind == parse::SitemapEntry::Kind::kSitemap ? "sitemap" : "url";
      std::printf("%s\n", line.dump().c_str());
    }
    if (result->dropped_invalid + result->dropped_cross_host > 0) {
      std::fprintf(stderr,
                   "freshd sitemap: %s: dropped %zu invalid and %zu "
                   "other-host URLs\n",
                   opts->path.c_str(), result->dropped_invalid,
                   result->dropped_cross_host);
    }
    if (!result->status.ok()) {
      std::fprintf(stderr,
                   "freshd sitemap: %s: stopped after %zu entries: %s\n",
                   opts->path.c_str(), result->entries.size(),
                   result->status.ToString().c_str());
      *exit_code = 2;
      return;
    }
    *exit_code = 0;
  });
}

}  // namespace

void AddRobotsSitemapCommands(CLI::App& app, int* exit_code) {
  AddRobotsCommand(app, exit_code);
  AddSitemapCommand(app, exit_code);
}

}  // namespace freshd::cli
