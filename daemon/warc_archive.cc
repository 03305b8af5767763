#include "daemon/warc_archive.h"

#include <string>
#include <string_view>
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
std::string RequestHead(const std::string& h) {
  if (h.size() < 4 || h.compare(h.size() - 4, 4, "\r\n\r\n") != 0) return "";
  return h;
}

// A complete response head ("HTTP/x nnn ...") rewritten for archiving;
// "" when there is none.
std::string ArchiveHead(const std::string& raw_headers, uint64_t body_bytes) {
  std::string status_line;
  std::vector<std::pair<std::string, std::string>> fields;
  SplitHead(raw_headers, &status_line, &fields);
  if (status_line.rfind("HTTP/", 0) != 0) return "";
  return store::ArchivableResponseHead(status_line, fields, body_bytes, false);
}

// One response (with its request, if complete) as a WarcExchange.
store::WarcExchange Exchange(const std::string& url, double date,
                             const std::string& ip,
                             const std::string& raw_request, std::string head,
                             std::string_view body) {
  store::WarcExchange ex;
  ex.target_uri = url;
  ex.date = date;
  ex.ip_address = ip;
  ex.request_head = RequestHead(raw_request);
  ex.response_head = std::move(head);
  ex.body = body;
  return ex;
}

}  // namespace

Status ArchiveFetch(store::WarcWriter& warc, const fetch::FetchResult& r,
                    double started_unix, store::WarcWritten* written,
                    const ArchiveContext& context) {
  if (written != nullptr) *written = {};
  Status first;
  for (const fetch::RawHop& hop : r.redirect_hops) {
    const std::string head = ArchiveHead(hop.raw_headers, hop.raw_body.size());
    if (head.empty()) continue;
    auto w = warc.WriteExchange(Exchange(hop.url, started_unix, hop.remote_ip,
                                         hop.raw_request, head, hop.raw_body));
    if (!w.ok() && first.ok()) {
      first = w.status();
    }
  }
  auto keep = [&](Result<store::WarcWritten> w) {
    if (!w.ok()) return first.ok() ? w.status() : first;
    if (written != nullptr) *written = std::move(w).value();
    return first;
  };
  using fetch::OutcomeClass;
  const OutcomeClass c = r.outcome;
  const bool redirect = c == OutcomeClass::kRedirect ||
                        c == OutcomeClass::kRedirectLoop ||
                        c == OutcomeClass::kBadRedirect;
  const bool error = c == OutcomeClass::kHttp4xx || c == OutcomeClass::kHttp5xx;
  if (r.truncated ||
      !(c == OutcomeClass::kOk || c == OutcomeClass::kNotModified || redirect ||
        (error && context.errors))) {
    return first;
  }
  const std::string head = ArchiveHead(r.raw_headers, r.raw_body.size());
  if (head.empty()) return first;
  if (c == OutcomeClass::kNotModified ||
      (c == OutcomeClass::kOk && context.original != nullptr)) {
    const store::WarcCapture* ref =
        c == OutcomeClass::kNotModified ? context.previous : context.original;
    store::WarcRevisit rv;
    rv.profile = c == OutcomeClass::kNotModified
                     ? store::WarcRevisit::Profile::kServerNotModified
                     : store::WarcRevisit::Profile::kIdenticalPayloadDigest;
    rv.target_uri = r.final_url;
    rv.date = started_unix;
    rv.ip_address = r.remote_ip;
    rv.request_head = RequestHead(r.raw_request);
    rv.response_head = head;
    if (ref != nullptr) {
      rv.refers_to_record_id = ref->record_id;
      rv.refers_to_target_uri = ref->target_uri;
      rv.refers_to_date = ref->date;
      rv.payload_digest = ref->payload_digest;
    }
    return keep(warc.WriteRevisit(rv));
  }
  store::WarcExchange ex = Exchange(r.final_url, started_unix, r.remote_ip,
                                    r.raw_request, head, r.raw_body);
  if (c == OutcomeClass::kOk) ex.payload_digest = context.payload_digest;
  return keep(warc.WriteExchange(ex));
}

}  // namespace freshd::daemon
