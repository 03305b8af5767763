// libFuzzer target for sim/web_model (the web TOML of `freshd sim` and
// `freshd testweb`): any bytes either parse into a spec inside the bounds of
// sim/README.md or give InvalidArgument; a parsed web of at most 500 pages
// builds, every page's true parameters and divergence model are valid, and
// page 0 (when at most 10,000 words) renders at one day.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sched/divergence_model.h"
#include "sim/page_process.h"
#include "sim/web_model.h"

namespace sim = freshd::sim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  freshd::Result<sim::WebSpec> spec = sim::ParseWebSpec(in, "fuzz");
  if (!spec.ok()) {
    if (spec.status().code() != freshd::Status::Code::kInvalidArgument) {
      __builtin_trap();
    }
    return 0;
  }
  const uint64_t pages = uint64_t{spec->hosts} * spec->pages_per_host;
  if (pages == 0 || pages > sim::kMaxSimPages || spec->classes.empty() ||
      spec->classes.size() > 1000) {
    __builtin_trap();
  }
  if (pages > 500) return 0;
  sim::WebModel model = sim::WebModel::Build(*spec, 1);
  if (model.pages.size() != pages) __builtin_trap();
  for (uint32_t p = 0; p < pages; ++p) {
    const freshd::sched::PageParams t = model.TrueParams(p);
    if (!(t.delta >= 0 && t.delta <= 2 * sim::kMaxSimRatePerDay / sim::kDay) ||
        !(t.mu > 0 && t.mu <= sim::kMaxSimImportance) ||
        !(t.alpha >= 0 && t.alpha <= 1) ||
        !(t.nu >= 0 && t.nu <= sim::kMaxSimRatePerDay / sim::kDay)) {
      __builtin_trap();
    }
    if (!freshd::sched::IsValid(model.TrueModel(p))) __builtin_trap();
  }
  const sim::SimPage& first = model.pages[0];
  const int64_t words = int64_t{first.static_words} + first.churn_words +
                        int64_t{first.scroll_items} * first.item_words;
  if (words < 1 || words > sim::kMaxSimPageWords) __builtin_trap();
  if (words <= 10000) {
    sim::Version v = sim::VersionAt(model, 0, sim::kDay);
    std::string text = sim::PageText(model, 0, v);
    if (text.size() > static_cast<size_t>(words) * 32) __builtin_trap();
  }
  return 0;
}
