#include "sim/page_process.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace freshd::sim {
namespace {

double RegionRate(const SimPage& p, Region r) {
  return (r == kChurn ? p.churn_rate : p.scroll_rate) / kDay;
}

void AppendWord(std::string& out, uint64_t h) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "w%011" PRIx64 " ", h >> 20);
  out += buf;
}

}  // namespace

EventStream::EventStream(const WebModel& model, uint32_t page, Region region)
    : rng_(HashKey(model.seed, page, 10 + region)),
      rate_(RegionRate(model.pages[page], region)),
      next_(rng_.Exponential(rate_)) {}

void EventStream::Advance() {
  ++count_;
  next_ += rng_.Exponential(rate_);
}

Version VersionAt(const WebModel& model, uint32_t page, double t) {
  Version v;
  for (Region r : {kChurn, kScroll}) {
    EventStream s(model, page, r);
    while (s.next() <= t) s.Advance();
    (r == kChurn ? v.churn : v.scroll) = s.count();
  }
  return v;
}

double VersionDivergence(const SimPage& p, const Version& a, const Version& b) {
  double n = p.static_words + p.churn_words +
             static_cast<double>(p.scroll_items) * p.item_words;
  if (n <= 0) return 0;
  double shared = p.static_words;
  if (a.churn == b.churn) shared += p.churn_words;
  uint64_t gap =
      a.scroll > b.scroll ? a.scroll - b.scroll : b.scroll - a.scroll;
  if (gap < static_cast<uint64_t>(p.scroll_items)) {
    shared += static_cast<double>(p.scroll_items - static_cast<int>(gap)) *
              p.item_words;
  }
  return 1 - shared / (2 * n - shared);
}

std::string PageText(const WebModel& model, uint32_t page, const Version& v) {
  const SimPage& p = model.pages[page];
  std::string out;
  for (int i = 0; i < p.static_words; ++i) {
    AppendWord(out, HashKey(model.seed, page, 20, i));
  }
  for (int i = 0; i < p.churn_words; ++i) {
    AppendWord(out, HashKey(model.seed, page, 21 + (v.churn << 8), i));
  }
  for (int j = p.scroll_items - 1; j >= 0; --j) {
    uint64_t item = v.scroll + static_cast<uint64_t>(j);
    for (int i = 0; i < p.item_words; ++i) {
      AppendWord(out, HashKey(model.seed, page, 22 + (item << 8), i));
    }
  }
  if (!out.empty()) out.pop_back();
  return out;
}

SignalDraw TrueSignal(const WebModel& model, uint32_t page, Region region,
                      uint64_t index) {
  const SimPage& p = model.pages[page];
  Rng rng(HashKey(model.seed, page, 30 + region, index));
  SignalDraw d;
  d.emitted = rng.Uniform() < p.recall;
  const PageClass& c = model.spec.classes[p.cls];
  d.delay = std::clamp(c.delay_days.Sample(rng), 0.0, kMaxSimDelayDays) * kDay;
  return d;
}

FalseSignalStream::FalseSignalStream(const WebModel& model, uint32_t page)
    : rng_(HashKey(model.seed, page, 40)),
      rate_(model.pages[page].false_rate / kDay),
      next_(rng_.Exponential(rate_)) {}

void FalseSignalStream::Advance() { next_ += rng_.Exponential(rate_); }

}  // namespace freshd::sim
