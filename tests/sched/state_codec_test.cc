// sched/state_codec.h: round trips of PageState, ProfileSet and HostStats,
// the documented byte layout (checked against the public estimators, so a
// layout mirror that drifted from the class would fail here), every
// truncation, every single-bit flip, bad versions, random bytes, and
// HostPool::Restore. Fixed, logged seeds.
#include "sched/state_codec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "base/sketch.h"
#include "sched/scheduler.h"

namespace freshd::sched {
namespace {

constexpr uint64_t kSeed = 20261121;

float F32At(const std::string& s, size_t offset) {
  uint32_t bits = 0;
  for (int i = 0; i < 4; ++i) {
    bits |= static_cast<uint32_t>(static_cast<uint8_t>(s[offset + i]))
            << (8 * i);
  }
  return std::bit_cast<float>(bits);
}

size_t VarintLength(const std::string& s, size_t offset) {
  size_t n = 1;
  while (static_cast<uint8_t>(s[offset + n - 1]) & 0x80) ++n;
  return n;
}

// Where a PageState blob's ChangeRateStats aggregates and its SignalStats
// begin (the layout in state_codec.cc; `aggregates`: 5, or 6 before v4).
size_t PageAggregatesOffset(const std::string& b) {
  size_t o = 1 + 8 + 8 + 32 + 2;
  return o + VarintLength(b, o);
}
size_t PageSignalStatsOffset(const std::string& b, int aggregates = 5) {
  return PageAggregatesOffset(b) + 4 * aggregates;
}

std::string F32Bytes(float v) {
  const uint32_t bits = std::bit_cast<uint32_t>(v);
  std::string out;
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(bits >> (8 * i)));
  return out;
}

PageSnapshot RandomPageState(std::mt19937_64& rng, int observations) {
  std::uniform_real_distribution<double> u(0, 1);
  PageSnapshot s;
  for (int i = 0; i < observations; ++i) {
    double interval = 100 + 86400 * u(rng);
    bool changed = u(rng) < 0.4;
    double since = changed && u(rng) < 0.3 ? interval * u(rng) : -1;
    s.rate_stats.Observe(interval, changed, since);
    SignalTriple x{interval, static_cast<int>(u(rng) * 3), changed};
    if (since >= 0) x.quiet = since;  // timed evidence: quiet < exposure
    s.signal_stats.Observe(x, {1e-5, 0.6, 1e-6});
  }
  s.last_fetch = observations > 0 ? 1.7e9 + u(rng) * 1e6 : kNever;
  s.not_before = u(rng) < 0.5 ? 0 : 1.7e9 + 300;
  s.importance = static_cast<float>(0.5 + u(rng));
  s.rate = static_cast<float>(u(rng) * 1e-4);
  s.alpha = static_cast<float>(u(rng));
  s.nu = static_cast<float>(u(rng) * 1e-6);
  s.interval = static_cast<float>(u(rng) * 1e5);
  s.forced = u(rng) < 0.5 ? 0.0f : 3600.0f;
  s.host = 7;
  s.signals = static_cast<uint16_t>(u(rng) * 10);
  s.fetches = static_cast<uint16_t>(observations);
  s.failures = static_cast<uint8_t>(u(rng) * 3);
  s.flags = PageState::kInFlight;
  s.static_q = static_cast<uint8_t>(u(rng) * 255);
  return s;
}

void ExpectSameRateStats(const ChangeRateStats& a, const ChangeRateStats& b) {
  EXPECT_EQ(a.observations(), b.observations());
  EXPECT_EQ(a.changes(), b.changes());
  EXPECT_EQ(a.exposure(), b.exposure());
  for (RatePrior prior : {RatePrior{1e-5, 1}, RatePrior{1e-3, 0.5}}) {
    EXPECT_EQ(a.Estimate(prior), b.Estimate(prior));
  }
}

TEST(StateCodecTest, PageStateRoundTripKeepsEveryPersistentField) {
  std::cout << "seed " << kSeed << "\n";
  std::mt19937_64 rng(kSeed);
  for (int n : {0, 1, 5, 8, 9, 40, 300}) {
    PageSnapshot s = RandomPageState(rng, n);
    std::string bytes = EncodePageState(s);
    Result<PageSnapshot> d = DecodePageState(bytes);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(d->last_fetch, s.last_fetch);
    EXPECT_EQ(d->not_before, s.not_before);
    ExpectSameRateStats(d->rate_stats, s.rate_stats);
    EXPECT_EQ(d->signal_stats.signalled_changes(),
              s.signal_stats.signalled_changes());
    EXPECT_EQ(d->signal_stats.exposure(), s.signal_stats.exposure());
    EXPECT_EQ(d->signal_stats.quiet(), s.signal_stats.quiet());
    EXPECT_EQ(d->importance, s.importance);
    EXPECT_EQ(d->rate, s.rate);
    EXPECT_EQ(d->alpha, s.alpha);
    EXPECT_EQ(d->nu, s.nu);
    EXPECT_EQ(d->interval, s.interval);
    EXPECT_EQ(d->forced, s.forced);
    EXPECT_EQ(d->signals, s.signals);
    EXPECT_EQ(d->fetches, s.fetches);
    EXPECT_EQ(d->failures, s.failures);
    EXPECT_EQ(d->static_q, s.static_q);
    EXPECT_FALSE(d->in_flight());  // not persisted
    EXPECT_EQ(d->host, 0u);        // process-local, not persisted
    EXPECT_EQ(EncodePageState(*d), bytes);
  }
}

// The layout in state_codec.cc, read back independently: the rate and
// signal statistics' fields must be where the public getters say.
TEST(StateCodecTest, PageStateLayoutMatchesTheEstimators) {
  std::mt19937_64 rng(kSeed + 1);
  for (int n : {3, 8, 20}) {
    PageSnapshot s = RandomPageState(rng, n);
    std::string b = EncodePageState(s);
    size_t o = 1 + 8 + 8;
    double ring_sum = 0;
    for (int i = 0; i < 8; ++i) ring_sum += F32At(b, o + 4 * i);
    o += 32;
    int ring_size = static_cast<uint8_t>(b[o]);
    o += 2;
    o += VarintLength(b, o);
    float agg[5];  // unchanged c, changed c/t, timed changes, quiet t
    for (int i = 0; i < 5; ++i) agg[i] = F32At(b, o + 4 * i);
    o += 20;
    EXPECT_EQ(ring_size, std::min(n, 8));
    EXPECT_FLOAT_EQ(s.rate_stats.observations(),
                    ring_size + agg[0] + agg[1] + agg[3]);
    EXPECT_NEAR(s.rate_stats.exposure(), ring_sum + agg[2] + agg[4],
                1e-6 * s.rate_stats.exposure());
    EXPECT_EQ(F32At(b, o), s.signal_stats.signalled_changes());
    EXPECT_EQ(F32At(b, o + 4), s.signal_stats.unsignalled_changes());
    EXPECT_EQ(F32At(b, o + 8), s.signal_stats.false_signals());
    EXPECT_EQ(F32At(b, o + 12), s.signal_stats.exposure());
    EXPECT_EQ(F32At(b, o + 16), s.signal_stats.quiet());
    EXPECT_EQ(F32At(b, o + 20), s.importance);
  }
}

// Every strict prefix fails; every bit flip fails or decodes to a state
// that encodes and decodes again (no crash, no over-read under ASan).
template <typename Decode>
void ExpectRobust(const std::string& valid, Decode decode) {
  for (size_t n = 0; n < valid.size(); ++n) {
    auto r = decode(std::string_view(valid.data(), n));
    EXPECT_FALSE(r.ok()) << "prefix " << n;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
    }
  }
  EXPECT_FALSE(decode(valid + '\0').ok()) << "trailing byte";
  for (size_t i = 0; i < valid.size() * 8; ++i) {
    std::string flipped = valid;
    flipped[i / 8] = static_cast<char>(flipped[i / 8] ^ (1 << (i % 8)));
    auto r = decode(flipped);
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), Status::Code::kCorruption);
    }
  }
  // The newest: profile sets, host stats and saved globals 2, page states 4.
  for (uint8_t version : {0, 5, 255}) {
    std::string bad = valid;
    bad[0] = static_cast<char>(version);
    auto r = decode(bad);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.status().message().find("version"), std::string::npos);
  }
}

// Version 3 (before ChangeRateStats' single quiet time): six aggregates,
// the quiet time split into unchanged time and timed exposure; version 2
// (before SignalStats' quiet time) also without that float; version 1
// (before static_q) also without the last byte.
TEST(StateCodecTest, OlderPageStateVersionsStillDecode) {
  std::mt19937_64 rng(kSeed + 7);
  PageSnapshot s = RandomPageState(rng, 12);
  s.static_q = 200;
  ASSERT_LT(s.signal_stats.quiet(), s.signal_stats.exposure());
  std::string v4 = EncodePageState(s);
  ASSERT_EQ(static_cast<uint8_t>(v4[0]), kPageStateVersion);
  ASSERT_EQ(kPageStateVersion, 4);
  const size_t at = PageAggregatesOffset(v4);
  float a[5];
  for (int i = 0; i < 5; ++i) a[i] = F32At(v4, at + 4 * i);
  ASSERT_GT(a[4], 0);  // halves add up exactly
  std::string v3 = v4.substr(0, at) + F32Bytes(a[0]) + F32Bytes(a[4] / 2) +
                   F32Bytes(a[1]) + F32Bytes(a[2]) + F32Bytes(a[3]) +
                   F32Bytes(a[4] / 2) + v4.substr(at + 20);
  v3[0] = 3;
  std::string v2 = v3;
  v2.erase(PageSignalStatsOffset(v3, 6) + 16, 4);
  v2[0] = 2;
  std::string v1 = v2.substr(0, v2.size() - 1);
  v1[0] = static_cast<char>(kStateCodecVersion);
  {
    Result<PageSnapshot> d = DecodePageState(v3);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    ExpectSameRateStats(d->rate_stats, s.rate_stats);
    EXPECT_EQ(d->signal_stats.quiet(), s.signal_stats.quiet());
    EXPECT_EQ(EncodePageState(*d), v4);
  }
  for (const std::string* old : {&v2, &v1}) {
    Result<PageSnapshot> d = DecodePageState(*old);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(d->static_q, old == &v2 ? 200 : 0);
    EXPECT_EQ(d->fetches, s.fetches);
    ExpectSameRateStats(d->rate_stats, s.rate_stats);
    // They saw no timed evidence: quiet time = exposure.
    EXPECT_EQ(d->signal_stats.exposure(), s.signal_stats.exposure());
    EXPECT_EQ(d->signal_stats.quiet(), s.signal_stats.exposure());
  }
  std::string wrong = v3;
  wrong[0] = static_cast<char>(kPageStateVersion);  // a v4 header on v3 bytes
  EXPECT_FALSE(DecodePageState(wrong).ok());
  wrong = v2;
  wrong[0] = 3;  // a v3 header on v2 bytes
  EXPECT_FALSE(DecodePageState(wrong).ok());
  wrong = v1;
  wrong[0] = 2;  // a v2 header on v1 bytes
  EXPECT_FALSE(DecodePageState(wrong).ok());
  wrong = v4;
  wrong[0] = static_cast<char>(kStateCodecVersion);  // and the reverse
  EXPECT_FALSE(DecodePageState(wrong).ok());
}

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(
        std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// Blobs written by main's codec at f08ed31, before ChangeRateStats kept its
// ring as 16-bit floats and PageState its SignalStats aside (a PageState after
// 11 observations: intervals 3601.37 s changed, 86399.9 s, 12345.678 s
// changed with Last-Modified 1000.1 s, 0.0625 s, 7.25e6 s changed, 1800.5 s
// changed with 60.25 s, 45000.125 s, 600.3 s changed, 86400 s, 123456.789 s
// changed, 30.7 s changed with 3.3 s; the signal triples (interval, i % 3,
// changed) observed under (1e-5, 0.6, 1e-6); last_fetch 1.7e9 + 0.25,
// not_before 1.7e9 + 300.5, importance 1.5, rate 2.5e-5, α 0.4, ν 1e-7,
// 3 signals, 11 fetches, 1 failure, kProbe, static_q 17; the saved page
// adds a recent signal at 300 s and draws (1e-6, 3e-5, 2e-3)), with what
// main's estimators read from it (the generator's printout).
constexpr std::string_view kMainPageStateV4 =
    "0400001040fc54d9410000208bfc54d94100c0a8476520f14733335340000080"
    "3da040dd4a0000714220c82f47331316440803a49201ec51783fd3de703f78c8"
    "53450000803f01a4a547cb16b2409e17f4418da461409f29ce4ab6d1cd4a0000"
    "c03f17b7d137cdcccc3e95bfd6330000000000000000030b010211";
constexpr std::string_view kMainSavedPageV3 =
    "037b0400001040fc54d9410000208bfc54d94100c0a8476520f1473333534000"
    "00803da040dd4a0000714220c82f47331316440803a49201ec51783fd3de703f"
    "78c853450000803f01a4a547cb16b2409e17f4418da461409f29ce4ab6d1cd4a"
    "0000c03f17b7d137cdcccc3e95bfd6330000000000000000030b010211000100"
    "0096430000c07f0000c07f0000c07f01bd37863582a8fb376f12033b01000000"
    "00";

void ExpectMainsState(const PageSnapshot& s) {
  EXPECT_EQ(s.last_fetch, 1.7e9 + 0.25);
  EXPECT_EQ(s.not_before, 1.7e9 + 300.5);
  EXPECT_EQ(s.importance, 1.5f);
  EXPECT_EQ(s.rate, 2.5e-5f);
  EXPECT_EQ(s.alpha, 0.4f);
  EXPECT_EQ(s.nu, 1e-7f);
  EXPECT_EQ(s.signals, 3);
  EXPECT_EQ(s.fetches, 11);
  EXPECT_EQ(s.failures, 1);
  EXPECT_EQ(s.flags, PageState::kProbe);
  EXPECT_EQ(s.static_q, 17);
  const ChangeRateStats& r = s.rate_stats;
  // Counts are kept exactly; ring values to the 16-bit floats' 2^-11.
  EXPECT_DOUBLE_EQ(r.observations(), 10.910900115966797);
  EXPECT_DOUBLE_EQ(r.changes(), 6.9409000873565674);
  EXPECT_NEAR(r.exposure() / 7593717.3656127453, 1, 4.9e-4);
  const double recent[8] = {
      -1, 123456.7890625, 86400, 600.29998779296875, 45000.125,
      -1, 7250000,        0.0625};
  for (int b = 0; b < 8; ++b) {
    if (recent[b] < 0) {
      EXPECT_EQ(r.RecentInterval(b), -1) << b;
    } else {
      EXPECT_NEAR(r.RecentInterval(b) / recent[b], 1, 4.9e-4) << b;
    }
  }
  EXPECT_EQ(r.RecentChangedRun(), 0);
  EXPECT_NEAR(r.Estimate({1e-5, 1}) / 1.9421226894227909e-05, 1, 1e-3);
  EXPECT_NEAR(r.Estimate({1e-3, 0.5, 0.2}) / 2.5518416515448073e-05, 1, 1e-3);
  EXPECT_NEAR(r.LogLikelihood(3e-5) / -43.926009178070331, 1, 1e-3);
  EXPECT_NEAR(r.LogRateInformation(3e-5) / 5.2553294650887574, 1, 1e-3);
  const SignalStats& g = s.signal_stats;  // exact
  EXPECT_FLOAT_EQ(g.signalled_changes(), 5.56528234f);
  EXPECT_FLOAT_EQ(g.unsignalled_changes(), 30.5115318f);
  EXPECT_FLOAT_EQ(g.false_signals(), 3.52566838f);
  EXPECT_FLOAT_EQ(g.exposure(), 6755535.5f);
  EXPECT_FLOAT_EQ(g.quiet(), 6744283.0f);
}

TEST(StateCodecTest, StatesSavedByTheUnpackedCodecStillRestore) {
  Result<PageSnapshot> page = DecodePageState(FromHex(kMainPageStateV4));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ExpectMainsState(*page);
  // Written again, it is the same layout, ring values rounded to codes.
  const std::string again = EncodePageState(*page);
  EXPECT_EQ(again.size(), FromHex(kMainPageStateV4).size());
  EXPECT_EQ(EncodePageState(DecodePageState(again).value()), again);

  Result<SavedPage> saved = DecodeSavedPage(FromHex(kMainSavedPageV3));
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  ExpectMainsState(saved->state);
  ASSERT_TRUE(saved->recent.has_value());
  ASSERT_TRUE(saved->rate.has_value());
  EXPECT_EQ(saved->rate->draws.rate[1], 3e-5f);
  // Restored into a signal policy's scheduler, it keeps its evidence
  // (beside its PageState) and estimates; saved again, it reads the same.
  SchedulerOptions o;
  o.policy = "ncis";
  o.rate = 1;
  auto sched = Scheduler::Create(o);
  ASSERT_TRUE(sched.ok()) << sched.status().ToString();
  Result<PageId> id = (*sched)->RestorePage(saved->state, std::nullopt,
                                            saved->recent, saved->rate);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  const PageSnapshot back = (*sched)->Snapshot(*id);
  ExpectMainsState(back);
  EXPECT_EQ(EncodePageState(back), EncodePageState(saved->state));
}

TEST(StateCodecTest, PageStateRejectsTruncationsFlipsAndBadVersions) {
  std::mt19937_64 rng(kSeed + 2);
  ExpectRobust(EncodePageState(RandomPageState(rng, 30)), DecodePageState);
}

TEST(StateCodecTest, PageStateRejectsOutOfRangeValues) {
  PageSnapshot s;
  s.last_fetch = 1e9;
  std::string good = EncodePageState(s);
  ASSERT_TRUE(DecodePageState(good).ok());
  auto with_f64 = [&](size_t offset, double v) {
    std::string b = good;
    uint64_t bits = std::bit_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i)
      b[offset + i] = static_cast<char>(bits >> 8 * i);
    return b;
  };
  EXPECT_FALSE(DecodePageState(with_f64(1, std::nan(""))).ok());
  EXPECT_FALSE(DecodePageState(with_f64(1, HUGE_VAL)).ok());  // +inf
  EXPECT_TRUE(DecodePageState(with_f64(1, kNever)).ok());     // never fetched
  EXPECT_FALSE(DecodePageState(with_f64(9, -HUGE_VAL)).ok());
  std::string bad_ring = good;
  bad_ring[49] = 9;  // ring_size > kRing
  EXPECT_FALSE(DecodePageState(bad_ring).ok());
  std::string negative = good;
  negative[17 + 3] = static_cast<char>(0x80);  // ring[0] = -0.0 → sign bit
  negative[17] = 1;                            // -1e-45
  EXPECT_FALSE(DecodePageState(negative).ok());
  // SignalStats' quiet time above its exposure.
  std::mt19937_64 rng(kSeed + 9);
  std::string timed = EncodePageState(RandomPageState(rng, 12));
  ASSERT_TRUE(DecodePageState(timed).ok());
  const size_t quiet = PageSignalStatsOffset(timed) + 16;
  const float exposure = F32At(timed, quiet - 4);
  const uint32_t bits = std::bit_cast<uint32_t>(exposure * 1.01f);
  for (int i = 0; i < 4; ++i) {
    timed[quiet + i] = static_cast<char>(bits >> 8 * i);
  }
  Result<PageSnapshot> over = DecodePageState(timed);
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("signal_stats"), std::string::npos);
}

// Random bytes: each decoder either rejects them as Corruption (no other
// code, no crash) or accepts a state whose encoding is a fixed point (it
// decodes again and re-encodes to the same bytes), so an accepted input is
// one the codec can write back.
template <typename Decode, typename Encode>
int ExpectRejectedOrStable(const std::string& bytes, Decode decode,
                           Encode encode, const char* what) {
  auto r = decode(bytes);
  if (!r.ok()) {
    EXPECT_EQ(r.status().code(), Status::Code::kCorruption)
        << what << ": " << r.status().ToString();
    return 0;
  }
  const std::string once = encode(*r);
  auto again = decode(once);
  EXPECT_TRUE(again.ok()) << what << ": re-encoded bytes rejected";
  if (again.ok()) {
    EXPECT_EQ(encode(*again), once) << what << ": not a fixed point";
  }
  return 1;
}

TEST(StateCodecTest, RandomBytesAreCorruptionOrStable) {
  std::mt19937_64 rng(kSeed + 3);
  int accepted = 0;
  for (int i = 0; i < 24000; ++i) {
    std::string b;
    if (i < 20000) {  // bytes, half of them behind a valid version byte
      b.assign(rng() % 200, '\0');
      for (char& c : b) c = static_cast<char>(rng());
      if (!b.empty() && rng() % 2) b[0] = kStateCodecVersion;
    } else {  // a page state's encoding with 1-3 random bytes replaced
      b = EncodePageState(RandomPageState(rng, 1 + rng() % 30));
      for (int k = 1 + rng() % 3; k > 0; --k) {
        b[1 + rng() % (b.size() - 1)] = static_cast<char>(rng());
      }
    }
    accepted += ExpectRejectedOrStable(
        b, DecodePageState,
        [](const PageSnapshot& s) { return EncodePageState(s); }, "page");
    accepted += ExpectRejectedOrStable(
        b, DecodeProfileSet,
        [](const ProfileSet& s) { return EncodeProfileSet(s); }, "profiles");
    accepted += ExpectRejectedOrStable(
        b, DecodeHostStats,
        [](const HostStats& s) { return EncodeHostStats(s); }, "host");
    accepted += ExpectRejectedOrStable(
        b, DecodeSavedPage,
        [](const SavedPage& s) {
          return EncodeSavedPage(s.state, s.profiles ? &*s.profiles : nullptr,
                                 s.recent ? &*s.recent : nullptr,
                                 s.rate ? &*s.rate : nullptr);
        },
        "saved page");
    accepted += ExpectRejectedOrStable(
        b, DecodeSavedGlobals,
        [](const SavedGlobals& s) {
          return EncodeSavedGlobals(s.stats, s.threshold, s.spread);
        },
        "globals");
    if (HasFailure()) break;  // one input's report, not 20000
  }
  std::cout << "random inputs accepted: " << accepted << "\n";
  EXPECT_GT(accepted, 0) << "no input reached the fixed-point check";
}

ProfileSet RandomProfileSet(std::mt19937_64& rng, int history, int fetches) {
  std::uniform_real_distribution<double> u(0, 1);
  ProfileSet set(history);
  double t = 1.7e9;
  for (int i = 0; i < fetches; ++i) {
    t += u(rng) < 0.1 ? 0 : 3600 * (0.5 + u(rng));  // some repeated times
    std::vector<double> div(set.profiles().size());
    for (double& d : div) d = u(rng);
    std::vector<uint64_t> hashes(20);
    for (uint64_t& h : hashes) h = rng();
    std::sort(hashes.begin(), hashes.end());
    set.OnFetch(t, div, Sketch(hashes, 16));
  }
  return set;
}

void ExpectSameProfiles(const ProfileSet& a, const ProfileSet& b) {
  ASSERT_EQ(a.profiles().size(), b.profiles().size());
  EXPECT_EQ(a.profiles().history(), b.profiles().history());
  EXPECT_EQ(a.profiles().refreshes(), b.profiles().refreshes());
  EXPECT_EQ(a.BaseTimes(), b.BaseTimes());
  for (int i = 0; i < a.profiles().size(); ++i) {
    const CompactProfile& x = a.profiles().profile(i);
    const CompactProfile& y = b.profiles().profile(i);
    ASSERT_EQ(x.size, y.size);
    for (int j = 0; j < x.size; ++j) {
      EXPECT_EQ(x.dt[j], y.dt[j]);
      EXPECT_EQ(x.d[j], y.d[j]);
    }
  }
}

// Base sketches survive the round trip once ProfileSet exposes them
// (`const BottomSketch* BaseSketch(int i) const`, which the encoder
// uses when present); until then a decoded set has none, so divergences
// against a new version start again with the profiles started after it.
template <typename Set>
void ExpectSameSketches(const Set& a, const Set& b, const BottomSketch& probe) {
  if constexpr (requires(const Set& s) { s.BaseSketch(0); }) {
    EXPECT_EQ(a.DivergencesFrom(probe), b.DivergencesFrom(probe));
  } else {
    EXPECT_TRUE(b.DivergencesFrom(probe).empty());
  }
}

TEST(StateCodecTest, ProfileSetRoundTrip) {
  std::mt19937_64 rng(kSeed + 4);
  for (int history : {1, 2, 4, 8}) {
    for (int fetches : {0, 1, 3, 8, 9, 50}) {
      ProfileSet set = RandomProfileSet(rng, history, fetches);
      std::string bytes = EncodeProfileSet(set);
      Result<ProfileSet> d = DecodeProfileSet(bytes);
      ASSERT_TRUE(d.ok()) << history << " " << fetches << " "
                          << d.status().ToString();
      ExpectSameProfiles(set, *d);
      ExpectSameSketches(set, *d, Sketch({1, 5, 9, rng() | 16}, 16));
      EXPECT_EQ(EncodeProfileSet(*d), bytes);
    }
  }
}

// A hand-written v1 blob with base sketches: the decoder restores them, so
// divergences against a new version come from the restored bases.
TEST(StateCodecTest, ProfileSetDecodesBaseSketches) {
  std::mt19937_64 rng(kSeed + 5);
  std::vector<BottomSketch> sketches;
  for (int i = 0; i < 2; ++i) {
    std::vector<uint64_t> h(30);
    for (uint64_t& x : h) x = rng() >> 1;
    std::sort(h.begin(), h.end());
    sketches.push_back(Sketch(h, 8));  // encodes in < 128 bytes
  }
  std::string b;
  b.push_back(1);  // version
  b.push_back(4);  // history
  b.push_back(2);  // refreshes
  b.push_back(2);  // count
  auto put_f64 = [&](double v) {
    uint64_t bits = std::bit_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<char>(bits >> 8 * i));
  };
  auto put_f32 = [&](float v) {
    uint32_t bits = std::bit_cast<uint32_t>(v);
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<char>(bits >> 8 * i));
  };
  auto put_sketch = [&](const BottomSketch& s) {
    std::string enc = EncodeSketch(s);
    b.push_back(1);
    b.push_back(static_cast<char>(enc.size()));  // < 128 bytes
    b += enc;
  };
  put_f64(1000);  // profile 0: one point (dt 500, d 1000)
  b.push_back(1);
  put_f32(500);
  b.push_back(static_cast<char>(0xe8));  // varint 1000
  b.push_back(7);
  put_sketch(sketches[0]);
  put_f64(1500);  // profile 1: no point yet
  b.push_back(0);
  put_sketch(sketches[1]);
  Result<ProfileSet> d = DecodeProfileSet(b);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->BaseTimes(), (std::vector<double>{1000, 1500}));
  EXPECT_EQ(d->profiles().profile(0).d[0], 1000);
  std::vector<double> got = d->DivergencesFrom(sketches[1]);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], SketchDivergence(sketches[0], sketches[1]));
  EXPECT_EQ(got[1], 0.0);

  // The same blob with a dt the base times cannot produce.
  std::string wrong_dt = b;
  size_t dt_offset = 4 + 8 + 1;
  wrong_dt[dt_offset + 3] ^= 0x01;
  EXPECT_FALSE(DecodeProfileSet(wrong_dt).ok());
  ExpectRobust(b, DecodeProfileSet);
}

// The model the scheduler fitted travels with the profiles (version 2), so
// a restart values the page as before; a broken model is Corruption.
TEST(StateCodecTest, ProfileSetKeepsTheFittedModel) {
  std::mt19937_64 rng(kSeed + 7);
  ProfileSet set = RandomProfileSet(rng, 4, 9);
  EXPECT_FALSE(DecodeProfileSet(EncodeProfileSet(set))->fitted().has_value());
  const DivergenceModel model{0.25, 0.5, 3e-5, 7, 2e-6};
  set.set_fitted(model);
  std::string bytes = EncodeProfileSet(set);
  EXPECT_EQ(static_cast<uint8_t>(bytes[0]), kProfileSetVersion);
  Result<ProfileSet> d = DecodeProfileSet(bytes);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_TRUE(d->fitted().has_value());
  EXPECT_EQ(d->fitted()->static_share, model.static_share);
  EXPECT_EQ(d->fitted()->churn_share, model.churn_share);
  EXPECT_EQ(d->fitted()->churn_rate, model.churn_rate);
  EXPECT_EQ(d->fitted()->scroll_k, model.scroll_k);
  EXPECT_EQ(d->fitted()->scroll_rate, model.scroll_rate);
  ExpectSameProfiles(set, *d);
  EXPECT_EQ(EncodeProfileSet(*d), bytes);
  ExpectRobust(bytes, DecodeProfileSet);
  for (DivergenceModel bad :
       {DivergenceModel{1.5, 0, 0, 1, 0}, DivergenceModel{0.5, 0.6, 1e-5, 1, 0},
        DivergenceModel{0.5, 0.5, -1, 1, 0},
        DivergenceModel{0.5, 0, 0, 1, NAN}}) {
    ProfileSet with_bad = set;
    with_bad.set_fitted(bad);
    EXPECT_FALSE(DecodeProfileSet(EncodeProfileSet(with_bad)).ok());
  }
  std::string as_v1 = bytes;  // a v2 body under version 1: trailing bytes
  as_v1[0] = 1;
  EXPECT_FALSE(DecodeProfileSet(as_v1).ok());
}

TEST(StateCodecTest, ProfileSetRejectsInconsistentCounts) {
  std::mt19937_64 rng(kSeed + 6);
  std::string b = EncodeProfileSet(RandomProfileSet(rng, 4, 3));
  std::string more = b;
  more[2] = 5;  // refreshes 5 but only 3 profiles with h = 4
  EXPECT_FALSE(DecodeProfileSet(more).ok());
  ExpectRobust(EncodeProfileSet(RandomProfileSet(rng, 4, 12)),
               DecodeProfileSet);
}

TEST(StateCodecTest, HostStatsRoundTripAndPoolRestore) {
  std::mt19937_64 rng(kSeed + 7);
  std::uniform_real_distribution<double> u(0, 1);
  HostPoolOptions options;
  HostPool pool(options);
  for (int i = 0; i < 2000; ++i) {
    uint32_t host = static_cast<uint32_t>(rng() % 5);
    double interval = 600 + 86400 * u(rng);
    bool changed = u(rng) < 0.3;
    pool.AddPage(host);
    pool.ObserveChange(host, interval, changed,
                       changed && u(rng) < 0.2 ? interval * u(rng) : -1);
    SignalTriple x{interval, static_cast<int>(u(rng) * 2), changed};
    if (changed && u(rng) < 0.5) x.quiet = interval * u(rng);
    pool.ObserveSignals(host, x, {1e-5, 0.5, 1e-6});
    pool.ObserveLastModifiedAgreement(host, u(rng) < 0.95);
  }
  HostPool restored(options);
  Result<HostStats> global = DecodeHostStats(EncodeHostStats(pool.global()));
  ASSERT_TRUE(global.ok()) << global.status().ToString();
  restored.RestoreGlobal(*global);
  for (uint32_t h = 0; h < 5; ++h) {
    std::string bytes = EncodeHostStats(*pool.Find(h));
    Result<HostStats> d = DecodeHostStats(bytes);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(d->pages(), 0u);  // recounted by AddPage on restore
    EXPECT_EQ(d->observations(), pool.Find(h)->observations());
    EXPECT_EQ(EncodeHostStats(*d), bytes);
    restored.Restore(h, *d);
  }
  EXPECT_EQ(restored.GlobalRate(), pool.GlobalRate());
  for (uint32_t h = 0; h < 6; ++h) {  // 5: unknown host, global prior
    EXPECT_EQ(restored.HostRate(h), pool.HostRate(h));
    EXPECT_EQ(restored.TrustLastModified(h), pool.TrustLastModified(h));
    for (bool joint : {false, true}) {
      SignalPrior a = restored.PageSignalPrior(h, joint),
                  b = pool.PageSignalPrior(h, joint);
      EXPECT_EQ(a.center.delta, b.center.delta);
      EXPECT_EQ(a.center.alpha, b.center.alpha);
      EXPECT_EQ(a.center.nu, b.center.nu);
      EXPECT_EQ(a.exposure_weight, b.exposure_weight);
    }
  }
  // Version 1 (SignalStats without the quiet time): the same bytes without
  // the fifth float, read as quiet time = exposure.
  {
    const HostStats& h = *pool.Find(3);
    ASSERT_LT(h.signals().quiet(), h.signals().exposure());
    std::string v2 = EncodeHostStats(h);
    ASSERT_EQ(static_cast<uint8_t>(v2[0]), kHostStatsVersion);
    uint64_t mask = 0;  // the varint bin mask, then 8 bytes per set bit
    const size_t mask_bytes = VarintLength(v2, 1);
    for (size_t i = 0; i < mask_bytes; ++i) {
      mask |= uint64_t{static_cast<uint8_t>(v2[1 + i]) & 0x7fu} << (7 * i);
    }
    size_t o = 1 + mask_bytes + 8 * std::popcount(mask) + 16;
    ASSERT_EQ(F32At(v2, o + 12), h.signals().exposure());
    std::string v1 = v2;
    ASSERT_EQ(v1.back(), 0);  // no sources seen: version 3's empty mask
    v1.pop_back();
    v1.erase(o + 16, 4);
    v1[0] = 1;
    Result<HostStats> d = DecodeHostStats(v1);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(d->signals().exposure(), h.signals().exposure());
    EXPECT_EQ(d->signals().quiet(), h.signals().exposure());
    EXPECT_EQ(d->TrustLastModified(), h.TrustLastModified());
    v1[0] = static_cast<char>(kHostStatsVersion);
    EXPECT_FALSE(DecodeHostStats(v1).ok());
  }
  ExpectRobust(EncodeHostStats(*pool.Find(2)), DecodeHostStats);

  std::string globals = EncodeSavedGlobals(pool.global(), 123.25);
  Result<SavedGlobals> g = DecodeSavedGlobals(globals);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->threshold, 123.25);
  EXPECT_EQ(EncodeHostStats(g->stats), EncodeHostStats(*global));
  ExpectRobust(globals, DecodeSavedGlobals);
  // A non-finite threshold is written as 0 (never read back as NaN).
  EXPECT_EQ(
      DecodeSavedGlobals(EncodeSavedGlobals(pool.global(), NAN))->threshold,
      0.0);
  EXPECT_FALSE(g->spread.has_value());
  // Version 1: no spread flag after the threshold.
  std::string v1 = globals;
  ASSERT_EQ(v1.back(), 0);
  v1.pop_back();
  v1[0] = 1;
  Result<SavedGlobals> old = DecodeSavedGlobals(v1);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->threshold, 123.25);
  EXPECT_FALSE(old->spread.has_value());
  v1[0] = static_cast<char>(kSavedGlobalsVersion);
  EXPECT_FALSE(DecodeSavedGlobals(v1).ok());
}

// Version 3: each (host, source)'s own signal statistics (issue 44 item
// 4) round-trip and restore to the same per-source estimates; a version-2
// blob (no mask) still decodes, with no source seen.
TEST(StateCodecTest, HostStatsKeepEachSourcesStatistics) {
  std::mt19937_64 rng(kSeed + 11);
  std::uniform_real_distribution<double> u(0, 1);
  HostPool pool;
  const SignalSource sources[] = {SignalSource::kFeedEntry,
                                  SignalSource::kIndexNow};
  for (uint32_t host = 0; host < 3; ++host) pool.AddPage(host);
  pool.NoteSource(1, SignalSource::kFeedEntry);
  pool.NoteSource(1, SignalSource::kIndexNow);
  pool.NoteSource(2, SignalSource::kWebSub);
  for (int i = 0; i < 500; ++i) {
    const uint32_t host = static_cast<uint32_t>(rng() % 3);
    const double interval = 600 + 86400 * u(rng);
    const bool changed = u(rng) < 0.4;
    pool.ObserveChange(host, interval, changed);
    for (SignalSource source : sources) {
      SignalTriple x{interval, static_cast<int>(u(rng) * 4), changed};
      pool.ObserveSourceSignals(host, source, x, {1e-5, 0.5, 1e-5});
    }
    SignalTriple w{interval, changed ? 1 : 0, changed};
    pool.ObserveSourceSignals(host, SignalSource::kWebSub, w,
                              {1e-5, 0.5, 1e-6});
  }
  ASSERT_EQ(pool.SourcesInPlay(1), 2);
  ASSERT_GT(pool.Find(1)->source_signals(SignalSource::kIndexNow).exposure(),
            0);
  // Unseen sources learn nothing.
  EXPECT_EQ(pool.Find(0)->source_signals(SignalSource::kFeedEntry).exposure(),
            0);
  HostPool restored;
  ASSERT_TRUE(DecodeHostStats(EncodeHostStats(pool.global())).ok());
  restored.RestoreGlobal(*DecodeHostStats(EncodeHostStats(pool.global())));
  for (uint32_t h = 0; h < 3; ++h) {
    const std::string bytes = EncodeHostStats(*pool.Find(h));
    Result<HostStats> d = DecodeHostStats(bytes);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    EXPECT_EQ(d->sources_seen(), pool.Find(h)->sources_seen());
    EXPECT_EQ(EncodeHostStats(*d), bytes);
    restored.Restore(h, *d);
    ExpectRobust(bytes, DecodeHostStats);
  }
  for (uint32_t h = 0; h < 3; ++h) {
    EXPECT_EQ(restored.SourcesInPlay(h), pool.SourcesInPlay(h));
    for (int i = 0; i < kSignalSources; ++i) {
      const auto source = static_cast<SignalSource>(i);
      const SignalParams a = restored.SourceParams(h, source);
      const SignalParams b = pool.SourceParams(h, source);
      EXPECT_EQ(a.alpha, b.alpha);
      EXPECT_EQ(a.nu, b.nu);
      EXPECT_EQ(a.delta, b.delta);
      EXPECT_EQ(restored.SourceWeight(h, source), pool.SourceWeight(h, source));
    }
  }
  // Host 1 learnt its two sources apart (different counts, so different
  // estimates), unlike a host that has seen neither.
  EXPECT_NE(pool.SourceParams(1, SignalSource::kFeedEntry).nu,
            pool.SourceParams(1, SignalSource::kWebSub).nu);
  // Version 2: the same bytes up to the mask, which it did not have.
  const HostStats& h0 = *pool.Find(0);  // no source seen: mask 0, last
  std::string v2 = EncodeHostStats(h0);
  ASSERT_EQ(v2.back(), 0);
  v2.pop_back();
  v2[0] = 2;
  Result<HostStats> old = DecodeHostStats(v2);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->sources_seen(), 0);
  EXPECT_EQ(EncodeHostStats(*old), EncodeHostStats(h0));
  // A version-2 blob of a host with sources cannot end with them: read as
  // version 2 the mask and stats are trailing bytes.
  std::string with_sources = EncodeHostStats(*pool.Find(1));
  with_sources[0] = 2;
  EXPECT_FALSE(DecodeHostStats(with_sources).ok());
  // A mask naming a source that does not exist is corrupt.
  std::string bad = EncodeHostStats(h0);
  bad.back() = static_cast<char>(1u << kSignalSources);
  EXPECT_FALSE(DecodeHostStats(bad).ok());
}

// The pool's cached host-rate spread survives a restore: the rebuilt pool
// uses the same (slightly old) spread and recomputes it when the original
// does, so both keep answering alike.
TEST(StateCodecTest, HostSpreadRoundTrip) {
  std::mt19937_64 rng(kSeed + 9);
  std::uniform_real_distribution<double> u(0, 1);
  HostPool pool;
  for (int i = 0; i < 600; ++i) {
    const uint32_t host = static_cast<uint32_t>(rng() % 6);
    const double rate = 1e-5 * (host + 1);
    const double interval = 86400 * (0.2 + u(rng));
    pool.AddPage(host);
    pool.ObserveChange(host, interval, u(rng) < 1 - std::exp(-rate * interval));
  }
  pool.HostRate(0);  // computes the spread ...
  pool.ObserveChange(0, 86400, true);
  pool.ObserveChange(1, 86400, true);  // ... which is now 2 intervals old
  std::optional<HostSpreadState> state = pool.spread_state();
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->intervals_left, 4u);  // 6 hosts: recomputed every 6
  Result<SavedGlobals> g =
      DecodeSavedGlobals(EncodeSavedGlobals(pool.global(), 1, state));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_TRUE(g->spread.has_value());
  EXPECT_EQ(g->spread->value, state->value);
  EXPECT_EQ(g->spread->intervals_left, state->intervals_left);
  EXPECT_EQ(g->spread->rounds, state->rounds);
  ExpectRobust(EncodeSavedGlobals(pool.global(), 1, state), DecodeSavedGlobals);

  HostPool restored, fresh;
  for (HostPool* p : {&restored, &fresh}) {
    p->RestoreGlobal(g->stats);
    for (uint32_t h = 0; h < 6; ++h) p->Restore(h, *pool.Find(h));
  }
  restored.RestoreSpread(*g->spread);
  EXPECT_EQ(restored.HostRateSpread(), pool.HostRateSpread());
  EXPECT_NE(fresh.HostRateSpread(), pool.HostRateSpread());  // it matters
  for (int i = 0; i < 4; ++i) {
    for (HostPool* p : {&pool, &restored}) p->ObserveChange(2, 3600, true);
    EXPECT_EQ(restored.HostRateSpread(), pool.HostRateSpread()) << i;
    EXPECT_EQ(restored.HostRate(2), pool.HostRate(2)) << i;
  }

  // A saved countdown beyond any period (a corrupt record) is capped at the
  // sample size: the spread is recomputed after that many intervals.
  HostPoolOptions small;
  small.host_spread_sample = 3;
  HostPool capped(small);
  capped.RestoreGlobal(g->stats);
  for (uint32_t h = 0; h < 6; ++h) capped.Restore(h, *pool.Find(h));
  capped.RestoreSpread({0.5, uint64_t{1} << 60, 0});
  ASSERT_TRUE(capped.spread_state().has_value());
  EXPECT_EQ(capped.spread_state()->intervals_left, 3u);
  EXPECT_EQ(capped.HostRateSpread(), 0.5);
  for (int i = 0; i < 3; ++i) capped.ObserveChange(0, 3600, true);
  EXPECT_NE(capped.HostRateSpread(), 0.5);

  // Bad spreads are errors, not values.
  std::string good = EncodeSavedGlobals(pool.global(), 1, state);
  std::string nan_value = EncodeSavedGlobals(pool.global(), 1, std::nullopt);
  const size_t spread_at = nan_value.size();  // after the flag
  nan_value.back() = 1;
  nan_value.append(good.substr(spread_at));
  ASSERT_EQ(nan_value, good);
  const double bad = NAN;
  std::memcpy(nan_value.data() + spread_at, &bad, sizeof bad);
  EXPECT_FALSE(DecodeSavedGlobals(nan_value).ok());
  std::string zero_left = good;
  zero_left[spread_at + 8] = 0;  // intervals_left varint (< 128 here)
  EXPECT_FALSE(DecodeSavedGlobals(zero_left).ok());
  EXPECT_FALSE(DecodeSavedGlobals(good.substr(0, good.size() - 1)).ok());
}

TEST(StateCodecTest, SavedPageRoundTripWithAndWithoutProfiles) {
  std::mt19937_64 rng(kSeed + 8);
  PageSnapshot s = RandomPageState(rng, 12);
  ProfileSet set = RandomProfileSet(rng, 4, 10);
  RecentSignals recent;  // an instant, a whole day, one unknown, one unset
  recent.Add(1, 300);
  recent.Add(2, 86400, true);
  recent.Add(3, NAN);
  const ProfileSet* cases[] = {nullptr, &set};
  for (const ProfileSet* p : cases) {
    for (const RecentSignals* r :
         {static_cast<RecentSignals*>(nullptr), &recent}) {
      std::string bytes = EncodeSavedPage(s, p, r);
      Result<SavedPage> d = DecodeSavedPage(bytes);
      ASSERT_TRUE(d.ok()) << d.status().ToString();
      EXPECT_EQ(EncodePageState(d->state), EncodePageState(s));
      ASSERT_EQ(d->profiles.has_value(), p != nullptr);
      if (p != nullptr) ExpectSameProfiles(*p, *d->profiles);
      ASSERT_EQ(d->recent.has_value(), r != nullptr);
      if (r != nullptr) {
        EXPECT_EQ(std::memcmp(&*d->recent, r, sizeof *r), 0);
        // They place signals as the saved ones do: of 2 signals, the
        // first claims the change at 300 s, the second (a day) follows it.
        SignalTriple a{1000, 3, true}, b = a;
        ASSERT_TRUE(r->Place(2, 300, &b));
        EXPECT_TRUE(d->recent->Place(2, 300, &a));
        EXPECT_EQ(b.signals_after, 1);
        EXPECT_EQ(a.signals_after, b.signals_after);
        EXPECT_EQ(a.signal_at_change, b.signal_at_change);
      }
      ExpectRobust(bytes, DecodeSavedPage);
    }
  }
  // Version 1: no recent-signals flag (nor rate flag) after the profiles.
  std::string v1 = EncodeSavedPage(s, &set);
  ASSERT_EQ(v1.back(), 0);
  v1.pop_back();
  ASSERT_EQ(v1.back(), 0);
  v1.pop_back();
  v1[0] = 1;
  Result<SavedPage> old = DecodeSavedPage(v1);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_TRUE(old->profiles.has_value());
  EXPECT_FALSE(old->recent.has_value());
  // Offsets in (−1, 0) or infinite mean nothing: corrupt.
  std::string good = EncodeSavedPage(s, nullptr, &recent);
  for (float bad : {-0.5f, INFINITY, -INFINITY}) {
    std::string b = good;
    const uint32_t bits = std::bit_cast<uint32_t>(bad);
    for (int i = 0; i < 4; ++i)  // the last offset, before the rate flag
      b[b.size() - 5 + i] = static_cast<char>(bits >> (8 * i));
    EXPECT_FALSE(DecodeSavedPage(b).ok()) << bad;
  }
}

TEST(StateCodecTest, SavedPageKeepsTheRateDrawsAndExploreInterval) {
  std::mt19937_64 rng(kSeed + 9);
  PageSnapshot s = RandomPageState(rng, 12);
  RateMemory m;
  m.draws.rate = {1e-6f, 3e-5f, 2e-3f};
  m.draws.counted = true;
  m.explore_interval = 86400;
  RateMemory none;  // no posterior yet, no exploration interval
  for (const RateMemory* r : {&m, &none}) {
    std::string bytes = EncodeSavedPage(s, nullptr, nullptr, r);
    Result<SavedPage> d = DecodeSavedPage(bytes);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    ASSERT_TRUE(d->rate.has_value());
    EXPECT_EQ(d->rate->draws.rate, r->draws.rate);
    EXPECT_EQ(d->rate->draws.counted, r->draws.counted);
    EXPECT_EQ(d->rate->explore_interval, r->explore_interval);
    EXPECT_EQ(EncodeSavedPage(d->state, nullptr, nullptr, &*d->rate), bytes);
    ExpectRobust(bytes, DecodeSavedPage);
  }
  // Version 2 records carry no rate memory; a version-2 byte with one is
  // corrupt (trailing bytes).
  std::string v2 = EncodeSavedPage(s, nullptr);
  ASSERT_EQ(v2.back(), 0);
  v2.pop_back();
  v2[0] = 2;
  Result<SavedPage> old = DecodeSavedPage(v2);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_FALSE(old->rate.has_value());
  std::string v2_with = EncodeSavedPage(s, nullptr, nullptr, &m);
  v2_with[0] = 2;
  EXPECT_FALSE(DecodeSavedPage(v2_with).ok());
  // Draws out of order, negative, NaN; a counted empty posterior; a bad
  // counted byte: corrupt.
  const std::string good = EncodeSavedPage(s, nullptr, nullptr, &m);
  const size_t draws_at = good.size() - 17;  // 3 floats, counted, interval
  auto with_draw = [&](int i, float v) {
    std::string b = good;
    const uint32_t bits = std::bit_cast<uint32_t>(v);
    for (int k = 0; k < 4; ++k)
      b[draws_at + 4 * i + k] = static_cast<char>(bits >> (8 * k));
    return b;
  };
  ASSERT_EQ(with_draw(1, 3e-5f), good);
  EXPECT_FALSE(DecodeSavedPage(with_draw(1, 5e-3f)).ok());  // not ascending
  EXPECT_FALSE(DecodeSavedPage(with_draw(0, -1e-6f)).ok());
  EXPECT_FALSE(DecodeSavedPage(with_draw(2, NAN)).ok());
  std::string bad_counted = good;
  bad_counted[draws_at + 12] = 2;
  EXPECT_FALSE(DecodeSavedPage(bad_counted).ok());
  RateMemory counted_empty;
  counted_empty.draws.counted = true;
  EXPECT_FALSE(
      DecodeSavedPage(EncodeSavedPage(s, nullptr, nullptr, &counted_empty))
          .ok());
}

}  // namespace
}  // namespace freshd::sched
