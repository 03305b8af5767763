#include "fetch/outcome.h"

namespace freshd::fetch {

std::string_view OutcomeName(OutcomeClass c) {
  switch (c) {
    case OutcomeClass::kOk:
      return "ok";
    case OutcomeClass::kNotModified:
      return "not-modified";
    case OutcomeClass::kRedirect:
      return "redirect";
    case OutcomeClass::kHttp4xx:
      return "4xx";
    case OutcomeClass::kHttp5xx:
      return "5xx";
    case OutcomeClass::kNetwork:
      return "network";
    case OutcomeClass::kDns:
      return "dns";
    case OutcomeClass::kTls:
      return "tls";
    case OutcomeClass::kTimeout:
      return "timeout";
    case OutcomeClass::kTooLarge:
      return "too-large";
    case OutcomeClass::kRobotsDenied:
      return "robots-denied";
    case OutcomeClass::kRedirectLoop:
      return "redirect-loop";
    case OutcomeClass::kBlockedAddress:
      return "blocked-address";
    case OutcomeClass::kBadContentType:
      return "bad-content-type";
    case OutcomeClass::kBadRedirect:
      return "bad-redirect";
    case OutcomeClass::kBadUrl:
      return "bad-url";
    case OutcomeClass::kBadEncoding:
      return "bad-encoding";
    case OutcomeClass::kProtocol:
      return "protocol";
    case OutcomeClass::kProxy:
      return "proxy";
  }
  return "unknown";
}

bool IsHostError(OutcomeClass c, int http_status) {
  switch (c) {
    case OutcomeClass::kHttp5xx:
    case OutcomeClass::kNetwork:
    case OutcomeClass::kDns:
    case OutcomeClass::kTls:
    case OutcomeClass::kTimeout:
    case OutcomeClass::kProtocol:
      return true;
    case OutcomeClass::kHttp4xx:
      return http_status == 429;
    default:
      return false;
  }
}

}  // namespace freshd::fetch
