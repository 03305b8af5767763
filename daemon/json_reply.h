// The status endpoint's JSON replies: a body of one JSON document on one
// line. Shared by its routes (status_routes.cc) and the status page's JSON
// views (status_page.cc). Header-only.

#ifndef FRESHD_DAEMON_JSON_REPLY_H_
#define FRESHD_DAEMON_JSON_REPLY_H_

#include <nlohmann/json.hpp>

#include "daemon/http_server.h"

namespace freshd::daemon {

inline HttpReply JsonReply(int status, const nlohmann::json& j) {
  return HttpReply{status, "application/json", j.dump() + "\n", {}};
}

}  // namespace freshd::daemon

#endif  // FRESHD_DAEMON_JSON_REPLY_H_
