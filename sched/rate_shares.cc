#include "sched/rate_shares.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace freshd::sched {
namespace {

bool Known(double lambda) { return std::isfinite(lambda) && lambda >= 0; }

}  // namespace

std::vector<double> NextRateShares(std::span<const ShareMember> members,
                                   double total,
                                   const RateShareOptions& options) {
  const size_t n = members.size();
  std::vector<double> out(n, 0.0);
  if (n == 0 || !(total > 0) || !std::isfinite(total)) return out;
  const double eta = std::clamp(options.step, 0.0, 1.0);
  const double cap = std::clamp(options.max_step, 1.0, 1e3);
  size_t active = 0;  // members with something to fetch
  for (const ShareMember& m : members) {
    if (!(Known(m.lambda) && m.lambda == 0)) ++active;
  }
  const double fair = total / static_cast<double>(active > 0 ? active : n);
  const double floor = std::clamp(options.floor, 0.0, 1.0) * fair;
  // Node-name order: every member sums in the same order, so all compute
  // bit-identical vectors from the same published figures.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return members[a].node < members[b].node;
  });
  auto share_of = [&](size_t i) {
    const double s = members[i].share;
    return s > 0 && std::isfinite(s) ? s : fair;
  };
  // λ̄: the share-weighted geometric mean of the positive λs.
  double log_sum = 0, weight = 0;
  for (size_t i : order) {
    const double l = members[i].lambda;
    if (Known(l) && l > 0) {
      log_sum += share_of(i) * std::log(l);
      weight += share_of(i);
    }
  }
  const double mean = weight > 0 ? std::exp(log_sum / weight) : 0;
  // The step; unknown members are set to R/n and the known ones share the
  // rest.
  std::vector<bool> fixed(n, false);
  double unknown = 0;
  for (size_t i : order) {
    const double l = members[i].lambda;
    if (!Known(l) || (l == 0 && active == 0)) {
      out[i] = fair;
      fixed[i] = true;
      unknown += fair;
      continue;
    }
    if (l == 0) {  // nothing to fetch
      out[i] = 0;
      fixed[i] = true;
      continue;
    }
    double factor = 1;
    if (mean > 0) factor = l > 0 ? std::pow(l / mean, eta) : 0;
    out[i] = share_of(i) * std::clamp(factor, 1 / cap, cap);
  }
  // Renormalise the free members to what is left, lifting any below the
  // floor to it (water-filling: at most n rounds; n·floor ≤ total, so the
  // rest always fits).
  double left = total - unknown;
  for (size_t round = 0; round <= n; ++round) {
    double free_sum = 0;
    for (size_t i : order) {
      if (!fixed[i]) free_sum += out[i];
    }
    if (free_sum <= 0) break;
    const double scale = left / free_sum;
    bool lifted = false;
    for (size_t i : order) {
      if (fixed[i]) continue;
      if (out[i] * scale < floor) {
        out[i] = floor;
        fixed[i] = true;
        left -= floor;
        lifted = true;
      }
    }
    if (lifted) continue;
    for (size_t i : order) {
      if (!fixed[i]) out[i] *= scale;
    }
    break;
  }
  return out;
}

double LambdaMeter::Update(size_t pages, double marginal_sum,
                           uint64_t marginal_count) {
  if (pages == 0) {
    lambda_ = 0;
  } else if (marginal_count < count_) {  // a new scheduler: start over
    sum_ = marginal_sum;
    count_ = marginal_count;
  } else if (marginal_count - count_ >= min_selections_) {
    lambda_ =
        (marginal_sum - sum_) / static_cast<double>(marginal_count - count_);
    ++windows_;
    sum_ = marginal_sum;
    count_ = marginal_count;
  } else if (lambda_ == 0) {
    lambda_ = -1;  // pages again, nothing measured yet
  }
  return lambda_;
}

double LambdaDispersion(std::span<const ShareMember> members) {
  double w = 0, s1 = 0, s2 = 0;
  for (const ShareMember& m : members) {
    if (!Known(m.lambda) || !(m.lambda > 0) || !(m.share > 0)) continue;
    const double x = std::log(m.lambda);
    w += m.share;
    s1 += m.share * x;
    s2 += m.share * x * x;
  }
  if (!(w > 0)) return 0;
  const double mean = s1 / w;
  return std::sqrt(std::max(0.0, s2 / w - mean * mean));
}

double LambdaSpread(std::span<const ShareMember> members) {
  double lo = 0, hi = 0;
  for (const ShareMember& m : members) {
    if (!Known(m.lambda) || !(m.lambda > 0)) continue;
    lo = lo > 0 ? std::min(lo, m.lambda) : m.lambda;
    hi = std::max(hi, m.lambda);
  }
  return lo > 0 ? hi / lo : 0;
}

}  // namespace freshd::sched
