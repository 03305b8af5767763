// An independent WARC reader for tests: inflates each gzip member on its
// own, parses the WARC/1.1 headers (ISO 28500:2017 §5-6), decodes RFC 4648
// base32 and recomputes SHA-1 digests without the writer's code.

#ifndef FRESHD_TESTS_STORE_WARC_READER_H_
#define FRESHD_TESTS_STORE_WARC_READER_H_

#include <gtest/gtest.h>
#include <openssl/sha.h>
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace freshd::store {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct ParsedRecord {
  std::string version;
  std::map<std::string, std::string> fields;  // lower-cased names
  std::string block;
};

// Inflates every gzip member of `file` separately; each must hold exactly
// one complete record.
inline std::vector<std::string> InflateMembers(const std::string& file) {
  std::vector<std::string> members;
  size_t pos = 0;
  while (pos < file.size()) {
    z_stream zs{};
    EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(file.data() + pos));
    zs.avail_in = static_cast<uInt>(file.size() - pos);
    std::string out;
    char buf[16384];
    int rc = Z_OK;
    while (rc == Z_OK) {
      zs.next_out = reinterpret_cast<Bytef*>(buf);
      zs.avail_out = sizeof(buf);
      rc = inflate(&zs, Z_NO_FLUSH);
      out.append(buf, sizeof(buf) - zs.avail_out);
    }
    EXPECT_EQ(rc, Z_STREAM_END) << "member at " << pos;
    size_t used = (file.size() - pos) - zs.avail_in;
    inflateEnd(&zs);
    if (rc != Z_STREAM_END || used == 0) break;
    pos += used;
    members.push_back(std::move(out));
  }
  return members;
}

inline bool ParseRecord(const std::string& member, ParsedRecord* r) {
  size_t end = member.find("\r\n\r\n");
  if (end == std::string::npos) return false;
  std::string head = member.substr(0, end);
  size_t line_end = head.find("\r\n");
  r->version = head.substr(0, line_end);
  size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
  while (pos < head.size()) {
    size_t next = head.find("\r\n", pos);
    if (next == std::string::npos) next = head.size();
    std::string line = head.substr(pos, next - pos);
    size_t colon = line.find(':');
    if (colon == std::string::npos) return false;
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), ::tolower);
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    r->fields[name] = value;
    pos = next + 2;
  }
  if (!r->fields.count("content-length")) return false;
  size_t len = std::stoull(r->fields["content-length"]);
  size_t start = end + 4;
  if (member.size() != start + len + 4) return false;  // one record/member
  r->block = member.substr(start, len);
  return member.compare(start + len, 4, "\r\n\r\n") == 0;
}

// Decodes RFC 4648 base32 (independent of the writer's encoder).
inline std::string Base32Decode(const std::string& in) {
  std::string out;
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : in) {
    if (c == '=') break;
    int v = c >= 'A' && c <= 'Z'   ? c - 'A'
            : c >= '2' && c <= '7' ? c - '2' + 26
                                   : -1;
    if (v < 0) return "";
    buffer = (buffer << 5) | static_cast<uint32_t>(v);
    bits += 5;
    if (bits >= 8) {
      out.push_back(static_cast<char>((buffer >> (bits - 8)) & 0xff));
      bits -= 8;
    }
  }
  return out;
}

inline bool DigestMatches(const std::string& field, const std::string& data) {
  if (field.rfind("sha1:", 0) != 0) return false;
  unsigned char md[SHA_DIGEST_LENGTH];
  SHA1(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
  return Base32Decode(field.substr(5)) ==
         std::string(reinterpret_cast<char*>(md), sizeof(md));
}

// Every record of every finished (*.warc.gz) file in `dir`, files in name
// order; a member that does not parse fails the calling test.
inline std::vector<ParsedRecord> ReadWarcDir(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 8 && name.compare(name.size() - 8, 8, ".warc.gz") == 0)
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::vector<ParsedRecord> records;
  for (const std::string& f : files) {
    for (const std::string& m : InflateMembers(ReadFile(f))) {
      ParsedRecord r;
      EXPECT_TRUE(ParseRecord(m, &r)) << f;
      records.push_back(std::move(r));
    }
  }
  return records;
}

}  // namespace freshd::store

#endif  // FRESHD_TESTS_STORE_WARC_READER_H_
