#include "sim/oracle_truth.h"

#include <cmath>
#include <utility>

namespace freshd::sim {

void OracleTruth::Set(sched::PageId page, const sched::PageParams& params,
                      const sched::DivergenceModel& model) {
  if (pages_.size() <= page) pages_.resize(size_t{page} + 1);
  pages_[page] = Truth{true, params, model};
}

bool OracleTruth::SetMixture(sched::PageId page,
                             std::vector<sched::WeightedParams> mixture) {
  double total = 0;
  for (const sched::WeightedParams& w : mixture) {
    if (!(w.weight >= 0) || !std::isfinite(w.weight)) return false;
    total += w.weight;
  }
  if (!(total > 0)) mixture.clear();
  if (mixtures_.size() <= page) mixtures_.resize(size_t{page} + 1);
  mixtures_[page] = std::move(mixture);
  return true;
}

const sched::PageParams* OracleTruth::TrueParams(sched::PageId page) const {
  return page < pages_.size() && pages_[page].known ? &pages_[page].params
                                                    : nullptr;
}

const sched::DivergenceModel* OracleTruth::TrueModel(sched::PageId page) const {
  return page < pages_.size() && pages_[page].known ? &pages_[page].model
                                                    : nullptr;
}

std::span<const sched::WeightedParams> OracleTruth::TrueMixture(
    sched::PageId page) const {
  if (page >= mixtures_.size()) return {};
  return mixtures_[page];
}

}  // namespace freshd::sim
