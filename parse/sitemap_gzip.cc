// Bounded gzip decompression (see sitemap_gzip.h).

#include "parse/sitemap_gzip.h"

#include <zlib.h>

#include <algorithm>
#include <array>

namespace freshd::parse {

bool LooksGzipped(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1F &&
         static_cast<unsigned char>(bytes[1]) == 0x8B;
}

Status GunzipBounded(std::string_view bytes, size_t max_bytes,
                     std::string* out) {
  out->clear();
  z_stream zs{};
  // 16 + MAX_WBITS: gzip wrapper only.
  if (inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
    return Status::Internal("inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(std::min<size_t>(bytes.size(), UINT32_MAX));
  std::array<char, 64 * 1024> buf;
  Status status;
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(buf.data());
    zs.avail_out = static_cast<uInt>(buf.size());
    int rc = inflate(&zs, Z_NO_FLUSH);
    size_t produced = buf.size() - zs.avail_out;
    if (out->size() + produced > max_bytes) {
      out->append(buf.data(), max_bytes - out->size());
      status = Status::ResourceExhausted("decompressed sitemap larger than " +
                                         std::to_string(max_bytes) + " bytes");
      break;
    }
    out->append(buf.data(), produced);
    if (rc == Z_STREAM_END) {
      // Another gzip member may follow (as `cat a.gz b.gz` makes).
      if (zs.avail_in >= 2 && LooksGzipped(std::string_view(
                                  reinterpret_cast<char*>(zs.next_in), 2))) {
        inflateReset(&zs);
        continue;
      }
      break;
    }
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
      status = Status::Corruption("truncated gzip stream");
      break;
    }
    if (rc != Z_OK) {
      status = Status::Corruption(std::string("damaged gzip stream: ") +
                                  (zs.msg ? zs.msg : "inflate error"));
      break;
    }
  }
  inflateEnd(&zs);
  return status;
}

}  // namespace freshd::parse
