// What the scheduler is told: one Observation per event about one page.
//
// The daemon (after fetch + parse) and the simulator (from its web model)
// build these and hand them to Scheduler::Observe(). Times are seconds (the
// daemon passes seconds since the Unix epoch; the simulator virtual seconds).
// Plain data: copyable, no invariants beyond those stated per field.

#ifndef FRESHD_SCHED_OBSERVATION_H_
#define FRESHD_SCHED_OBSERVATION_H_

#include <cstdint>
#include <limits>
#include <variant>
#include <vector>

#include "base/sketch.h"

namespace freshd::sched {

using PageId = uint32_t;
using HostId = uint32_t;

// A successful fetch (HTTP 2xx with a body).
struct FetchedObs {
  // True when the content differs from the previous fetch (holistic change,
  // e.g. the text hash changed). Ignored on a page's first fetch.
  bool changed = false;
  // Optional divergence of the new version against each change profile's
  // base version, aligned with Scheduler::ProfileBaseTimes() (oldest first).
  // When empty and `sketch` is set, the scheduler computes it from the base
  // sketches it keeps. Values in [0, 1].
  std::vector<double> base_divergence;
  // Optional bottom-m min-hash sketch of the new version; becomes the base
  // sketch of the new change profile (longevity policies only).
  BottomSketch sketch;
  // Optional server Last-Modified, seconds; < 0 when absent. Used for the
  // change rate only once the host's Last-Modified is trusted: as a quiet
  // time after the newest change, except by the signal policies, whose
  // fetch times follow the signals; they time the change against the
  // signals since the fetch instead (SignalTriple's timed evidence, the
  // claimed times of the newest 4 signals; Scheduler::OnContent).
  double last_modified = -1;
  // The Last-Modified the caller stored from the previous fetch (the
  // validator it sent), seconds; < 0 when unknown. With both set on a
  // refetch, the host's trust check records whether Last-Modified moved
  // exactly when the content did (HostPool::TrustLastModified).
  double previous_last_modified = -1;
};

// HTTP 304 to a conditional GET: the page is unchanged since the last fetch.
struct NotModifiedObs {};

enum class FailureClass : uint8_t {
  kNetwork,
  kDns,
  kTls,
  kTimeout,
  kHttp4xx,
  kHttp5xx,
  kTooLarge,
  kRobotsDenied,
  kRedirectLoop,
};

// A fetch that produced no content. The page keeps its last good version.
struct FailedObs {
  FailureClass failure = FailureClass::kNetwork;
};

// Where a signal came from. Each source has its own recall α_s and
// false-signal rate ν_s per host (HostPool::SourceParams): a source that
// fires on every page view stops buying fetches while a precise one keeps
// its value (sched/signal_estimator.h, "Several sources"). kPushedHint is
// POST /signal. The values are stable (saved in host statistics' masks):
// new sources are appended.
enum class SignalSource : uint8_t {
  kSitemapLastmod,
  kPushedHint,
  kFeedEntry,
  kWebSub,
  kIndexNow,
};
inline constexpr int kSignalSources = 5;

// The source's name in /page, /status and /metrics: "sitemap", "signal",
// "feed", "websub", "indexnow" ("" for a value out of range).
constexpr const char* SignalSourceName(SignalSource source) {
  switch (source) {
    case SignalSource::kSitemapLastmod:
      return "sitemap";
    case SignalSource::kPushedHint:
      return "signal";
    case SignalSource::kFeedEntry:
      return "feed";
    case SignalSource::kWebSub:
      return "websub";
    case SignalSource::kIndexNow:
      return "indexnow";
  }
  return "";
}

// A change-indicating signal (sitemap lastmod or feed entry date newer than
// our copy, or a POST /signal hint). `time` is when the signal was received;
// `changed_at` the change time it claims (a sitemap's lastmod), −∞ when it
// claims none. A signal that arrives late is stale when it is about a change
// our copy already has: the scheduler drops one whose changed_at is not after
// the last fetch, and one with no changed_at received within
// SchedulerOptions::signal_window of the last fetch (the noisy-signals
// paper's appendix C rule for delayed signals).
struct SignalObs {
  SignalSource source = SignalSource::kSitemapLastmod;
  double changed_at = -std::numeric_limits<double>::infinity();
};

enum class DiscoverySource : uint8_t { kSeed, kLink, kSitemap, kHint };

// A URL seen again (it is already known): may raise its importance.
struct DiscoveredObs {
  double importance = 1;
  DiscoverySource source = DiscoverySource::kLink;
};

struct Observation {
  PageId page = 0;
  double time = 0;  // seconds
  std::variant<FetchedObs, NotModifiedObs, FailedObs, SignalObs, DiscoveredObs>
      event;
};

}  // namespace freshd::sched

#endif  // FRESHD_SCHED_OBSERVATION_H_
