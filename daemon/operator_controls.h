// OperatorControls: the operators' runtime controls (POST /control,
// `freshd ctl`): pause, resume, block or unblock a host or a URL pattern.
//   pause   no fetch of a matching URL until resume (a held host: none of
//           its pages, robots.txt, sitemaps or feeds; a held pattern: the
//           pages, sitemaps and site feeds it matches); known pages stay
//           and new matching URLs are still added;
//   block   no fetch, and new matching URLs are not added (counted as
//           turned away) until unblock.
// A host control's target is a host name ("example.com": any port) or an
// authority ("example.com:8080"), matched exactly, lowercase. A pattern is
// an RE2 regex searched in the normalized URL (as [[rule]] url is).
// One control per target: block replaces a pause; pause on a blocked
// target, resume of a block and unblock of a pause are refused.
//
// It owns the controls, their matching (a hash lookup per host, one RE2::Set
// search per URL for all patterns at once), the per-host-id cache the
// dispatcher's gate reads, the turned-away counter and the hand-off of
// changes to the store (TakeBatch, with the engine's group commit; Restore
// at start). What a change means for the scheduler the engine applies
// (daemon/crawl_loop.h ApplyControlChange): a held host is closed in the
// selection index until released (sched::Scheduler::ReopenHost), a page a
// pattern holds is marked (sched::Scheduler::SetHeld: one pass over the
// book's URLs per pattern change; new pages matched as they are added).
// Bounds (Limits): number of controls, target length, RE2 memory per
// pattern and for the set of all patterns.
// Thread: the engine's (scheduler's) thread; not thread-safe.

#ifndef FRESHD_DAEMON_OPERATOR_CONTROLS_H_
#define FRESHD_DAEMON_OPERATOR_CONTROLS_H_

#include <re2/set.h>

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"
#include "daemon/prometheus_text.h"
#include "sched/observation.h"
#include "store/control_table.h"
#include "store/store_batch.h"

namespace freshd::daemon {

class OperatorControls {
 public:
  struct Limits {
    size_t max_controls = 10000;
    size_t max_host_bytes = 261;        // a name of 253 + ":" + port
    size_t max_pattern_bytes = 1024;    // RE2 source
    int64_t pattern_max_mem = 1 << 20;  // RE2 memory budget per pattern
    int64_t set_max_mem = 64 << 20;     // the set of every pattern
  };
  enum class Action { kPause, kResume, kBlock, kUnblock };
  struct Request {
    Action action = Action::kPause;
    char kind = store::ControlRecord::kHost;
    std::string target;
  };
  // What a change touched (Apply).
  struct Change {
    bool hosts = false;
    bool patterns = false;
  };

  OperatorControls() : OperatorControls(Limits{}) {}
  explicit OperatorControls(Limits limits);

  // A POST /control body: {"action": "pause"|"resume"|"block"|"unblock",
  // and "host": H or "pattern": RE}. InvalidArgument naming what is wrong
  // (an unknown action, a bad host, a pattern over max_pattern_bytes, over
  // its memory budget or that RE2 refuses, with RE2's error).
  [[nodiscard]] Result<Request> Parse(std::string_view body) const;

  // Applies `request` at `now_unix`. InvalidArgument for a refused
  // transition (see above); NotFound: resume/unblock of no control;
  // ResourceExhausted: over max_controls, or the pattern set over
  // set_max_mem. Marks the change for the next TakeBatch.
  [[nodiscard]] Result<Change> Apply(const Request& request, double now_unix);

  // Matching. A URL is normalized; `authority` is parse::UrlAuthority's.
  bool Held(std::string_view url) const;     // paused or blocked
  bool Blocked(std::string_view url) const;  // blocked
  bool PatternHeld(std::string_view url) const;
  bool has_patterns() const { return held_patterns_ != nullptr; }
  // Whether a new URL may join the frontier: false (and counted as turned
  // away) when blocked.
  bool Admit(std::string_view url);
  // Whether the host `id` (named `authority`) is held: cached per id until
  // the next host change. Gate reads; O(1) once cached.
  bool HostHeld(sched::HostId id, std::string_view authority);
  // The host ids the cache held before the last host change (to reopen in
  // the selection: the gate closes them again if still held); clears them.
  std::vector<sched::HostId> TakeHostsToReopen();

  // Persistence: whether changes wait, and adds them to `batch`.
  bool marked() const { return !dirty_.empty(); }
  void TakeBatch(store::StoreBatch* batch);
  // At start, before dispatch: the stored controls (a pattern that no
  // longer compiles is skipped and returned in *skipped).
  void Restore(const std::vector<store::ControlRecord>& records,
               std::vector<std::string>* skipped);

  size_t size() const { return controls_.size(); }
  uint64_t turned_away_total() const { return turned_away_; }
  // {"count", "hosts_paused", "hosts_blocked", "patterns_paused",
  //  "patterns_blocked", "turned_away_total", "list": [{"kind": "host" |
  //  "pattern", "target", "action": "pause" | "block", "since"}] (at most
  //  `limit`), "list_truncated"}.
  nlohmann::json Json(size_t limit) const;
  // freshd_controls{kind, action} (gauge), freshd_controls_held_pages
  // (gauge: pages a pattern holds, `held_pages`) and
  // freshd_controls_turned_away_total (counter).
  void AppendMetrics(PrometheusText& out, size_t held_pages) const;

 private:
  using Key = std::pair<char, std::string>;  // kind, target
  struct Entry {
    uint8_t action;
    double since_unix;
  };
  // The hosts' map and pattern sets from controls_; false (state kept)
  // when the pattern sets do not compile within set_max_mem.
  bool Rebuild();
  bool HostMatch(std::string_view url, bool blocked_only) const;

  Limits limits_;
  std::map<Key, Entry> controls_;
  std::unordered_map<std::string, uint8_t> hosts_;   // target -> action
  std::unique_ptr<re2::RE2::Set> held_patterns_;     // null: none
  std::unique_ptr<re2::RE2::Set> blocked_patterns_;  // null: none
  std::map<Key, bool> dirty_;                        // true: put, false: delete
  // Per host id: 0 not known yet, 1 free, 2 held.
  std::vector<uint8_t> host_cache_;
  std::vector<sched::HostId> to_reopen_;
  uint64_t turned_away_ = 0;
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_OPERATOR_CONTROLS_H_
