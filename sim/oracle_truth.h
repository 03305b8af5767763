// The simulator's oracle: each page's true parameters, divergence curve and
// (--oracle-posterior-draws) weighted parameter mixture, by the page's id in
// one scheduler, handed to that scheduler as its sched::ModelSource. The
// setters store the truth; the caller then tells the scheduler
// (Scheduler::ModelChanged), which re-indexes the page. Owned by the
// simulation beside its scheduler (it must outlive it); one thread.

#ifndef FRESHD_SIM_ORACLE_TRUTH_H_
#define FRESHD_SIM_ORACLE_TRUTH_H_

#include <span>
#include <vector>

#include "sched/model_source.h"

namespace freshd::sim {

class OracleTruth final : public sched::ModelSource {
 public:
  // The page's true parameters and divergence curve.
  void Set(sched::PageId page, const sched::PageParams& params,
           const sched::DivergenceModel& model);
  // The page's model as weighted draws. Returns false (nothing changed) for
  // a non-finite or negative weight; a set whose weights are all 0, or an
  // empty one, removes the page's mixture.
  bool SetMixture(sched::PageId page,
                  std::vector<sched::WeightedParams> mixture);

  const sched::PageParams* TrueParams(sched::PageId page) const override;
  const sched::DivergenceModel* TrueModel(sched::PageId page) const override;
  std::span<const sched::WeightedParams> TrueMixture(
      sched::PageId page) const override;

 private:
  struct Truth {
    bool known = false;
    sched::PageParams params;
    sched::DivergenceModel model;
  };
  std::vector<Truth> pages_;
  std::vector<std::vector<sched::WeightedParams>> mixtures_;  // empty: none
};

}  // namespace freshd::sim

#endif  // FRESHD_SIM_ORACLE_TRUTH_H_
