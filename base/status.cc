#include "base/status.h"

namespace freshd {

const char* Status::CodeName(Code code) {
  switch (code) {
    case Code::kOk:
      return "OK";
    case Code::kInvalidArgument:
      return "invalid argument";
    case Code::kNotFound:
      return "not found";
    case Code::kIOError:
      return "I/O error";
    case Code::kCorruption:
      return "corruption";
    case Code::kResourceExhausted:
      return "limit exceeded";
    case Code::kUnavailable:
      return "unavailable";
    case Code::kInternal:
      return "internal error";
  }
  return "unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out = CodeName(code_);
  out += ": ";
  out += message_;
  return out;
}

}  // namespace freshd
