// Byte layouts (version 1; f32/f64 = IEEE bits little endian, varint =
// LEB128 ≤ 10 bytes, str = varint length + bytes):
//
// PageState: u8 version | f64 last_fetch (−inf = never) | f64 not_before |
//   ChangeRateStats: 8 × f32 ring | u8 ring_size | u8 ring_head |
//     varint ring_kinds | 5 × f32 aggregates (unchanged count, changed
//     count/time, timed changes, quiet time; version ≤ 3: 6, unchanged
//     count/time, changed count/time, timed changes/exposure, the quiet
//     time being unchanged time + timed exposure) |
//   SignalStats: 5 × f32 (signalled, unsignalled, false, exposure, quiet;
//     version ≤ 2: 4, quiet = exposure) |
//   6 × f32 importance, rate, alpha, nu, interval, forced |
//   varint signals | varint fetches | u8 failures | u8 flags (no in-flight) |
//   u8 static_q. PageState blobs carry version kPageStateVersion (4);
//   versions 1 (no static_q), 2 (4-float SignalStats) and 3 (6
//   aggregates) still decode.
// ProfileSet: u8 version | u8 history | varint refreshes | u8 count |
//   count × { f64 base_time | u8 size | size × { f32 dt | varint d } |
//             u8 has_sketch | [str sketch (base/sketch.h)] }, oldest first |
//   u8 has_fitted | [f64 static_share | f64 churn_share | f64 churn_rate |
//   varint scroll_k | f64 scroll_rate]. ProfileSet blobs carry version
//   kProfileSetVersion (2); version 1 (no has_fitted) still decodes.
// HostStats: u8 version | varint mask of non-zero bins |
//   per set bit (ascending) { f32 count | f32 time } |
//   4 × f32 (unchanged count/time, timed changes/exposure) |
//   5 × f32 SignalStats | varint lm_checks | varint lm_agree |
//   u8 mask of sources seen | per set bit (ascending) 5 × f32 SignalStats.
//   HostStats blobs carry version kHostStatsVersion (3); version 2 (no
//   sources) and 1 (also 4-float SignalStats) still decode.
// SavedPage: u8 version | str PageState | u8 has_profiles | [str ProfileSet]
//   | u8 has_recent | [4 × f32 RecentSignals offsets: ≥ 0 an instant, ≤ −1
//   a whole day, NaN unknown]; version 1 ends after the profiles.
// SavedGlobals: u8 version | str HostStats | f64 threshold | u8 has_spread
//   [| f64 spread | varint intervals_left (≥ 1) | varint rounds]; version 1
//   ends after the threshold.
//
// ChangeRateStats keeps its ring as 16-bit floats (PackSeconds16): they are
// written as the floats they stand for, which read back as the same codes,
// and a ring written before (any floats) reads back rounded to them.
//
// ChangeRateStats, SignalStats and HostStats have private fields and no
// setters; they are trivially copyable, so they are read and written
// through layout mirrors with std::bit_cast. The static_asserts below fail
// the build when a class's size changes, and tests/sched/state_codec_test.cc
// checks the mapping field by field through the public estimators.

#include "sched/state_codec.h"

#include <bit>
#include <cmath>
#include <concepts>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/coding.h"
#include "sched/divergence_model.h"

namespace freshd::sched {
namespace {

struct RateStatsMirror {
  uint16_t ring[ChangeRateStats::kRing];  // PackSeconds16
  uint16_t ring_kinds;
  uint8_t ring_size;
  uint8_t ring_head;
  float aggregates[5];  // unchanged c, changed c/t, timed changes, quiet t
};
struct RecentSignalsMirror {
  float offsets[RecentSignals::kKept];
};
struct SignalStatsMirror {
  float signalled, unsignalled, false_signals, exposure, quiet;
};
struct HostStatsMirror {
  float bin_count[HostStats::kBins];
  float bin_time[HostStats::kBins];
  float aggregates[4];  // unchanged count/time, timed changes/exposure
  SignalStats signals;
  uint16_t lm_checks;
  uint16_t lm_agree;
  uint32_t pages;
  SignalStats sources[kSignalSources];
  uint8_t sources_seen;
};
static_assert(std::is_trivially_copyable_v<ChangeRateStats> &&
                  sizeof(RateStatsMirror) == sizeof(ChangeRateStats),
              "ChangeRateStats changed: update sched/state_codec.cc");
static_assert(std::is_trivially_copyable_v<RecentSignals> &&
                  sizeof(RecentSignalsMirror) == sizeof(RecentSignals),
              "RecentSignals changed: update sched/state_codec.cc");
static_assert(std::is_trivially_copyable_v<SignalStats> &&
                  sizeof(SignalStatsMirror) == sizeof(SignalStats),
              "SignalStats changed: update sched/state_codec.cc");
static_assert(std::is_trivially_copyable_v<HostStats> &&
                  sizeof(HostStatsMirror) == sizeof(HostStats),
              "HostStats changed: update sched/state_codec.cc");
// PageState's fields are public and encoded one by one: a new field must be
// added to the encoding (and the version bumped when it changes meaning);
// fetch_slot is not saved (a fetch does not outlive its process; it took
// the tail padding PageSignals used, so PageSnapshot grew from 112 B).
static_assert(sizeof(PageState) == 88 && sizeof(PageSnapshot) == 120,
              "PageState changed: update sched/state_codec.cc");

constexpr size_t kMaxPageStateBytes = 512;
constexpr size_t kMaxSketchBytes = 5 + 8 * kMaxSketchM;
constexpr size_t kMaxProfileSetBytes = 1 << 20;
constexpr size_t kMaxHostStatsBytes = 1024;

// ---- writing and reading: base/coding.h, never past the input ----

void PutStr(std::string* out, std::string_view s) { PutLengthPrefixed(out, s); }

// The state blobs' reading vocabulary over the one Decoder.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  bool Byte(uint8_t* v) { return in_.GetByte(v); }
  bool Varint(uint64_t* v) { return in_.GetVarint64(v); }
  bool VarintAtMost(uint64_t max, uint64_t* v) {
    return Varint(v) && *v <= max;
  }
  bool F32(float* v) { return in_.GetFloat(v); }
  bool F64(double* v) { return in_.GetDouble(v); }
  bool Str(size_t max_len, std::string_view* v) {
    return in_.GetLengthPrefixed(v, max_len);
  }
  bool done() const { return in_.done(); }

 private:
  Decoder in_;
};

Status Bad(std::string_view what, std::string_view field) {
  return Status::Corruption(std::string(what) + ": bad or truncated " +
                            std::string(field));
}

bool NonNegativeFinite(float v) { return std::isfinite(v) && v >= 0; }

bool NonNegative(float v) { return v >= 0; }  // +inf allowed; NaN not

// Reads `n` floats that must satisfy `ok`.
template <typename Pred>
bool ReadFloats(Reader& r, float* out, int n, Pred ok) {
  for (int i = 0; i < n; ++i) {
    if (!r.F32(&out[i]) || !ok(out[i])) return false;
  }
  return true;
}

// Reads the version byte; accepts kStateCodecVersion up to `newest` (a blob
// kind that grew a field since version 1). *version_out gets it.
Status CheckVersion(Reader& r, std::string_view what,
                    uint8_t newest = kStateCodecVersion,
                    uint8_t* version_out = nullptr) {
  uint8_t version;
  if (!r.Byte(&version)) return Bad(what, "version");
  if (version_out != nullptr) *version_out = version;
  if (version < kStateCodecVersion || version > newest) {
    return Status::Corruption(std::string(what) + ": unknown version " +
                              std::to_string(version));
  }
  return Status::OK();
}

// ---- pieces ----

void PutRateStats(std::string* out, const ChangeRateStats& stats) {
  const auto m = std::bit_cast<RateStatsMirror>(stats);
  for (uint16_t code : m.ring) {
    PutFloat(out, UnpackSeconds16(code));
  }
  PutByte(out, m.ring_size);
  PutByte(out, m.ring_head);
  PutVarint64(out, m.ring_kinds);
  for (float v : m.aggregates) PutFloat(out, v);
}

// `six_aggregates`: versions ≤ 3, whose unchanged time and timed exposure
// are summed into the quiet time.
bool ReadRateStats(Reader& r, bool six_aggregates, ChangeRateStats* stats) {
  RateStatsMirror m{};
  uint64_t kinds;
  float ring[ChangeRateStats::kRing];
  float a[6];
  if (!ReadFloats(r, ring, ChangeRateStats::kRing, NonNegativeFinite) ||
      !r.Byte(&m.ring_size) || !r.Byte(&m.ring_head) ||
      !r.VarintAtMost(UINT16_MAX, &kinds) ||
      !ReadFloats(r, a, six_aggregates ? 6 : 5, NonNegativeFinite)) {
    return false;
  }
  if (six_aggregates) {
    const float quiet = a[1] + a[5];
    if (!std::isfinite(quiet)) return false;
    m.aggregates[0] = a[0];
    m.aggregates[1] = a[2];
    m.aggregates[2] = a[3];
    m.aggregates[3] = a[4];
    m.aggregates[4] = quiet;
  } else {
    std::copy(a, a + 5, m.aggregates);
  }
  if (m.ring_size > ChangeRateStats::kRing ||
      m.ring_head >= ChangeRateStats::kRing) {
    return false;
  }
  // Held as 16-bit floats: a value written from one reads back as it;
  // others (written before, when the ring kept floats) round to the
  // nearest.
  for (int i = 0; i < ChangeRateStats::kRing; ++i) {
    m.ring[i] = PackSeconds16(ring[i]);
  }
  m.ring_kinds = static_cast<uint16_t>(kinds);
  for (int i = 0; i < m.ring_size; ++i) {  // live slots: kinds 0..2 only
    int slot = (m.ring_head + i) % ChangeRateStats::kRing;
    if (((m.ring_kinds >> (2 * slot)) & 3) == 3) return false;
  }
  *stats = std::bit_cast<ChangeRateStats>(m);
  return true;
}

void PutSignalStats(std::string* out, const SignalStats& stats) {
  const auto m = std::bit_cast<SignalStatsMirror>(stats);
  PutFloat(out, m.signalled);
  PutFloat(out, m.unsignalled);
  PutFloat(out, m.false_signals);
  PutFloat(out, m.exposure);
  PutFloat(out, m.quiet);
}

// `with_quiet`: the blob's version has the fifth float; older ones saw no
// timed evidence, so their quiet time is their exposure. A quiet time above
// the exposure is corrupt (each interval adds at most its length to it,
// decayed alike).
bool ReadSignalStats(Reader& r, bool with_quiet, SignalStats* stats) {
  float v[5];
  if (!ReadFloats(r, v, with_quiet ? 5 : 4, NonNegativeFinite)) return false;
  if (!with_quiet) v[4] = v[3];
  if (v[4] > v[3]) return false;
  *stats = std::bit_cast<SignalStats>(
      SignalStatsMirror{v[0], v[1], v[2], v[3], v[4]});
  return true;
}

struct DecodedProfile {
  double base_time = 0;
  int size = 0;
  float dt[kMaxHistory] = {};
  uint16_t d[kMaxHistory] = {};
  BottomSketch sketch;  // m == 0: none
};

// Replays `refreshes` refreshes into a fresh set so that it ends with the
// decoded profiles; false if the result differs from them.
bool Replay(int history, uint32_t refreshes,
            const std::vector<DecodedProfile>& decoded, ProfileSet* out) {
  ProfileSet set(history);
  const int k = static_cast<int>(decoded.size());
  // Refreshes whose profiles were evicted: their points are gone, so any
  // time works; they are placed at the oldest kept base.
  const double first = k > 0 ? decoded[0].base_time : 0;
  for (uint32_t i = static_cast<uint32_t>(k); i < refreshes; ++i) {
    set.OnFetch(first, std::vector<double>(set.profiles().size(), 0.0), {});
  }
  // The kept refreshes. Profile i's points come from the kept refreshes
  // after it with a later time, in order.
  std::vector<int> used(k, 0);
  for (int j = 0; j < k; ++j) {
    const int live = set.profiles().size();
    std::vector<double> div(live, 0.0);
    const int dummies = live - j;  // evicted-to-be profiles come first
    for (int i = 0; i < j; ++i) {
      if (decoded[j].base_time > decoded[i].base_time &&
          used[i] < decoded[i].size) {
        div[dummies + i] = decoded[i].d[used[i]++] / 65535.0;
      }
    }
    set.OnFetch(decoded[j].base_time, std::move(div), decoded[j].sketch);
  }
  const ChangeProfiles& p = set.profiles();
  if (p.size() != k || p.refreshes() != refreshes) return false;
  for (int i = 0; i < k; ++i) {
    const CompactProfile& got = p.profile(i);
    const DecodedProfile& want = decoded[i];
    if (got.base_time != want.base_time || got.size != want.size) return false;
    for (int j = 0; j < want.size; ++j) {
      if (std::bit_cast<uint32_t>(got.dt[j]) !=
              std::bit_cast<uint32_t>(want.dt[j]) ||
          got.d[j] != want.d[j]) {
        return false;
      }
    }
  }
  *out = std::move(set);
  return true;
}

}  // namespace

std::string EncodePageState(const PageSnapshot& s) {
  std::string out;
  out.reserve(160);
  PutByte(&out, kPageStateVersion);
  PutDouble(&out, s.last_fetch);
  PutDouble(&out, s.not_before);
  PutRateStats(&out, s.rate_stats);
  PutSignalStats(&out, s.signal_stats);
  for (float v : {s.importance, s.rate, s.alpha, s.nu, s.interval, s.forced}) {
    PutFloat(&out, v);
  }
  PutVarint64(&out, s.signals);
  PutVarint64(&out, s.fetches);
  PutByte(&out, s.failures);
  PutByte(&out, static_cast<uint8_t>(s.flags & ~PageState::kInFlight));
  PutByte(&out, s.static_q);
  return out;
}

Result<PageSnapshot> DecodePageState(std::string_view in) {
  constexpr std::string_view kWhat = "page state";
  Reader r(in);
  uint8_t version;
  if (Status st = CheckVersion(r, kWhat, kPageStateVersion, &version);
      !st.ok()) {
    return st;
  }
  PageSnapshot s;
  if (!r.F64(&s.last_fetch) ||
      !(std::isfinite(s.last_fetch) || s.last_fetch == kNever)) {
    return Bad(kWhat, "last_fetch");
  }
  if (!r.F64(&s.not_before) || !std::isfinite(s.not_before)) {
    return Bad(kWhat, "not_before");
  }
  if (!ReadRateStats(r, version <= 3, &s.rate_stats)) {
    return Bad(kWhat, "rate_stats");
  }
  if (!ReadSignalStats(r, version >= 3, &s.signal_stats)) {
    return Bad(kWhat, "signal_stats");
  }
  float f[6];
  if (!r.F32(&f[0]) || !std::isfinite(f[0]) || !(f[0] > 0)) {
    return Bad(kWhat, "importance");
  }
  if (!ReadFloats(r, &f[1], 5, NonNegative) || f[2] > 1) {
    return Bad(kWhat, "estimates");
  }
  s.importance = f[0];
  s.rate = f[1];
  s.alpha = f[2];
  s.nu = f[3];
  s.interval = f[4];
  s.forced = f[5];
  uint64_t signals, fetches;
  if (!r.VarintAtMost(UINT16_MAX, &signals) ||
      !r.VarintAtMost(UINT16_MAX, &fetches) || !r.Byte(&s.failures) ||
      !r.Byte(&s.flags)) {
    return Bad(kWhat, "counters");
  }
  if (version >= 2 && !r.Byte(&s.static_q)) {
    return Bad(kWhat, "static_q");
  }
  if (!r.done()) return Bad(kWhat, "length (trailing bytes)");
  s.signals = static_cast<uint16_t>(signals);
  s.fetches = static_cast<uint16_t>(fetches);
  s.flags &= static_cast<uint8_t>(~PageState::kInFlight);
  s.host = 0;
  return s;
}

std::string EncodeProfileSet(const ProfileSet& set) {
  const ChangeProfiles& p = set.profiles();
  std::string out;
  PutByte(&out, kProfileSetVersion);
  PutByte(&out, static_cast<uint8_t>(p.history()));
  PutVarint64(&out, p.refreshes());
  PutByte(&out, static_cast<uint8_t>(p.size()));
  for (int i = 0; i < p.size(); ++i) {
    const CompactProfile& c = p.profile(i);
    PutDouble(&out, c.base_time);
    PutByte(&out, c.size);
    for (int j = 0; j < c.size; ++j) {
      PutFloat(&out, c.dt[j]);
      PutVarint64(&out, c.d[j]);
    }
    const BottomSketch* sketch = set.BaseSketch(i);
    if (sketch != nullptr && sketch->m > 0) {
      PutByte(&out, 1);
      PutStr(&out, EncodeSketch(*sketch));
    } else {
      PutByte(&out, 0);
    }
  }
  if (const std::optional<DivergenceModel>& m = set.fitted()) {
    PutByte(&out, 1);
    PutDouble(&out, m->static_share);
    PutDouble(&out, m->churn_share);
    PutDouble(&out, m->churn_rate);
    PutVarint64(&out, static_cast<uint64_t>(m->scroll_k));
    PutDouble(&out, m->scroll_rate);
  } else {
    PutByte(&out, 0);
  }
  return out;
}

Result<ProfileSet> DecodeProfileSet(std::string_view in) {
  constexpr std::string_view kWhat = "profile set";
  Reader r(in);
  uint8_t version;
  if (Status st = CheckVersion(r, kWhat, kProfileSetVersion, &version);
      !st.ok()) {
    return st;
  }
  uint8_t history, count;
  uint64_t refreshes;
  if (!r.Byte(&history) || history < 1 || history > kMaxHistory) {
    return Bad(kWhat, "history");
  }
  if (!r.VarintAtMost(UINT32_MAX, &refreshes)) return Bad(kWhat, "refreshes");
  if (!r.Byte(&count) || count > history) return Bad(kWhat, "count");
  // Profiles are evicted only when h are kept: count = min(refreshes, h).
  if (count != std::min<uint64_t>(refreshes, history)) {
    return Bad(kWhat, "count (does not match refreshes)");
  }
  std::vector<DecodedProfile> decoded(count);
  for (DecodedProfile& p : decoded) {
    uint8_t size, has_sketch;
    if (!r.F64(&p.base_time) || !std::isfinite(p.base_time) ||
        (&p != &decoded[0] && p.base_time < (&p - 1)->base_time)) {
      return Bad(kWhat, "base_time");
    }
    if (!r.Byte(&size) || size > kMaxHistory) return Bad(kWhat, "size");
    p.size = size;
    for (int j = 0; j < size; ++j) {
      uint64_t d;
      if (!r.F32(&p.dt[j]) || !r.VarintAtMost(UINT16_MAX, &d)) {
        return Bad(kWhat, "point");
      }
      p.d[j] = static_cast<uint16_t>(d);
    }
    if (!r.Byte(&has_sketch) || has_sketch > 1) return Bad(kWhat, "sketch");
    if (has_sketch == 1) {
      std::string_view bytes;
      if (!r.Str(kMaxSketchBytes, &bytes)) return Bad(kWhat, "sketch");
      Result<BottomSketch> sketch = DecodeSketch(bytes);
      if (!sketch.ok()) return Bad(kWhat, "sketch");
      p.sketch = std::move(sketch).value();
    }
  }
  std::optional<DivergenceModel> fitted;
  if (version == kProfileSetVersion) {  // version 1 blobs end here
    uint8_t has_fitted;
    if (!r.Byte(&has_fitted) || has_fitted > 1) return Bad(kWhat, "fitted");
    if (has_fitted == 1) {
      DivergenceModel m;
      uint64_t k;
      if (!r.F64(&m.static_share) || !r.F64(&m.churn_share) ||
          !r.F64(&m.churn_rate) || !r.VarintAtMost(kMaxScrollItems, &k) ||
          !r.F64(&m.scroll_rate)) {
        return Bad(kWhat, "fitted");
      }
      m.scroll_k = static_cast<int>(k);
      if (!IsValid(m)) return Bad(kWhat, "fitted (invalid model)");
      fitted = m;
    }
  }
  if (!r.done()) return Bad(kWhat, "length (trailing bytes)");
  const auto restored = static_cast<uint32_t>(
      std::min<uint64_t>(refreshes, kMaxRestoredRefreshes));
  ProfileSet set(history);
  if (!Replay(history, std::max<uint32_t>(restored, count), decoded, &set)) {
    return Bad(kWhat, "points (not reachable from the base times)");
  }
  if (fitted) set.set_fitted(*fitted);
  return set;
}

std::string EncodeHostStats(const HostStats& stats) {
  const auto m = std::bit_cast<HostStatsMirror>(stats);
  std::string out;
  PutByte(&out, kHostStatsVersion);
  uint32_t mask = 0;
  for (int i = 0; i < HostStats::kBins; ++i) {
    if (m.bin_count[i] != 0 || m.bin_time[i] != 0) mask |= 1u << i;
  }
  PutVarint64(&out, mask);
  for (int i = 0; i < HostStats::kBins; ++i) {
    if ((mask >> i) & 1) {
      PutFloat(&out, m.bin_count[i]);
      PutFloat(&out, m.bin_time[i]);
    }
  }
  for (float v : m.aggregates) PutFloat(&out, v);
  PutSignalStats(&out, m.signals);
  PutVarint64(&out, m.lm_checks);
  PutVarint64(&out, m.lm_agree);
  PutByte(&out, m.sources_seen);
  for (int i = 0; i < kSignalSources; ++i) {
    if ((m.sources_seen >> i) & 1) PutSignalStats(&out, m.sources[i]);
  }
  return out;
}

Result<HostStats> DecodeHostStats(std::string_view in) {
  constexpr std::string_view kWhat = "host stats";
  static_assert(HostStats::kBins == 32, "the bin mask is a uint32");
  Reader r(in);
  uint8_t version;
  if (Status st = CheckVersion(r, kWhat, kHostStatsVersion, &version);
      !st.ok()) {
    return st;
  }
  HostStatsMirror m{};
  uint64_t mask;
  if (!r.VarintAtMost(UINT32_MAX, &mask)) return Bad(kWhat, "bin mask");
  for (int i = 0; i < HostStats::kBins; ++i) {
    if (((mask >> i) & 1) &&
        (!ReadFloats(r, &m.bin_count[i], 1, NonNegativeFinite) ||
         !ReadFloats(r, &m.bin_time[i], 1, NonNegativeFinite))) {
      return Bad(kWhat, "bins");
    }
  }
  if (!ReadFloats(r, m.aggregates, 4, NonNegativeFinite)) {
    return Bad(kWhat, "aggregates");
  }
  if (!ReadSignalStats(r, version >= 2, &m.signals)) {
    return Bad(kWhat, "signals");
  }
  uint64_t checks, agree;
  if (!r.VarintAtMost(UINT16_MAX, &checks) || !r.VarintAtMost(checks, &agree)) {
    return Bad(kWhat, "last-modified checks");
  }
  if (version >= 3) {  // the per-source statistics
    if (!r.Byte(&m.sources_seen) || m.sources_seen >> kSignalSources != 0) {
      return Bad(kWhat, "source mask");
    }
    for (int i = 0; i < kSignalSources; ++i) {
      if (((m.sources_seen >> i) & 1) &&
          !ReadSignalStats(r, true, &m.sources[i])) {
        return Bad(kWhat, "source signals");
      }
    }
  }
  if (!r.done()) return Bad(kWhat, "length (trailing bytes)");
  m.lm_checks = static_cast<uint16_t>(checks);
  m.lm_agree = static_cast<uint16_t>(agree);
  m.pages = 0;
  return std::bit_cast<HostStats>(m);
}

std::string EncodeSavedPage(const PageSnapshot& state,
                            const ProfileSet* profiles,
                            const RecentSignals* recent,
                            const RateMemory* rate) {
  std::string out;
  PutByte(&out, kSavedPageVersion);
  PutStr(&out, EncodePageState(state));
  PutByte(&out, profiles != nullptr ? 1 : 0);
  if (profiles != nullptr) PutStr(&out, EncodeProfileSet(*profiles));
  PutByte(&out, recent != nullptr ? 1 : 0);
  if (recent != nullptr) {
    for (float v : std::bit_cast<RecentSignalsMirror>(*recent).offsets) {
      PutFloat(&out, v);
    }
  }
  PutByte(&out, rate != nullptr ? 1 : 0);
  if (rate != nullptr) {
    for (float v : rate->draws.rate) PutFloat(&out, v);
    PutByte(&out, rate->draws.counted ? 1 : 0);
    PutFloat(&out, rate->explore_interval);
  }
  return out;
}

Result<SavedPage> DecodeSavedPage(std::string_view in) {
  constexpr std::string_view kWhat = "saved page";
  Reader r(in);
  uint8_t version = 0;
  if (Status st = CheckVersion(r, kWhat, kSavedPageVersion, &version);
      !st.ok()) {
    return st;
  }
  std::string_view state_bytes;
  if (!r.Str(kMaxPageStateBytes, &state_bytes)) return Bad(kWhat, "state");
  Result<PageSnapshot> state = DecodePageState(state_bytes);
  if (!state.ok()) return state.status();
  SavedPage saved{std::move(state).value(), std::nullopt, std::nullopt,
                  std::nullopt};
  uint8_t has_profiles;
  if (!r.Byte(&has_profiles) || has_profiles > 1) {
    return Bad(kWhat, "profiles flag");
  }
  if (has_profiles == 1) {
    std::string_view profile_bytes;
    if (!r.Str(kMaxProfileSetBytes, &profile_bytes)) {
      return Bad(kWhat, "profiles");
    }
    Result<ProfileSet> profiles = DecodeProfileSet(profile_bytes);
    if (!profiles.ok()) return profiles.status();
    saved.profiles = std::move(profiles).value();
  }
  uint8_t has_recent = 0;
  if (version >= 2 && (!r.Byte(&has_recent) || has_recent > 1)) {
    return Bad(kWhat, "recent signals flag");
  }
  if (has_recent == 1) {
    RecentSignalsMirror m;
    auto valid = [](float v) {
      return std::isnan(v) || (std::isfinite(v) && (v >= 0 || v <= -1));
    };
    if (!ReadFloats(r, m.offsets, RecentSignals::kKept, valid)) {
      return Bad(kWhat, "recent signals");
    }
    saved.recent = std::bit_cast<RecentSignals>(m);
  }
  uint8_t has_rate = 0;
  if (version >= 3 && (!r.Byte(&has_rate) || has_rate > 1)) {
    return Bad(kWhat, "rate draws flag");
  }
  if (has_rate == 1) {
    RateMemory m;
    uint8_t counted = 0;
    if (!ReadFloats(r, m.draws.rate.data(), 3, NonNegativeFinite) ||
        !r.Byte(&counted) || counted > 1 ||
        !ReadFloats(r, &m.explore_interval, 1, NonNegativeFinite)) {
      return Bad(kWhat, "rate draws");
    }
    // Ascending draws, all positive or all zero (no posterior yet); only a
    // posterior can be counted in a histogram.
    const auto& d = m.draws.rate;
    const bool none = d[0] == 0 && d[1] == 0 && d[2] == 0;
    if (!(none || (d[0] > 0 && d[0] <= d[1] && d[1] <= d[2])) ||
        (none && counted == 1)) {
      return Bad(kWhat, "rate draws (not ascending and positive)");
    }
    m.draws.counted = counted == 1;
    saved.rate = m;
  }
  if (!r.done()) return Bad(kWhat, "length (trailing bytes)");
  return saved;
}

std::string EncodeSavedGlobals(const HostStats& global, double threshold,
                               const std::optional<HostSpreadState>& spread) {
  std::string out;
  PutByte(&out, kSavedGlobalsVersion);
  PutStr(&out, EncodeHostStats(global));
  PutDouble(&out, std::isfinite(threshold) && threshold > 0 ? threshold : 0.0);
  const bool has_spread =
      spread && std::isfinite(spread->value) && spread->intervals_left > 0;
  PutByte(&out, has_spread ? 1 : 0);
  if (has_spread) {
    PutDouble(&out, spread->value);
    PutVarint64(&out, spread->intervals_left);
    PutVarint64(&out, spread->rounds);
  }
  return out;
}

Result<SavedGlobals> DecodeSavedGlobals(std::string_view in) {
  constexpr std::string_view kWhat = "saved globals";
  Reader r(in);
  uint8_t version = 0;
  if (Status st = CheckVersion(r, kWhat, kSavedGlobalsVersion, &version);
      !st.ok()) {
    return st;
  }
  std::string_view stats_bytes;
  if (!r.Str(kMaxHostStatsBytes, &stats_bytes)) return Bad(kWhat, "stats");
  Result<HostStats> stats = DecodeHostStats(stats_bytes);
  if (!stats.ok()) return stats.status();
  SavedGlobals saved{*stats, 0, std::nullopt};
  if (!r.F64(&saved.threshold) || !std::isfinite(saved.threshold) ||
      saved.threshold < 0) {
    return Bad(kWhat, "threshold");
  }
  uint8_t has_spread = 0;
  if (version >= 2 && (!r.Byte(&has_spread) || has_spread > 1)) {
    return Bad(kWhat, "host spread flag");
  }
  if (has_spread == 1) {
    HostSpreadState spread;
    if (!r.F64(&spread.value) || !std::isfinite(spread.value) ||
        !r.Varint(&spread.intervals_left) || spread.intervals_left == 0 ||
        !r.Varint(&spread.rounds)) {
      return Bad(kWhat, "host spread");
    }
    saved.spread = spread;
  }
  if (!r.done()) return Bad(kWhat, "length (trailing bytes)");
  return saved;
}

}  // namespace freshd::sched
