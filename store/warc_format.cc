#include "store/warc_format.h"

#include <openssl/rand.h>
#include <zlib.h>

#include <cmath>
#include <cstdio>

#include "base/iso8601.h"

namespace freshd::store {

std::string Base32Encode(std::string_view data) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  std::string out;
  out.reserve((data.size() + 4) / 5 * 8);
  uint64_t buffer = 0;
  int bits = 0;
  for (unsigned char c : data) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 5) {
      out.push_back(kAlphabet[(buffer >> (bits - 5)) & 31]);
      bits -= 5;
    }
  }
  if (bits > 0) out.push_back(kAlphabet[(buffer << (5 - bits)) & 31]);
  while (out.size() % 8 != 0) out.push_back('=');
  return out;
}

std::string WarcRecordId() {
  unsigned char b[16];
  if (RAND_bytes(b, sizeof(b)) != 1) {
    // OpenSSL's CSPRNG failing is not recoverable here; an id must be unique.
    std::abort();
  }
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);  // RFC 4122
  char buf[64];
  std::snprintf(buf, sizeof(buf),
                "<urn:uuid:%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
                "%02x%02x%02x%02x%02x%02x>",
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
                b[10], b[11], b[12], b[13], b[14], b[15]);
  return buf;
}

namespace {
// WARC dates stay within 1970-01-01..9999-12-31 (14 digits for CDXJ).
int64_t ClampedUnixSeconds(double unix_seconds) {
  if (unix_seconds > 0 && unix_seconds < 253402300799.0)  // < year 10000
    return static_cast<int64_t>(std::floor(unix_seconds));
  return 0;
}
}  // namespace

std::string WarcDate(double unix_seconds) {
  return FormatIso8601Utc(ClampedUnixSeconds(unix_seconds));
}

std::string CompactUtc(double unix_seconds) {
  // "2017-01-05T12:34:50Z" -> "20170105123450".
  std::string compact;
  for (char c : FormatIso8601Utc(ClampedUnixSeconds(unix_seconds))) {
    if (c >= '0' && c <= '9') compact += c;
  }
  return compact;
}

std::string FrameWarcRecord(
    const std::vector<std::pair<std::string, std::string>>& fields,
    std::string_view block) {
  std::string out = "WARC/1.1\r\n";
  for (const auto& [name, value] : fields) {
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
  out += "Content-Length: " + std::to_string(block.size()) + "\r\n\r\n";
  out.append(block.data(), block.size());
  out += "\r\n\r\n";
  return out;
}

Result<std::string> GzipMember(std::string_view data) {
  if (data.size() > (1u << 31))
    return Status::ResourceExhausted("WARC record over 2 GiB");
  z_stream zs{};
  // windowBits 15 + 16: write a gzip (RFC 1952) header and trailer.
  if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return Status::Internal("deflateInit2 failed");
  std::string out;
  out.resize(deflateBound(&zs, data.size()) + 32);
  zs.next_in =
      reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));  // zlib API
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  size_t produced = out.size() - zs.avail_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return Status::Internal("deflate did not finish");
  out.resize(produced);
  return out;
}

}  // namespace freshd::store
