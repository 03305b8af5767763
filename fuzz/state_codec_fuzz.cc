// libFuzzer target for sched/state_codec.h's decoders (PageState,
// ProfileSet, HostStats, SavedPage, SavedGlobals). Any input must decode or
// fail with Corruption without a crash or an over-read; whatever decodes must
// encode to bytes that decode again to the same encoding (a fixed point), so an
// accepted state is one the encoder can write back.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sched/state_codec.h"

namespace {

using freshd::Status;

template <typename T, typename Decode, typename Encode>
void CheckFixedPoint(std::string_view in, Decode decode, Encode encode) {
  freshd::Result<T> first = decode(in);
  if (!first.ok()) {
    if (first.status().code() != Status::Code::kCorruption) __builtin_trap();
    return;
  }
  const std::string once = encode(*first);
  freshd::Result<T> second = decode(once);
  if (!second.ok() || encode(*second) != once) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace s = freshd::sched;
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  CheckFixedPoint<s::PageSnapshot>(in, s::DecodePageState, s::EncodePageState);
  CheckFixedPoint<s::ProfileSet>(in, s::DecodeProfileSet, s::EncodeProfileSet);
  CheckFixedPoint<s::HostStats>(in, s::DecodeHostStats, s::EncodeHostStats);
  CheckFixedPoint<s::SavedGlobals>(
      in, s::DecodeSavedGlobals, [](const s::SavedGlobals& g) {
        return s::EncodeSavedGlobals(g.stats, g.threshold, g.spread);
      });
  CheckFixedPoint<s::SavedPage>(
      in, s::DecodeSavedPage, [](const s::SavedPage& p) {
        return s::EncodeSavedPage(p.state, p.profiles ? &*p.profiles : nullptr,
                                  p.recent ? &*p.recent : nullptr,
                                  p.rate ? &*p.rate : nullptr);
      });
  return 0;
}
