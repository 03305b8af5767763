// The simulated web as HTTP answers, in compressed time (`freshd testweb`).
// Host "h<H>.<domain>" serves the pages of model host H; virtual time runs
// 86400 / day_seconds times faster than the wall clock from `start_unix`.
// Every answer is a pure function of (model, request, wall time), so a
// server needs no state and the ground truth can be recomputed later:
//   /             index page linking every page of the host (at most 10,000)
//   /p/N          page N's HTML at the current version; ETag names the
//                 version and, for pages whose class says last_modified,
//                 Last-Modified its last change; If-None-Match with the
//                 current ETag gives 304
//   /robots.txt   allow all, and a Sitemap line
//   /sitemap.xml  the host's pages with lastmod = their latest signal (true
//                 signals after their delay, and false ones), if any
//   /truth?page=N ground truth JSON: version, changes, last change
//   /feed.xml     with TestWebOptions::feeds only: an Atom feed of the
//                 host's feed_entries most recently changed pages, each
//                 dated by its true latest change (a publisher's own log:
//                 no delay, no false entries, but only the latest few);
//                 ETag names its content, If-None-Match gives 304; every
//                 HTML page links it with <link rel=alternate>
// Thread-safe: const after construction.

#ifndef FRESHD_SIM_TEST_WEB_H_
#define FRESHD_SIM_TEST_WEB_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/page_process.h"
#include "sim/web_model.h"
#include "sim/web_responder.h"

namespace freshd::sim {

struct TestWebOptions {
  double day_seconds = 86400;  // wall seconds per virtual day, > 0
  double start_unix = 0;       // wall time of virtual time 0
  std::string domain = "test";
  bool feeds = false;          // serve /feed.xml and link it from pages
  uint32_t feed_entries = 20;  // pages in a feed, 1..1000
};

// A page's state at one virtual time (seconds from 0).
struct PageTimeline {
  Version version;
  double last_change = -1;  // virtual time of the latest event, -1: none
  double last_signal = -1;  // virtual time of the latest signal, -1: none
};

class TestWeb : public WebResponder {
 public:
  TestWeb(WebModel model, TestWebOptions options);

  // Answers a GET. `host_header` as sent (port allowed); `if_none_match`
  // empty when absent; `unix_now` the wall clock.
  WebResponse Respond(std::string_view host_header, std::string_view target,
                      std::string_view if_none_match,
                      double unix_now) const override;

  double VirtualTime(double unix_now) const;
  double UnixTime(double virtual_time) const;
  PageTimeline PageAt(uint32_t page, double virtual_time) const;
  // "h<H>.<domain>"; the host id of such a name (port ignored), if valid.
  std::string HostName(uint32_t host) const;
  std::optional<uint32_t> HostId(std::string_view host_header) const;

  const WebModel& model() const { return model_; }
  const TestWebOptions& options() const { return options_; }

 private:
  WebResponse Index(uint32_t host) const;
  WebResponse Page(uint32_t host, uint32_t page, std::string_view inm,
                   double now_virtual) const;
  WebResponse Robots(std::string_view host_header) const;
  WebResponse Sitemap(uint32_t host, std::string_view host_header,
                      double now_virtual) const;
  WebResponse Truth(std::string_view query, double now_virtual) const;
  WebResponse Feed(uint32_t host, std::string_view host_header,
                   std::string_view inm, double now_virtual) const;
  // The <head> element of an HTML page titled `title`.
  std::string Head(const std::string& title) const;

  WebModel model_;
  TestWebOptions options_;
};

}  // namespace freshd::sim

#endif  // FRESHD_SIM_TEST_WEB_H_
