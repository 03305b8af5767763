#include "sim/population_posterior.h"

#include <algorithm>
#include <cmath>

#include "sched/signal_estimator.h"

namespace freshd::sim {

Result<PopulationPosterior> PopulationPosterior::Create(const WebModel& model,
                                                        uint64_t seed,
                                                        bool signals,
                                                        int particles) {
  if (particles < 16) {
    return Status::InvalidArgument("posterior: at least 16 particles");
  }
  const uint64_t pages = model.pages.size();
  if (pages * static_cast<uint64_t>(particles) > kMaxCells) {
    return Status::InvalidArgument(
        "posterior: pages x particles over " + std::to_string(kMaxCells) +
        " (a web of at most " + std::to_string(kMaxCells / particles) +
        " pages)");
  }
  WebSpec prior = model.spec;  // the same classes, one host of particles
  prior.hosts = 1;
  prior.pages_per_host = static_cast<uint32_t>(particles);
  prior.classes_by_host = false;
  const WebModel draws = WebModel::Build(prior, seed);
  PopulationPosterior out;
  out.signals_ = signals;
  out.particles_.reserve(particles);
  for (uint32_t i = 0; i < draws.pages.size(); ++i) {
    out.particles_.push_back(draws.TrueParams(i));
  }
  out.log_weights_.assign(pages * particles, 0.0f);
  return out;
}

void PopulationPosterior::Observe(uint32_t page, double tau, int signals,
                                  bool changed) {
  const size_t k = particles_.size();
  if (!(tau > 0) || (page + size_t{1}) * k > log_weights_.size()) return;
  float* w = &log_weights_[page * k];
  for (size_t i = 0; i < k; ++i) {
    const sched::PageParams& p = particles_[i];
    double ll;
    if (signals_) {
      sched::SignalTriple x{tau, std::max(0, signals), changed};
      ll = sched::SignalLogLikelihood({p.delta, p.alpha, p.nu}, x);
    } else {
      const double x = p.delta * tau;
      ll = changed ? std::log(std::max(-std::expm1(-x), 1e-300)) : -x;
    }
    w[i] += static_cast<float>(std::max(ll, -1e30));
  }
}

sched::PageParams PopulationPosterior::Mean(uint32_t page,
                                            double importance) const {
  const size_t k = particles_.size();
  sched::PageParams mean{0, importance, 0, 0};
  if ((page + size_t{1}) * k > log_weights_.size()) return mean;
  const float* w = &log_weights_[page * k];
  const float top = *std::max_element(w, w + k);
  double total = 0;
  for (size_t i = 0; i < k; ++i) {
    const double x = std::exp(static_cast<double>(w[i]) - top);
    total += x;
    mean.delta += x * particles_[i].delta;
    mean.alpha += x * particles_[i].alpha;
    mean.nu += x * particles_[i].nu;
  }
  mean.delta /= total;
  mean.alpha /= total;
  mean.nu /= total;
  return mean;
}

std::vector<sched::PageParams> PopulationPosterior::Draws(uint32_t page,
                                                          double importance,
                                                          int count) const {
  const size_t k = particles_.size();
  std::vector<sched::PageParams> out;
  if (count <= 0 || (page + size_t{1}) * k > log_weights_.size()) return out;
  const float* w = &log_weights_[page * k];
  const float top = *std::max_element(w, w + k);
  std::vector<double> weight(k);
  double total = 0;
  for (size_t i = 0; i < k; ++i) {
    weight[i] = std::exp(static_cast<double>(w[i]) - top);
    total += weight[i];
  }
  out.reserve(count);
  const double step = total / count;
  double next = 0.5 * step, seen = 0;
  for (size_t i = 0; i < k && static_cast<int>(out.size()) < count; ++i) {
    seen += weight[i];
    while (seen > next && static_cast<int>(out.size()) < count) {
      out.push_back(particles_[i]);
      out.back().mu = importance;
      next += step;
    }
  }
  while (static_cast<int>(out.size()) < count) {  // rounding at the end
    out.push_back(particles_[k - 1]);
    out.back().mu = importance;
  }
  return out;
}

}  // namespace freshd::sim
