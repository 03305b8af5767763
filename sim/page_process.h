// How one simulated page changes: Poisson event streams per region (churn,
// scroll), the page's version at any time, its text, the exact fragment
// staleness between two versions, and its change-indicating signals. All
// pure functions of (model seed, page, time): VersionAt(t) regenerates the
// streams from 0, so a server can answer "content at t" with no state.
// Fragments are words (one shingle per word, so D is exact; region
// boundaries ignored as in docs/MATH.md judgement 5). Times in seconds.
// Thread-safe (no shared state).

#ifndef FRESHD_SIM_PAGE_PROCESS_H_
#define FRESHD_SIM_PAGE_PROCESS_H_

#include <cstdint>
#include <string>

#include "sim/web_model.h"

namespace freshd::sim {

enum Region : int { kChurn = 0, kScroll = 1 };

// A page version: how many churn and scroll events have happened.
struct Version {
  uint64_t churn = 0;
  uint64_t scroll = 0;
  bool operator==(const Version&) const = default;
};

// Event times of one region of one page, in order (seconds from 0).
class EventStream {
 public:
  EventStream(const WebModel& model, uint32_t page, Region region);
  double next() const { return next_; }      // +inf when the region never moves
  uint64_t count() const { return count_; }  // events before next()
  void Advance();

 private:
  Rng rng_;
  double rate_;  // per second
  double next_;
  uint64_t count_ = 0;
};

// The version at time t (events at times <= t counted). O(events).
Version VersionAt(const WebModel& model, uint32_t page, double t);

// Exact Jaccard distance of the word sets of two versions.
double VersionDivergence(const SimPage& page, const Version& a,
                         const Version& b);

// The page's visible text at version v: static words, churn words, then the
// K newest scroll items (newest first), space separated.
std::string PageText(const WebModel& model, uint32_t page, const Version& v);

// Whether the index-th event (0-based) of `region` emits a true signal and
// its delay (seconds); a pure function of (seed, page, region, index).
struct SignalDraw {
  bool emitted = false;
  double delay = 0;
};
SignalDraw TrueSignal(const WebModel& model, uint32_t page, Region region,
                      uint64_t index);

// The stream of false signals of a page (Poisson ν), like EventStream.
class FalseSignalStream {
 public:
  FalseSignalStream(const WebModel& model, uint32_t page);
  double next() const { return next_; }
  void Advance();

 private:
  Rng rng_;
  double rate_;
  double next_;
};

}  // namespace freshd::sim

#endif  // FRESHD_SIM_PAGE_PROCESS_H_
