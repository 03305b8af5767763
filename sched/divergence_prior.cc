#include "sched/divergence_prior.h"

#include <algorithm>
#include <cmath>

namespace freshd::sched {

void DivergencePrior::Add(Level& level, double value) {
  level.sum = static_cast<float>(kDecay * level.sum + value);
  level.weight = static_cast<float>(kDecay * level.weight + 1);
}

double DivergencePrior::Mean(const Level& level, double fallback) {
  return level.weight > 0 ? std::clamp(level.sum / level.weight, 0.0f, 1.0f)
                          : fallback;
}

double DivergencePrior::Saturation(HostId host) const {
  const double global = Mean(global_.all, kDefaultSaturation);
  return host < hosts_.size() ? Mean(hosts_[host].all, global) : global;
}

double DivergencePrior::ScrollSaturation(HostId host) const {
  const double global = Mean(global_.scroll, Saturation(host));
  return host < hosts_.size() ? Mean(hosts_[host].scroll, global) : global;
}

void DivergencePrior::Observe(HostId host, const DivergenceModel& fitted) {
  const double level = SaturationDivergence(fitted);
  if (!std::isfinite(level)) return;
  const bool scroll = fitted.scroll_k > 1 && fitted.scroll_rate > 0 &&
                      fitted.static_share + fitted.churn_share < 1;
  Add(global_.all, level);
  if (scroll) Add(global_.scroll, level);
  if (host >= kMaxHosts) return;
  if (host >= hosts_.size()) hosts_.resize(static_cast<size_t>(host) + 1);
  Add(hosts_[host].all, level);
  if (scroll) Add(hosts_[host].scroll, level);
}

DivergenceFitOptions DivergencePrior::FitOptions(HostId host,
                                                 double rate) const {
  DivergenceFitOptions o;
  o.k_max = 8;
  o.max_evaluations = 150;
  o.event_rate = rate > 0 && std::isfinite(rate) ? rate : 0;
  o.saturation_prior = Saturation(host);
  o.scroll_saturation_prior = ScrollSaturation(host);
  o.saturation_weight = kPseudoPoints;
  o.given_change = true;
  return o;
}

DivergenceModel DivergencePrior::Model(HostId host, double rate) const {
  if (!(rate > 0) || !std::isfinite(rate)) return {};  // static
  return ChurnModelAtLevel(Saturation(host), rate);
}

}  // namespace freshd::sched
