// libFuzzer target for sim/trace: the CSV trace reader never crashes or
// throws, stays within its limits, and what it returns keeps the contract
// (URLs normalised, sorted and distinct; hosts valid; change times sorted,
// distinct and inside each page's lifetime; the change count their sum).
// Input: the file's bytes.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "parse/url.h"
#include "sim/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace freshd;
  sim::TraceLimits limits;
  limits.max_record_bytes = 4096;
  limits.max_pages = 1000;
  limits.max_events = 10000;
  auto t = sim::ParseTraceText(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz",
      limits);
  if (!t.ok()) {
    if (t.status().message().empty()) __builtin_trap();
    return 0;
  }
  if (t->urls.size() != t->pages.size()) __builtin_trap();
  if (t->pages.size() > limits.max_pages) __builtin_trap();
  if (!std::is_sorted(t->hosts.begin(), t->hosts.end())) __builtin_trap();
  uint64_t changes = 0;
  for (size_t i = 0; i < t->pages.size(); ++i) {
    if (i > 0 && !(t->urls[i - 1] < t->urls[i])) __builtin_trap();
    auto again = parse::NormalizeUrl(t->urls[i]);
    if (!again.ok() || *again != t->urls[i]) __builtin_trap();
    const sim::TracePage& p = t->pages[i];
    if (p.host >= t->hosts.size() ||
        t->hosts[p.host] != parse::UrlAuthority(t->urls[i])) {
      __builtin_trap();
    }
    if (!(p.importance > 0) || !(p.deleted > p.created)) __builtin_trap();
    for (size_t k = 0; k < p.changes.size(); ++k) {
      if (k > 0 && !(p.changes[k - 1] < p.changes[k])) __builtin_trap();
      if (!(p.changes[k] > p.created && p.changes[k] <= p.deleted)) {
        __builtin_trap();
      }
      if (p.changes[k] < t->first_time || p.changes[k] > t->last_time) {
        __builtin_trap();
      }
    }
    changes += p.changes.size();
  }
  if (changes != t->changes) __builtin_trap();
  return 0;
}
