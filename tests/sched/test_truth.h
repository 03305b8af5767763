// A sched::ModelSource for tests of oracle mode: the truth the test sets,
// told to the scheduler (Scheduler::ModelChanged) as the simulator's
// OracleTruth (sim/oracle_truth.h) tells it. Outlives its scheduler.

#ifndef FRESHD_TESTS_SCHED_TEST_TRUTH_H_
#define FRESHD_TESTS_SCHED_TEST_TRUTH_H_

#include <cmath>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "sched/model_source.h"
#include "sched/scheduler.h"

namespace freshd::sched {

class TestTruth final : public ModelSource {
 public:
  void Set(Scheduler& s, PageId page, const PageParams& params,
           const DivergenceModel& model) {
    params_[page] = params;
    models_[page] = model;
    s.ModelChanged(page);
  }
  // As the simulator's: a negative or non-finite weight changes nothing;
  // all weights 0 (or none) remove the mixture.
  void SetMixture(Scheduler& s, PageId page,
                  std::vector<WeightedParams> mixture) {
    double total = 0;
    for (const WeightedParams& w : mixture) {
      if (!(w.weight >= 0) || !std::isfinite(w.weight)) return;
      total += w.weight;
    }
    if (!(total > 0)) mixture.clear();
    mixtures_[page] = std::move(mixture);
    s.ModelChanged(page);
  }

  const PageParams* TrueParams(PageId page) const override {
    auto it = params_.find(page);
    return it == params_.end() ? nullptr : &it->second;
  }
  const DivergenceModel* TrueModel(PageId page) const override {
    auto it = models_.find(page);
    return it == models_.end() ? nullptr : &it->second;
  }
  std::span<const WeightedParams> TrueMixture(PageId page) const override {
    auto it = mixtures_.find(page);
    if (it == mixtures_.end()) return {};
    return it->second;
  }

 private:
  std::map<PageId, PageParams> params_;
  std::map<PageId, DivergenceModel> models_;
  std::map<PageId, std::vector<WeightedParams>> mixtures_;
};

}  // namespace freshd::sched

#endif  // FRESHD_TESTS_SCHED_TEST_TRUTH_H_
