// freshd fetch [--config FILE] [--warc DIR] URL... : fetches each URL once
// through the real fetcher (fetch/one_shot.h: robots.txt, politeness, limits,
// SSRF guard; no conditional GET state) and prints one JSON object per URL,
// in order: url, final_url, outcome (class), status, bytes, elapsed_ms,
// redirects, detail (why, for non-ok outcomes), content_type, and for HTML
// text_hash (hex, as `freshd fingerprint`), shingles and links (counts).
// http_version ("1.1", "2") once a response came.
// With --warc DIR, ok responses, each redirect hop and (with [store]
// warc_errors) 4xx/5xx responses are archived as WARC response records and
// 304s as revisits, each after a request record holding the request head
// exactly as sent (WARC-Concurrent-To links the two; store/warc_writer.h);
// with [store] warc_dedup, a payload repeated within the run is written as
// an identical-payload-digest revisit of its first response. The
// robots.txt exchanges the fetches needed are archived first, as the daemon
// archives its own (a replay then knows what the crawler was allowed).
// The config is --config or the defaults, so loopback/private URLs are
// refused unless [fetch] allow_private_networks = true.
// Exit: 0 when every URL got an outcome (even an error outcome), 1 if the
// fetcher or the WARC output failed, 2 on bad usage, a bad config or a URL
// that is not an absolute http(s) URL (each named on stderr; nothing is
// fetched).

#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "conf/config.h"
#include "daemon/warc_archive.h"
#include "fetch/one_shot.h"
#include "parse/html_fingerprint.h"
#include "parse/url.h"
#include "store/warc_writer.h"

namespace freshd::cli {
namespace {

struct FetchOptions {
  std::string config_path;
  std::string warc_dir;
  std::vector<std::string> urls;
};

std::string Hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(v));
  return buf;
}

bool IsHtml(const std::string& content_type) {
  return content_type == "text/html" || content_type == "application/xhtml+xml";
}

nlohmann::json ToJson(const fetch::OneShotResult& o, const Config& config) {
  const fetch::FetchResult& r = o.fetch;
  nlohmann::json j = {
      {"url", r.url},
      {"final_url", r.final_url},
      {"outcome", std::string(fetch::OutcomeName(r.outcome))},
      {"status", r.status},
      {"bytes", r.bytes},
      {"elapsed_ms", static_cast<int64_t>(r.total_elapsed_s * 1000 + 0.5)},
      {"redirects", r.redirects},
  };
  if (!r.detail.empty()) j["detail"] = r.detail;
  if (!r.content_type.empty()) j["content_type"] = r.content_type;
  if (!r.http_version.empty()) j["http_version"] = r.http_version;
  if (r.outcome == fetch::OutcomeClass::kOk && IsHtml(r.content_type)) {
    parse::FingerprintOptions fo;
    fo.k = config.sched.shingle_k;
    fo.m = static_cast<size_t>(config.sched.sketch_m);
    auto fp = parse::FingerprintHtml(r.body, r.content_type, r.final_url, fo);
    if (fp.ok()) {
      j["text_hash"] = Hex64(fp->text.text_hash);
      j["shingles"] = fp->text.shingle_count;
      j["links"] = fp->page.links.size();
    } else {
      j["parse_error"] = fp.status().ToString();
    }
  }
  return j;
}

void RunFetch(const FetchOptions& o, int* exit_code) {
  bool bad_url = false;
  for (const std::string& url : o.urls) {
    auto normalized = parse::NormalizeUrl(url);
    if (!normalized.ok()) {
      std::fprintf(stderr, "freshd fetch: %s: %s\n", url.c_str(),
                   normalized.status().message().c_str());
      bad_url = true;
    }
  }
  if (bad_url) {
    *exit_code = 2;
    return;
  }
  Config config;
  if (!o.config_path.empty()) {
    Result<Config> loaded = LoadConfigFile(o.config_path);
    if (!loaded.ok()) {
      std::fprintf(stderr, "freshd fetch: %s\n",
                   loaded.status().message().c_str());
      *exit_code = 2;
      return;
    }
    config = std::move(loaded).value();
  }
  std::unique_ptr<store::WarcWriter> warc;
  if (!o.warc_dir.empty()) {
    store::WarcWriterOptions wo;
    wo.dir = o.warc_dir;
    wo.user_agent = UserAgentHeader(config.crawler);
    wo.operator_contact = config.crawler.contact_url;
    wo.rotate_bytes = config.store.warc_rotate_bytes;
    wo.software = std::string("freshd/") + FRESHD_VERSION;
    // One run's repeated payloads become identical-payload revisits (the
    // writer's memory; the daemon's index lives in its store).
    if (config.store.warc_dedup) {
      wo.dedup_entries = static_cast<size_t>(
          std::min<uint64_t>(config.store.warc_dedup_entries, 100000));
    }
    auto w = store::WarcWriter::Open(wo);
    if (!w.ok()) {
      std::fprintf(stderr, "freshd fetch: --warc %s: %s\n", o.warc_dir.c_str(),
                   w.status().ToString().c_str());
      *exit_code = 2;
      return;
    }
    warc = std::move(w).value();
  }
  fetch::CrawlerOptions co = fetch::CrawlerOptionsFromConfig(config);
  std::vector<fetch::OneShotResult> robots;
  auto results = fetch::FetchAll(co, o.urls, warc != nullptr,
                                 /*sitemaps=*/nullptr, &robots);
  if (!results.ok()) {
    std::fprintf(stderr, "freshd fetch: %s\n",
                 results.status().ToString().c_str());
    *exit_code = 1;
    return;
  }
  *exit_code = 0;
  auto archive = [&](const fetch::OneShotResult& r) {
    if (!warc) return;
    daemon::ArchiveContext context;
    context.errors = config.store.warc_errors;
    Status s =
        daemon::ArchiveFetch(*warc, r.fetch, r.started_unix, nullptr, context);
    if (!s.ok()) {
      std::fprintf(stderr, "freshd fetch: WARC: %s\n", s.ToString().c_str());
      *exit_code = 1;
    }
  };
  for (const fetch::OneShotResult& r : robots) archive(r);
  for (const fetch::OneShotResult& r : *results) {
    std::printf("%s\n", ToJson(r, config).dump().c_str());
    archive(r);
  }
  std::fflush(stdout);
  if (warc) {
    Status s = warc->Close();
    if (!s.ok()) {
      std::fprintf(stderr, "freshd fetch: WARC: %s\n", s.ToString().c_str());
      *exit_code = 1;
    }
  }
}

}  // namespace

void AddFetchCommand(CLI::App& app, int* exit_code) {
  auto opts = std::make_shared<FetchOptions>();
  CLI::App* sub = app.add_subcommand(
      "fetch",
      "Fetch URLs once through the real fetcher (robots.txt, politeness, "
      "limits, SSRF guard) and print one JSON object per URL");
  sub->add_option("--config", opts->config_path, "TOML config file")
      ->check(CLI::ExistingFile);
  sub->add_option("--warc", opts->warc_dir,
                  "write WARC/1.1 records of the responses to this directory")
      ->check(CLI::ExistingDirectory);
  sub->add_option("urls", opts->urls, "URLs to fetch")->required();
  sub->callback([opts, exit_code] { RunFetch(*opts, exit_code); });
}

}  // namespace freshd::cli
