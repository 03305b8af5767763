// The exact Bayes posterior of each page's change model (Δ, α, ν) under the
// web's own population distributions: a diagnostic bound for the estimators
// (`freshd sim --oracle --oracle-posterior`, docs/RESULTS.md (d)).
//
// The prior is the web spec itself: K particles are pages drawn by
// WebModel::Build from the same classes (with another seed), each with
// weight 1/K. A page's posterior is those particles reweighted by the
// likelihood of everything the scheduler has observed of it, without
// forgetting: per crawl interval τ its changed bit and, for policies that
// read signals, the count n of signals received in it (SignalLogLikelihood:
// P(changed, n | τ); the bit alone is 1 − e^{−Δτ} or e^{−Δτ}). Fetch times
// chosen from the signals do not bias this likelihood (they depend only on
// what was observed). Neither signal times, delays nor Last-Modified are
// used, and host structure is ignored, so it is the bound for an estimator
// of counts and bits that knew the population: what no online estimator can
// beat on average, short of reading more per fetch. Plain values; one owner.
#ifndef FRESHD_SIM_POPULATION_POSTERIOR_H_
#define FRESHD_SIM_POPULATION_POSTERIOR_H_

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "sched/crawl_value.h"
#include "sim/web_model.h"

namespace freshd::sim {

class PopulationPosterior {
 public:
  static constexpr int kDefaultParticles = 4096;
  // Log weights cost 4·particles bytes per page: bounded.
  static constexpr uint64_t kMaxCells = uint64_t{1} << 26;  // 256 MB

  // Particles drawn from `model.spec` with `seed`, for model.pages.size()
  // pages; `signals`: whether intervals carry signal counts. InvalidArgument
  // when particles < 16 or pages × particles > kMaxCells.
  static Result<PopulationPosterior> Create(const WebModel& model,
                                            uint64_t seed, bool signals,
                                            int particles = kDefaultParticles);

  // One crawl interval of `page`: τ seconds (> 0, else ignored), `signals`
  // received in it (ignored unless created with signals), changed bit.
  void Observe(uint32_t page, double tau, int signals, bool changed);

  // Posterior means of Δ, α, ν (rates per second); mu = `importance`.
  // Without signals α and ν are the prior's means.
  sched::PageParams Mean(uint32_t page, double importance) const;

  // `count` draws from the page's posterior, equally weighted (systematic
  // resampling of the particles: a particle of weight w appears about
  // w·count times); mu = `importance`. count <= 0: none.
  std::vector<sched::PageParams> Draws(uint32_t page, double importance,
                                       int count) const;

  // The particles (rates per second), in draw order.
  const std::vector<sched::PageParams>& particles() const { return particles_; }

 private:
  PopulationPosterior() = default;

  std::vector<sched::PageParams> particles_;
  bool signals_ = false;
  std::vector<float> log_weights_;  // pages × particles
};

}  // namespace freshd::sim

#endif  // FRESHD_SIM_POPULATION_POSTERIOR_H_
