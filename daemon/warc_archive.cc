#include "daemon/warc_archive.h"

#include <string>
#include <utility>
#include <vector>

namespace freshd::daemon {
namespace {

// Splits a raw header block into its status line and fields.
void SplitHead(const std::string& raw, std::string* status_line,
               std::vector<std::pair<std::string, std::string>>* fields) {
  size_t pos = 0;
  bool first = true;
  while (pos < raw.size()) {
    size_t end = raw.find('\n', pos);
    if (end == std::string::npos) end = raw.size();
    std::string line = raw.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (first) {
      *status_line = line;
      first = false;
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    size_t v = line.find_first_not_of(" \t", colon + 1);
    fields->emplace_back(line.substr(0, colon),
                         v == std::string::npos ? "" : line.substr(v));
  }
}

// The request head as curl sent it, if complete (a request record needs
// the whole head; a truncated capture is left out rather than archived).
std::string RequestHead(const fetch::FetchResult& r) {
  const std::string& h = r.raw_request;
  if (h.size() < 4 || h.compare(h.size() - 4, 4, "\r\n\r\n") != 0) return "";
  return h;
}

}  // namespace

Status ArchiveFetch(store::WarcWriter& warc, const fetch::FetchResult& r,
                    double started_unix, store::WarcWritten* written) {
  if (written != nullptr) *written = {};
  auto keep = [written](Result<store::WarcWritten> w) {
    if (!w.ok()) return w.status();
    if (written != nullptr) *written = std::move(w).value();
    return Status::OK();
  };
  std::string status_line;
  std::vector<std::pair<std::string, std::string>> fields;
  SplitHead(r.raw_headers, &status_line, &fields);
  if (status_line.empty()) return Status::OK();
  std::string head = store::ArchivableResponseHead(status_line, fields,
                                                   r.raw_body.size(), false);
  if (r.outcome == fetch::OutcomeClass::kOk) {
    store::WarcExchange ex;
    ex.target_uri = r.final_url;
    ex.date = started_unix;
    ex.ip_address = r.remote_ip;
    ex.request_head = RequestHead(r);
    ex.response_head = head;
    ex.body = r.raw_body;
    return keep(warc.WriteExchange(ex));
  }
  if (r.outcome == fetch::OutcomeClass::kNotModified) {
    store::WarcRevisit rv;
    rv.profile = store::WarcRevisit::Profile::kServerNotModified;
    rv.target_uri = r.final_url;
    rv.date = started_unix;
    rv.ip_address = r.remote_ip;
    rv.request_head = RequestHead(r);
    rv.response_head = head;
    return keep(warc.WriteRevisit(rv));
  }
  return Status::OK();
}

}  // namespace freshd::daemon
