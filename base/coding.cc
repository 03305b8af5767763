#include "base/coding.h"

#include <bit>
#include <cstring>

namespace freshd {

void PutByte(std::string* out, uint8_t v) {
  out->push_back(static_cast<char>(v));
}

void PutVarint64(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void PutFixed64(std::string* out, uint64_t v) {
  char buf[8];
  for (int i = 0; i < 8; ++i) buf[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out->append(buf, 8);
}

void PutFixed32(std::string* out, uint32_t v) {
  char buf[4];
  for (int i = 0; i < 4; ++i) buf[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out->append(buf, 4);
}

void PutFloat(std::string* out, float v) {
  PutFixed32(out, std::bit_cast<uint32_t>(v));
}

void PutDouble(std::string* out, double v) {
  PutFixed64(out, std::bit_cast<uint64_t>(v));
}

void PutBigEndian64(std::string* out, uint64_t v) {
  char buf[8];
  for (int i = 0; i < 8; ++i)
    buf[i] = static_cast<char>((v >> (8 * (7 - i))) & 0xff);
  out->append(buf, 8);
}

void PutLengthPrefixed(std::string* out, std::string_view s) {
  PutVarint64(out, s.size());
  out->append(s.data(), s.size());
}

uint64_t DecodeBigEndian64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

bool Decoder::GetByte(uint8_t* v) {
  if (in_.empty()) return false;
  *v = static_cast<uint8_t>(in_[0]);
  in_.remove_prefix(1);
  return true;
}

bool Decoder::GetVarint64(uint64_t* v) {
  uint64_t result = 0;
  for (size_t i = 0; i < 10; ++i) {
    if (i >= in_.size()) return false;
    uint64_t byte = static_cast<unsigned char>(in_[i]);
    // The 10th byte may only carry the top bit of a 64-bit value.
    if (i == 9 && byte > 1) return false;
    result |= (byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      in_.remove_prefix(i + 1);
      *v = result;
      return true;
    }
  }
  return false;
}

bool Decoder::GetVarint32(uint32_t* v) {
  uint64_t wide = 0;
  if (!GetVarint64(&wide) || wide > UINT32_MAX) return false;
  *v = static_cast<uint32_t>(wide);
  return true;
}

bool Decoder::GetFixed32(uint32_t* v) {
  if (in_.size() < 4) return false;
  uint32_t result = 0;
  for (int i = 0; i < 4; ++i)
    result |= static_cast<uint32_t>(static_cast<unsigned char>(in_[i]))
              << (8 * i);
  in_.remove_prefix(4);
  *v = result;
  return true;
}

bool Decoder::GetFloat(float* v) {
  uint32_t bits = 0;
  if (!GetFixed32(&bits)) return false;
  *v = std::bit_cast<float>(bits);
  return true;
}

bool Decoder::GetFixed64(uint64_t* v) {
  if (in_.size() < 8) return false;
  uint64_t result = 0;
  for (int i = 0; i < 8; ++i)
    result |= static_cast<uint64_t>(static_cast<unsigned char>(in_[i]))
              << (8 * i);
  in_.remove_prefix(8);
  *v = result;
  return true;
}

bool Decoder::GetDouble(double* v) {
  uint64_t bits = 0;
  if (!GetFixed64(&bits)) return false;
  *v = std::bit_cast<double>(bits);
  return true;
}

bool Decoder::GetLengthPrefixed(std::string* v, size_t max_len) {
  std::string_view view;
  if (!GetLengthPrefixed(&view, max_len)) return false;
  v->assign(view.data(), view.size());
  return true;
}

bool Decoder::GetLengthPrefixed(std::string_view* v, size_t max_len) {
  uint64_t len = 0;
  Decoder save = *this;
  if (!GetVarint64(&len) || len > max_len || len > in_.size()) {
    *this = save;
    return false;
  }
  *v = in_.substr(0, static_cast<size_t>(len));
  in_.remove_prefix(static_cast<size_t>(len));
  return true;
}

}  // namespace freshd
