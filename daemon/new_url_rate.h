// NewUrlRate: how many new URLs one host may add to the frontier per minute
// ([crawler] max_new_urls_per_host_per_minute; issue #43 item 3). A token
// bucket per host: it holds at most one minute's worth of URLs, starts
// full and refills at `per_minute` / 60 a second; a new URL takes one
// token, and with none left the URL is turned away (Frontier counts it).
// A host of 100,000-link pages and 50,000-URL sitemaps would otherwise add
// its URLs as fast as the parse pool reads them, and the scheduler's thread
// spends its time adding pages no connection can fetch for hours.
//
// Dropped, not deferred: keeping the URLs turned away (to add them later)
// would cost the very memory the bound saves, for a host that offers
// without limit. Nothing is lost for good: a sitemap is read again, and
// the pages that linked a URL are fetched again and offer it again. A host
// at the default rate already adds far more than politeness lets it be
// fetched ([politeness] min_delay 1 s: 60 pages a minute).
//
// Memory: 8 bytes a host (a vector by host id, as far as the largest id
// that offered a URL: 800 KB at 100,000 hosts). Time: Unix seconds, kept
// as tenths of a second since the first call.
// Not thread-safe: the scheduler's thread (the Frontier owns it).

#ifndef FRESHD_DAEMON_NEW_URL_RATE_H_
#define FRESHD_DAEMON_NEW_URL_RATE_H_

#include <cstdint>
#include <vector>

#include "sched/observation.h"

namespace freshd::daemon {

class NewUrlRate {
 public:
  // `per_minute` 0: no bound.
  explicit NewUrlRate(uint64_t per_minute = 0);

  uint64_t per_minute() const { return per_minute_; }
  bool bounded() const { return per_minute_ > 0; }

  // Whether `host` may add a new URL at `now` (nothing taken).
  bool Allows(sched::HostId host, double now);
  // A new URL of `host` was added: one token taken (after Allows).
  void Take(sched::HostId host);

 private:
  struct Bucket {
    float tokens = 0;
    uint32_t at = 0;  // tenths of a second since start_, of `tokens`
  };

  uint64_t per_minute_;
  double start_ = -1;          // Unix s of the first call
  std::vector<Bucket> hosts_;  // by host id; a new host's bucket is full
};

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_NEW_URL_RATE_H_
