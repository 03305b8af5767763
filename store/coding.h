// Bounded binary coding helpers for store records: LEB128 varints, fixed
// little-endian 64-bit values, big-endian 64-bit key parts and
// length-prefixed strings. Decoder never reads past its input: every Get*
// returns false on truncation or an over-long varint, and the caller turns
// that into Status::Corruption.
// Thread-safety: Decoder is a plain value; the free functions are pure.

#ifndef FRESHD_STORE_CODING_H_
#define FRESHD_STORE_CODING_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace freshd::store {

void PutVarint64(std::string* out, uint64_t v);
void PutFixed64(std::string* out, uint64_t v);      // little-endian
void PutDouble(std::string* out, double v);         // IEEE bits, little-endian
void PutBigEndian64(std::string* out, uint64_t v);  // sorts as unsigned
void PutLengthPrefixed(std::string* out, std::string_view s);

// Reads big-endian 8 bytes at p. REQUIRES: 8 readable bytes.
uint64_t DecodeBigEndian64(const char* p);

// Consumes values from the front of a byte string.
class Decoder {
 public:
  explicit Decoder(std::string_view in) : in_(in) {}

  bool GetByte(uint8_t* v);
  bool GetVarint64(uint64_t* v);  // at most 10 bytes, no overflow bits
  bool GetVarint32(uint32_t* v);  // a varint64 that fits in 32 bits
  bool GetFixed64(uint64_t* v);
  bool GetDouble(double* v);
  // Length-prefixed string of at most max_len bytes.
  bool GetLengthPrefixed(std::string* v, size_t max_len);

  bool done() const { return in_.empty(); }
  size_t remaining() const { return in_.size(); }

 private:
  std::string_view in_;
};

}  // namespace freshd::store

#endif  // FRESHD_STORE_CODING_H_
