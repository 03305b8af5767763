#include "sim/trace_plan.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "sim/web_model.h"

namespace freshd::sim {

namespace {

// Runs task(i) for i in [0, n) on up to `threads` threads, the tasks taken
// in order; the first error in task order, else OK.
Status RunTasks(size_t n, int threads,
                const std::function<Status(size_t)>& task) {
  std::vector<Status> status(n);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < n;) status[i] = task(i);
  };
  std::vector<std::thread> pool;
  const size_t extra =
      std::min<size_t>(n, static_cast<size_t>(std::max(1, threads))) - 1;
  for (size_t t = 0; t < extra; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  for (Status& st : status) {
    if (!st.ok()) return st;
  }
  return Status::OK();
}

}  // namespace

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
  if (!(options.precision > 0) || options.threads < 1 ||
      !std::isfinite(options.max_budget)) {
    return Status::InvalidArgument(
        "plan: precision must be > 0, threads >= 1, max budget finite");
  }
  std::atomic<uint64_t> replays{0};
  auto run = [&](const std::string& policy, double pages_per_day,
                 uint64_t* pages) -> Result<double> {
    TraceReplayOptions o = options.replay;
    o.sim.policy = policy;
    o.sim.rate_per_day = pages_per_day;
    Result<TraceReplayResult> r = ReplayTrace(trace, o);
    if (!r.ok()) return r.status();
    ++replays;
    if (pages != nullptr) *pages = r->result.total.pages;
    return r->result.total.fresh;
  };
  Plan plan;
  // n: the pages the replay counts (one cheap run fixes it).
  Result<double> probe = run(options.policies.front(), 1, &plan.pages);
  if (!probe.ok()) return probe.status();
  const double n = static_cast<double>(std::max<uint64_t>(1, plan.pages));

  const size_t np = options.policies.size();
  plan.policies.resize(np);
  for (size_t k = 0; k < np; ++k) plan.policies[k].policy = options.policies[k];
  // The grid, budget by budget upward, the policies in parallel.
  size_t past_target = 0;  // budgets replayed since all reached the target
  for (size_t g = 0; g < options.grid.size(); ++g) {
    if (!options.full_grid && past_target > 1) break;
    plan.grid.push_back(options.grid[g]);
    plan.grid_pages_per_day.push_back(options.grid[g] * n);
    for (PolicyPlan& p : plan.policies) p.grid_freshness.push_back(-1);
    Status st = RunTasks(np, options.threads, [&](size_t k) -> Status {
      Result<double> f =
          run(options.policies[k], plan.grid_pages_per_day[g], nullptr);
      if (!f.ok()) return f.status();
      plan.policies[k].grid_freshness[g] = *f;
      return Status::OK();
    });
    if (!st.ok()) return st;
    bool all = true;
    for (const PolicyPlan& p : plan.policies) {
      all = all && p.grid_freshness[g] >= options.target;
    }
    if (all || past_target > 0) ++past_target;
  }
  const size_t ng = plan.grid.size();

  // Each policy's search, the policies in parallel.
  Status st = RunTasks(np, options.threads, [&](size_t k) -> Status {
    PolicyPlan& p = plan.policies[k];
    for (size_t g = 0; g < ng; ++g) {
      p.probes.emplace_back(plan.grid_pages_per_day[g], p.grid_freshness[g]);
    }
    auto probe_at = [&](double budget) -> Result<double> {
      Result<double> f = run(p.policy, budget, nullptr);
      if (f.ok()) p.probes.emplace_back(budget, *f);
      return f;
    };
    size_t first = ng;
    for (size_t g = 0; g < ng && first == ng; ++g) {
      if (p.grid_freshness[g] >= options.target) first = g;
    }
    double lo, f_lo, hi, f_hi;
    if (first < ng) {
      hi = plan.grid_pages_per_day[first];
      f_hi = p.grid_freshness[first];
      if (first > 0) {
        lo = plan.grid_pages_per_day[first - 1];
        f_lo = p.grid_freshness[first - 1];
      } else {
        lo = hi / 16;
        Result<double> f = probe_at(lo);
        if (!f.ok()) return f.status();
        f_lo = *f;
        // Reached far below the grid too: halve on (cheap replays).
        for (int k = 0; k < 10 && f_lo >= options.target; ++k) {
          hi = lo;
          f_hi = f_lo;
          lo /= 2;
          f = probe_at(lo);
          if (!f.ok()) return f.status();
          f_lo = *f;
        }
        if (f_lo >= options.target) {
          hi = lo;
          f_hi = f_lo;
        }
      }
    } else {  // above the grid: double up to max_budget
      lo = plan.grid_pages_per_day.back();
      f_lo = p.grid_freshness.back();
      hi = -1;
      f_hi = -1;
      for (double b = 2 * lo; b <= options.max_budget * n * (1 + 1e-9);
           b *= 2) {
        Result<double> f = probe_at(b);
        if (!f.ok()) return f.status();
        if (*f >= options.target) {
          hi = b;
          f_hi = *f;
          break;
        }
        lo = b;
        f_lo = *f;
      }
      if (hi < 0) return Status::OK();  // not reached
    }
    // Illinois regula falsi on (log budget, freshness - target).
    int replaced = 0;  // the end the last probe replaced: +1 hi, -1 lo
    double g_lo = f_lo - options.target, g_hi = f_hi - options.target;
    for (int probes = 0;
         probes < options.max_probes && hi > lo * (1 + options.precision);
         ++probes) {
      const double x_lo = std::log(lo), x_hi = std::log(hi);
      double x = g_hi > g_lo ? x_lo - g_lo * (x_hi - x_lo) / (g_hi - g_lo)
                             : 0.5 * (x_lo + x_hi);
      // Stay inside, and off the ends by a tenth of the precision.
      const double margin =
          std::min(0.25 * (x_hi - x_lo), 0.1 * std::log1p(options.precision));
      x = std::clamp(x, x_lo + margin, x_hi - margin);
      const double mid = std::exp(x);
      Result<double> f = probe_at(mid);
      if (!f.ok()) return f.status();
      if (*f >= options.target) {
        hi = mid;
        f_hi = *f;
        g_hi = *f - options.target;
        if (replaced == +1) g_lo *= 0.5;  // lo kept again: pull it in
        replaced = +1;
      } else {
        lo = mid;
        g_lo = *f - options.target;
        if (replaced == -1) g_hi *= 0.5;
        replaced = -1;
      }
    }
    p.pages_per_day = hi;
    p.rate_per_second = hi / kDay;
    p.freshness_at_budget = f_hi;
    std::sort(p.probes.begin(), p.probes.end());
    return Status::OK();
  });
  if (!st.ok()) return st;
  plan.replays = replays.load();
  return plan;
}

std::string PlanToJson(const PlanOptions& options, const Plan& plan) {
  using nlohmann::json;
  json j;
  j["target"] = options.target;
  j["pages"] = plan.pages;
  j["replays"] = plan.replays;
  j["grid_fetches_per_page_per_day"] = plan.grid;
  j["grid_pages_per_day"] = plan.grid_pages_per_day;
  j["max_fetches_per_page_per_day"] = options.max_budget;
  j["precision"] = options.precision;
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
    json probes = json::array();
    for (const auto& [budget, fresh] : p.probes) {
      probes.push_back({{"pages_per_day", budget}, {"freshness", fresh}});
    }
    q["probes"] = probes;
    ps.push_back(q);
  }
  j["policies"] = ps;
  return j.dump(2);
}

std::string PlanToSvg(const PlanOptions& options, const Plan& plan) {
  // 640x400; x: log budget over the grid, y: freshness 0..1.
  const double w = 640, h = 400, left = 60, right = 20, top = 20, bottom = 50;
  const double x0 = std::log(plan.grid.front());
  const double x1 = std::log(plan.grid.back());
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
  for (double g : plan.grid) {
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
                    X(plan.grid[k]), Y(p.grid_freshness[k]));
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
