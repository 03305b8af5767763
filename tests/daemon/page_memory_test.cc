// The daemon's memory per known page (issue 29 item 5): a frontier of 1M
// pages on 10k hosts under the default policy (ncis), half of them fetched
// with a history (two fetches, a sitemap signal, validators and an outcome
// in the page book, committed), built through PageBook::Add as seeds and links
// add pages, then indexed by the first Select. The heap it grew (glibc
// mallinfo2) per page must stay within the bound measured when it was
// written (bench/scale/README.md has the breakdown by component), so a
// change that adds bytes to every page fails here. ~13 s in a Release
// build. Not built with FRESHD_SANITIZE (tests/CMakeLists.txt): mallinfo2
// does not see AddressSanitizer's allocator.

#include <gtest/gtest.h>
#include <malloc.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "daemon/page_book.h"
#include "parse/url.h"
#include "sched/page_state.h"
#include "sched/scheduler.h"

namespace freshd::daemon {
namespace {

constexpr size_t kPages = 1'000'000;
constexpr size_t kHosts = 10'000;
constexpr double kStart = 1.79e9;
constexpr double kDay = 86400;

double HeapBytes() {
  malloc_trim(0);
  struct mallinfo2 mi = mallinfo2();
  return static_cast<double>(mi.uordblks + mi.hblkhd);
}

std::string Url(size_t host, size_t page) {
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "https://www.site%06zu.example.com/section-%zu/"
                "article-%08zu-a-slug-of-words.html",
                host, page % 37, page);
  return buf;
}

// Heap bytes per page of the scheduler and the page book at kPages.
double BytesPerPage(const std::string& policy) {
  const double before = HeapBytes();
  sched::SchedulerOptions options;
  options.policy = policy;
  options.rate = 1000;
  auto created = sched::Scheduler::Create(options);
  EXPECT_TRUE(created.ok());
  if (!created.ok()) return 0;
  std::unique_ptr<sched::Scheduler> s = std::move(created).value();
  {
    PageBook book(s.get());
    for (size_t i = 0; i < kPages; ++i) {
      const size_t h = i * kHosts / kPages;
      const std::string url = Url(h, i);
      auto host = book.InternHost(parse::UrlAuthority(url));
      EXPECT_TRUE(host.ok());
      if (!host.ok()) return 0;
      auto id = book.Add(url, *host, 1.0, 1u << 30);
      EXPECT_TRUE(id.ok() && *id == i);
      if (!id.ok()) return 0;
    }
    for (sched::PageId p = 0; p < kPages; p += 2) {
      const double t = kStart - 20 * kDay + (p % 97) * 3000.0;
      const double t2 = t + kDay + (p % 89) * 5000.0;
      book.Observe({p, t, sched::FetchedObs{}});
      book.Observe({p, t + 3600, sched::SignalObs{{}, t + 60}});
      // The second fetch through the book: validators, outcome, hash.
      fetch::FetchResult r;
      r.outcome = fetch::OutcomeClass::kOk;
      r.status = 200;
      r.etag = "\"5f3a1c2b-" + std::to_string(p) + "\"";
      r.last_modified = "Wed, 25 Nov 2026 07:28:00 GMT";
      book.Observe(book.RecordFetch(p, r, nullptr, p + 1, t2).observation);
    }
    // Their records committed (the group commit, here into a batch
    // dropped at once): the validators leave memory (daemon/page_book.h
    // "Validators out of memory").
    {
      store::StoreBatch batch;
      book.TakeBatch(&batch);
      book.Committed(true);
    }
    EXPECT_EQ(book.cold_held(), 0u);
    EXPECT_NE(book.meta(2).flags & PageMeta::kValidators, 0);
    (void)s->Select(kStart, [](sched::HostId) { return false; });
    // Spot checks that the frontier is what it claims.
    EXPECT_EQ(book.Find(Url(kHosts - 1, kPages - 1)),
              sched::PageId(kPages - 1));
    EXPECT_EQ(book.url(12345), Url(12345 * kHosts / kPages, 12345));
    EXPECT_EQ(book.meta(2).last_outcome(), "ok");
    EXPECT_TRUE(s->page(2).fetched());
    EXPECT_FALSE(s->page(3).fetched());
    const double bytes = (HeapBytes() - before) / kPages;
    std::printf("%s: %.1f heap bytes per page at %zu pages\n", policy.c_str(),
                bytes, kPages);
    return bytes;
  }
}

TEST(PageMemoryTest, MillionPagesStayWithinTheBound) {
  const auto t0 = std::chrono::steady_clock::now();
  // ncis, the default policy, holds what freshness holds plus each page's
  // recent signal times. Measured: 400.8 bytes a page with the URLs in
  // memory (the page book's share 180, was 345: bench/scale/README.md);
  // 325.4 since the URLs live in a file (daemon/url_index.h: ~25 bytes a
  // URL in memory, was ~100); 305.7 with the URL index at ~16 bytes a URL
  // and PageMeta's one-byte lengths (issue 43 item 2); 285.9 with the
  // validators out of memory once committed (PageMeta 32 B, no block: was
  // a 64-byte block a fetched page). The bound is that plus 5%. Issue 43's
  // goal is 100 all-in at 10M: lower the bound as the frontier shrinks.
  constexpr double kBoundBytesPerPage = 300;
  const double bytes = BytesPerPage("ncis");
  // Something was measured: every page holds at least its scheduler state
  // (sched::kPageStateBytes) on the heap, so a heap count that misses the
  // allocator (an allocator mallinfo2 does not see, or a failed build of the
  // frontier: 0) fails here instead of passing the bound below.
  EXPECT_GE(bytes, static_cast<double>(sched::kPageStateBytes));
  EXPECT_LE(bytes, kBoundBytesPerPage);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  std::printf("built and measured in %.1f s\n", seconds);
}

}  // namespace
}  // namespace freshd::daemon
