// libFuzzer target for conf/ (the daemon's TOML configuration): any bytes
// either load into a Config that passes ValidateConfig or give
// InvalidArgument with a message; loading is deterministic.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "conf/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
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
