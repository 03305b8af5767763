// Versioned binary encodings of the scheduler state the store keeps opaque:
// a page's PageState and ProfileSet (PageRecord::sched_state) and a host's
// pooled HostStats (HostRecord::pooled_estimates), so a restarted daemon can
// rebuild its Scheduler (daemon/recovery.h).
//
// Format (little endian; the byte-level layout is in state_codec.cc and
// store/README.md "Scheduler state"): every blob starts with a version byte
// (kStateCodecVersion), then fixed-width fields — f64 for times, f32 bits for
// the float fields (exact round trip), LEB128 varints for counters — and
// length-prefixed nested blobs. Decoding accepts any bytes: empty, truncated,
// over-long, unknown-version, trailing bytes or out-of-range values (NaN,
// negative counts, broken invariants) are Status::Corruption, never a crash
// or an over-read. Not persisted: the in-flight flag, PageState::host (a
// process-local id; the caller maps it from the URL), a host's page count
// (rebuilt as pages are restored) and profile slot numbers (relabelled).
// Thread-safety: pure functions; safe from any thread.

#ifndef FRESHD_SCHED_STATE_CODEC_H_
#define FRESHD_SCHED_STATE_CODEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "sched/host_pool.h"
#include "sched/page_state.h"
#include "sched/rate_mixture.h"
#include "sched/recent_signals.h"

namespace freshd::sched {

inline constexpr uint8_t kStateCodecVersion = 1;
// ProfileSet blobs since they carry the fitted divergence model; version-1
// profile sets (without it) still decode.
inline constexpr uint8_t kProfileSetVersion = 2;
// PageState blobs: version 2 added static_q (the page's share in its host's
// static-page estimate; version 1: 0), version 3 SignalStats' quiet time
// (version ≤ 2: its exposure), version 4 ChangeRateStats' single quiet time
// (version ≤ 3: unchanged time and timed exposure apart, summed on reading).
// Older page states still decode.
inline constexpr uint8_t kPageStateVersion = 4;
// HostStats blobs: version 2 added SignalStats' quiet time (version-1 host
// stats: quiet = exposure), version 3 the per-source statistics (the mask
// of sources seen, then each seen source's SignalStats; older blobs: none
// seen). Older host stats still decode.
inline constexpr uint8_t kHostStatsVersion = 3;
// SavedGlobals records since they may carry the pool's host-rate spread;
// version-1 records (without it) still decode.
inline constexpr uint8_t kSavedGlobalsVersion = 2;
// SavedPage records since they may carry the rate draws and exploration
// interval (version 3) after RecentSignals (version 2); older records
// (without them) still decode.
inline constexpr uint8_t kSavedPageVersion = 3;

// Refresh counts above this are restored as this (ChangeProfiles keeps no
// setter, so the count is rebuilt by replay; the scheduler itself reads
// PageState::fetches, which saturates at the same value).
inline constexpr uint32_t kMaxRestoredRefreshes = 65535;

// PageSnapshot (a PageState and its PageSignals): every persistent field
// (see above for what is not).
std::string EncodePageState(const PageSnapshot& state);
// On success the state with host = 0 and the in-flight flag cleared.
Result<PageSnapshot> DecodePageState(std::string_view in);

// ProfileSet: history, refresh count, each profile's base time and points,
// its base sketch (base/sketch.h encoding) and the fitted model, if any.
// ProfileSet keeps sketches private: they are written once it offers `const
// BottomSketch* BaseSketch(int i) const`, and as absent until then
// (decoding reads both).
std::string EncodeProfileSet(const ProfileSet& set);
// Rebuilds the set by replaying its refreshes; Corruption if the points are
// not the ones those refreshes produce (so any accepted input is a state the
// scheduler could have reached).
Result<ProfileSet> DecodeProfileSet(std::string_view in);

// HostStats: every field but the page count (decoded as 0).
std::string EncodeHostStats(const HostStats& stats);
Result<HostStats> DecodeHostStats(std::string_view in);

// The PageRecord::sched_state blob: a page's state plus, for longevity
// policies, its change profiles.
// `recent`: the signal policies' claimed times of the signals since the last
// fetch (Scheduler::RecentSignalsOf), so a restart keeps that interval's
// timed evidence; absent in version-1 records.
// `rate`: the rate mixture's draws and the exploration interval
// (Scheduler::RateMemoryOf); absent in records before version 3.
struct SavedPage {
  PageSnapshot state;
  std::optional<ProfileSet> profiles;
  std::optional<RecentSignals> recent;
  std::optional<RateMemory> rate;
};
std::string EncodeSavedPage(const PageSnapshot& state,
                            const ProfileSet* profiles,
                            const RecentSignals* recent = nullptr,
                            const RateMemory* rate = nullptr);
Result<SavedPage> DecodeSavedPage(std::string_view in);

// The global record: the pool's global HostStats, the scheduler's running
// implied threshold (Scheduler::threshold(), finite, >= 0) and the pool's
// cached host-rate spread when it has one (absent in records before it).
struct SavedGlobals {
  HostStats stats;
  double threshold = 0;
  std::optional<HostSpreadState> spread;
};
std::string EncodeSavedGlobals(
    const HostStats& global, double threshold,
    const std::optional<HostSpreadState>& spread = std::nullopt);
Result<SavedGlobals> DecodeSavedGlobals(std::string_view in);

// HostPool::Restore / RestoreGlobal put decoded HostStats into a pool.

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_STATE_CODEC_H_
