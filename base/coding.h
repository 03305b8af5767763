// The one binary coding of freshd's records (store/ records, sched/ state
// blobs, daemon/ fetch state): LEB128 varints, fixed little-endian 32- and
// 64-bit values (floats and doubles as their IEEE bits), big-endian 64-bit
// key parts and length-prefixed strings. Decoder never reads past its input:
// every Get* returns false on truncation or an over-long varint, and the caller
// turns that into Status::Corruption. Thread-safety: Decoder is a plain value;
// the free functions are pure.

#ifndef FRESHD_BASE_CODING_H_
#define FRESHD_BASE_CODING_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace freshd {

void PutByte(std::string* out, uint8_t v);
void PutVarint64(std::string* out, uint64_t v);
void PutFixed32(std::string* out, uint32_t v);      // little-endian
void PutFixed64(std::string* out, uint64_t v);      // little-endian
void PutFloat(std::string* out, float v);           // IEEE bits, little-endian
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
  bool GetFixed32(uint32_t* v);
  bool GetFixed64(uint64_t* v);
  bool GetFloat(float* v);
  bool GetDouble(double* v);
  // Length-prefixed string of at most max_len bytes (the view borrows the
  // decoder's input). On failure nothing is consumed.
  bool GetLengthPrefixed(std::string* v, size_t max_len);
  bool GetLengthPrefixed(std::string_view* v, size_t max_len);

  bool done() const { return in_.empty(); }
  size_t remaining() const { return in_.size(); }

 private:
  std::string_view in_;
};

}  // namespace freshd

#endif  // FRESHD_BASE_CODING_H_
