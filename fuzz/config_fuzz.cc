// libFuzzer target for conf/ (the daemon's TOML configuration): any bytes
// either load into a Config that passes ValidateConfig or give
// InvalidArgument with a message; loading is deterministic.
//
// Depth and size bugs need big inputs (issue #26: 10,000 nested '[' crashed
// toml11), which mutation rarely grows. So an input that starts with a NUL
// byte (never valid TOML) is a repetition: "\0" N PREFIX "\x01" PART
// "\x01" SUFFIX loads PREFIX + PART * (N * 64) + SUFFIX, up to 1 MiB + 1
// byte, and a few bytes reach any depth. fuzz/config.dict holds TOML's
// punctuation and every config section and key.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "conf/config.h"

namespace {

constexpr size_t kMaxExpanded = (1 << 20) + 1;  // just over the size limit

std::string Expand(std::string_view in) {
  const size_t count = static_cast<unsigned char>(in[1]) * size_t{64};
  std::string_view rest = in.substr(2);
  const size_t a = rest.find('\x01');
  if (a == std::string_view::npos) return std::string(rest);
  const size_t b = rest.find('\x01', a + 1);
  std::string_view part =
      rest.substr(a + 1, b == std::string_view::npos ? b : b - a - 1);
  std::string out(rest.substr(0, a));
  for (size_t i = 0; i < count && out.size() < kMaxExpanded; ++i) {
    out.append(part.substr(0, kMaxExpanded - out.size()));
  }
  if (b != std::string_view::npos) out.append(rest.substr(b + 1));
  if (out.size() > kMaxExpanded) out.resize(kMaxExpanded);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::string expanded;
  if (size >= 2 && in[0] == '\0') {
    expanded = Expand(in);
    in = expanded;
  }
  freshd::Result<freshd::Config> config = freshd::LoadConfigString(in, "fuzz");
  if (!config.ok()) {
    if (config.status().code() != freshd::Status::Code::kInvalidArgument ||
        config.status().ToString().empty()) {
      __builtin_trap();
    }
    return 0;
  }
  if (!freshd::ValidateConfig(*config).ok()) __builtin_trap();
  if (freshd::LoadConfigString(in, "fuzz").ok() != true) __builtin_trap();
  return 0;
}
