#include "sched/page_state.h"

#include <algorithm>

namespace freshd::sched {

void ProfileSet::OnFetch(double time, std::vector<double> divergences,
                         BottomSketch sketch) {
  int n = profiles_.size();
  if (static_cast<int>(divergences.size()) > n) divergences.resize(n);
  for (int i = static_cast<int>(divergences.size()); i < n; ++i) {
    const CompactProfile& p = profiles_.profile(i);
    divergences.push_back(p.size > 0 ? p.point(p.size - 1).d : 0.0);
  }
  int slot = profiles_.OnRefresh(time, divergences);
  if (slot < 0) return;
  if (sketches_.size() <= static_cast<size_t>(slot)) {
    sketches_.resize(static_cast<size_t>(slot) + 1);
  }
  sketches_[static_cast<size_t>(slot)] = std::move(sketch);
}

std::vector<double> ProfileSet::DivergencesFrom(
    const BottomSketch& sketch) const {
  std::vector<double> out;
  for (int i = 0; i < profiles_.size(); ++i) {
    size_t slot = profiles_.profile(i).slot;
    if (slot >= sketches_.size() || sketches_[slot].m == 0) break;
    out.push_back(SketchDivergence(sketches_[slot], sketch));
  }
  return out;
}

std::vector<double> ProfileSet::BaseTimes() const {
  std::vector<double> out;
  for (int i = 0; i < profiles_.size(); ++i) {
    out.push_back(profiles_.profile(i).base_time);
  }
  return out;
}

const BottomSketch* ProfileSet::BaseSketch(int i) const {
  if (i < 0 || i >= profiles_.size()) return nullptr;
  size_t slot = profiles_.profile(i).slot;
  if (slot >= sketches_.size() || sketches_[slot].m == 0) return nullptr;
  return &sketches_[slot];
}

}  // namespace freshd::sched
