// PrometheusText: builds a Prometheus text exposition (format 0.0.4) one
// family at a time — "# HELP", "# TYPE", then its samples — escaping help
// text and label values as the format requires. Also the families every
// exporter is expected to have: process_* (CPU seconds, resident memory,
// open and max file descriptors, start time; read from /proc/self, as the
// official client libraries do) and a build_info gauge.
// Plain value; not thread-safe.

#ifndef FRESHD_DAEMON_PROMETHEUS_TEXT_H_
#define FRESHD_DAEMON_PROMETHEUS_TEXT_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace freshd::daemon {

using MetricLabels = std::vector<std::pair<std::string_view, std::string>>;

class PrometheusText {
 public:
  // Starts a family: `type` is "counter", "gauge" or "histogram".
  void Family(std::string_view name, std::string_view type,
              std::string_view help);
  // One sample of the current family (or of its _bucket/_sum/_count).
  void Sample(std::string_view name, const MetricLabels& labels, double value);
  // A family with a single unlabelled sample.
  void Gauge(std::string_view name, std::string_view help, double value);
  void Counter(std::string_view name, std::string_view help, double value);

  const std::string& text() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

// process_cpu_seconds_total, process_resident_memory_bytes,
// process_virtual_memory_bytes, process_open_fds, process_max_fds,
// process_start_time_seconds. A value that cannot be read is left out.
void AppendProcessMetrics(PrometheusText& out);

// freshd_build_info{version=...,compiler=...} 1.
void AppendBuildInfo(PrometheusText& out, std::string_view version);

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_PROMETHEUS_TEXT_H_
