#include "sim/trace_plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "sim/web_model.h"

namespace freshd::sim {

Result<Plan> PlanBudgets(const Trace& trace, const PlanOptions& options) {
  if (!(options.target > 0 && options.target < 1)) {
    return Status::InvalidArgument("plan: the target must be in (0, 1)");
  }
  if (options.policies.empty()) {
    return Status::InvalidArgument("plan: no policy");
  }
  if (options.grid.empty() || !(options.grid.front() > 0) ||
      !std::is_sorted(options.grid.begin(), options.grid.end()) ||
      std::adjacent_find(options.grid.begin(), options.grid.end()) !=
          options.grid.end() ||
      !std::isfinite(options.grid.back())) {
    return Status::InvalidArgument(
        "plan: the grid must be increasing budgets > 0");
  }
  Plan plan;
  auto run = [&](const std::string& policy,
                 double pages_per_day) -> Result<double> {
    TraceReplayOptions o = options.replay;
    o.sim.policy = policy;
    o.sim.rate_per_day = pages_per_day;
    Result<TraceReplayResult> r = ReplayTrace(trace, o);
    if (!r.ok()) return r.status();
    ++plan.replays;
    plan.pages = r->result.total.pages;
    return r->result.total.fresh;
  };
  // n: the pages the replay counts (one cheap run fixes it).
  Result<double> probe = run(options.policies.front(), 1);
  if (!probe.ok()) return probe.status();
  const double n = static_cast<double>(std::max<uint64_t>(1, plan.pages));
  for (double g : options.grid) plan.grid_pages_per_day.push_back(g * n);
  for (const std::string& policy : options.policies) {
    PolicyPlan p;
    p.policy = policy;
    size_t first = options.grid.size();
    for (size_t i = 0; i < options.grid.size(); ++i) {
      Result<double> f = run(policy, plan.grid_pages_per_day[i]);
      if (!f.ok()) return f.status();
      p.grid_freshness.push_back(*f);
      if (first == options.grid.size() && *f >= options.target) first = i;
    }
    if (first < options.grid.size()) {
      double hi = plan.grid_pages_per_day[first];
      double f_hi = p.grid_freshness[first];
      double lo = first > 0 ? plan.grid_pages_per_day[first - 1] : hi / 16;
      for (int k = 0; k < options.bisections; ++k) {
        const double mid = std::sqrt(lo * hi);
        Result<double> f = run(policy, mid);
        if (!f.ok()) return f.status();
        if (*f >= options.target) {
          hi = mid;
          f_hi = *f;
        } else {
          lo = mid;
        }
      }
      p.pages_per_day = hi;
      p.rate_per_second = hi / kDay;
      p.freshness_at_budget = f_hi;
    }
    plan.policies.push_back(std::move(p));
  }
  return plan;
}

std::string PlanToJson(const PlanOptions& options, const Plan& plan) {
  using nlohmann::json;
  json j;
  j["target"] = options.target;
  j["pages"] = plan.pages;
  j["replays"] = plan.replays;
  j["grid_fetches_per_page_per_day"] = options.grid;
  j["grid_pages_per_day"] = plan.grid_pages_per_day;
  json ps = json::array();
  for (const PolicyPlan& p : plan.policies) {
    json q;
    q["policy"] = p.policy;
    q["reached"] = p.pages_per_day > 0;
    q["pages_per_day"] =
        p.pages_per_day > 0 ? json(p.pages_per_day) : json(nullptr);
    q["rate_per_second"] =
        p.rate_per_second > 0 ? json(p.rate_per_second) : json(nullptr);
    q["freshness_at_budget"] = p.freshness_at_budget >= 0
                                   ? json(p.freshness_at_budget)
                                   : json(nullptr);
    q["grid_freshness"] = p.grid_freshness;
    ps.push_back(q);
  }
  j["policies"] = ps;
  return j.dump(2);
}

std::string PlanToSvg(const PlanOptions& options, const Plan& plan) {
  // 640x400; x: log budget over the grid, y: freshness 0..1.
  const double w = 640, h = 400, left = 60, right = 20, top = 20, bottom = 50;
  const double x0 = std::log(options.grid.front());
  const double x1 = std::log(options.grid.back());
  auto X = [&](double g) {
    return x1 > x0 ? left + (std::log(g) - x0) / (x1 - x0) * (w - left - right)
                   : left;
  };
  auto Y = [&](double f) { return top + (1 - f) * (h - top - bottom); };
  static const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c",
                                  "#9467bd", "#ff7f0e", "#8c564b"};
  std::string s;
  char buf[256];
  std::snprintf(
      buf, sizeof buf,
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
      "height=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\">\n",
      w, h);
  s += buf;
  std::snprintf(buf, sizeof buf,
                "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                "fill=\"none\" stroke=\"#888\"/>\n",
                left, top, w - left - right, h - top - bottom);
  s += buf;
  for (double f : {0.0, 0.25, 0.5, 0.75, 1.0}) {
    std::snprintf(
        buf, sizeof buf,
        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.2f</text>\n",
        left - 4, Y(f) + 4, f);
    s += buf;
  }
  for (double g : options.grid) {
    std::snprintf(buf, sizeof buf,
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.3g"
                  "</text>\n",
                  X(g), h - bottom + 16, g);
    s += buf;
  }
  std::snprintf(buf, sizeof buf,
                "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">budget, "
                "fetches per page per day</text>\n",
                left + (w - left - right) / 2, h - 10);
  s += buf;
  std::snprintf(buf, sizeof buf,
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#444\" stroke-dasharray=\"4 4\"/>\n",
                left, Y(options.target), w - right, Y(options.target));
  s += buf;
  for (size_t i = 0; i < plan.policies.size(); ++i) {
    const PolicyPlan& p = plan.policies[i];
    const char* color = kColors[i % 6];
    s += "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"";
    s += color;
    s += "\" points=\"";
    for (size_t k = 0; k < p.grid_freshness.size(); ++k) {
      std::snprintf(buf, sizeof buf, "%s%.1f,%.1f", k ? " " : "",
                    X(options.grid[k]), Y(p.grid_freshness[k]));
      s += buf;
    }
    s += "\"/>\n";
    std::string name;  // policy names are [a-z0-9-]; escape anyway
    for (char c : p.policy) {
      name += c == '<' ? "&lt;" : c == '&' ? "&amp;" : std::string(1, c);
    }
    std::snprintf(buf, sizeof buf, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">",
                  left + 8, top + 16 + 14 * static_cast<double>(i), color);
    s += buf;
    s += name + "</text>\n";
  }
  s += "</svg>\n";
  return s;
}

}  // namespace freshd::sim
