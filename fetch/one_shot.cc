#include "fetch/one_shot.h"

#include <boost/asio/io_context.hpp>
#include <chrono>

#include "base/clock.h"

namespace freshd::fetch {

Result<std::vector<OneShotResult>> FetchAll(
    const CrawlerOptions& options, const std::vector<std::string>& urls,
    bool keep_raw, std::vector<std::string>* sitemaps,
    std::vector<OneShotResult>* robots) {
  boost::asio::io_context io;
  Result<std::unique_ptr<Crawler>> crawler = Crawler::Create(io, options);
  if (!crawler.ok()) return crawler.status();
  if (sitemaps != nullptr) {
    (*crawler)->set_sitemap_handler(
        [sitemaps](const std::string&, const std::vector<std::string>& maps) {
          sitemaps->insert(sitemaps->end(), maps.begin(), maps.end());
        });
  }
  if (keep_raw && robots != nullptr) {
    (*crawler)->set_archive_handler([robots](FetchResult r) {
      const double started = UnixNow() - r.elapsed_s;
      robots->push_back({std::move(r), started});
    });
  }
  std::vector<OneShotResult> out(urls.size());
  double now_unix = UnixNow();
  for (size_t i = 0; i < urls.size(); ++i) {
    out[i].started_unix = now_unix;
    CrawlRequest req;
    req.url = urls[i];
    req.keep_raw = keep_raw;
    (*crawler)->Fetch(std::move(req), [&out, i](FetchResult r) {
      out[i].fetch = std::move(r);
    });
  }
  try {
    io.run();
  } catch (const std::exception& e) {
    return Status::Internal(std::string("event loop: ") + e.what());
  }
  return out;
}

}  // namespace freshd::fetch
