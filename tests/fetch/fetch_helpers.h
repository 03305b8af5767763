// Helpers shared by the fetch tests: a fast test config and a synchronous
// wrapper that runs one HttpFetcher request on a private io_context.
// Header-only (every tests/fetch/*_test.cc is its own executable).

#ifndef FRESHD_TESTS_FETCH_FETCH_HELPERS_H_
#define FRESHD_TESTS_FETCH_FETCH_HELPERS_H_

#include <zlib.h>

#include <boost/asio/io_context.hpp>
#include <string>
#include <vector>

#include "conf/config.h"
#include "fetch/http_fetcher.h"

namespace freshd::fetch::testing {

// Sub-second limits so hostile-server tests finish quickly; loopback allowed.
inline FetchConfig FastFetchConfig() {
  FetchConfig c;
  c.connect_timeout_s = 0.5;
  c.timeout_s = 2.0;
  c.low_speed_bytes = 100;
  c.low_speed_time_s = 0.3;
  c.max_header_bytes = 16 * 1024;
  c.max_body_bytes = 256 * 1024;
  c.max_decompressed_bytes = 1024 * 1024;
  c.allow_private_networks = true;
  return c;
}

inline FetchResult FetchOnce(const FetcherOptions& options,
                             FetchRequest request) {
  boost::asio::io_context io;
  auto fetcher = HttpFetcher::Create(io, options);
  FetchResult out;
  if (!fetcher.ok()) {
    out.detail = fetcher.status().ToString();
    return out;
  }
  (*fetcher)->Fetch(std::move(request),
                    [&](FetchResult r) { out = std::move(r); });
  io.run();
  return out;
}

inline FetchResult FetchOnce(const FetchConfig& config,
                             const std::string& url) {
  FetcherOptions o;
  o.config = config;
  FetchRequest req;
  req.url = url;
  return FetchOnce(o, req);
}

// gzip (window_bits 31), zlib (15) or raw deflate (-15) compression.
inline std::string Compress(const std::string& in, int window_bits) {
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, window_bits, 9, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, in.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace freshd::fetch::testing

#endif  // FRESHD_TESTS_FETCH_FETCH_HELPERS_H_
