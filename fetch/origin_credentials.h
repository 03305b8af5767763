// OriginCredentials: which extra request headers a request gets, decided by
// its origin alone (issue #44 item 6). Built once from the [[rule]]s that
// have an `origin` and request keys: their `headers`, `cookie` (a Cookie
// header) and an Authorization header from `credentials_file` or systemd's
// `credential` ($CREDENTIALS_DIRECTORY/NAME, LoadCredential=), read here
// through ReadPrivateFile (refused when group or others may read it).
//
// The fetcher asks per transfer (fetch/easy_setup.cc) with the transfer's
// own origin ("scheme://host:port", conf/rules.h OriginOfUrl), so a
// redirect to another origin, a robots.txt of another origin or a proxy's
// CONNECT (sent separately: CURLHEADER_SEPARATE) never carries them. Where
// the first rule for an origin decides, as for page matching.
//
// Redact() blanks the value of every secret field (Authorization, Cookie,
// Proxy-Authorization and every header name of any origin rule) in a
// request head as curl sent it: the fetcher applies it to
// FetchResult::raw_request, so WARC request records (whose digest is taken
// of these bytes) and everything else downstream see "[redacted]".
//
// Immutable after Create: const methods are thread-safe.

#ifndef FRESHD_FETCH_ORIGIN_CREDENTIALS_H_
#define FRESHD_FETCH_ORIGIN_CREDENTIALS_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "conf/config.h"

namespace freshd::fetch {

// The bytes a credentials file may hold.
inline constexpr size_t kMaxCredentialsFileBytes = 4096;

// Parses a credentials file: its first line is "basic USER:PASSWORD" or
// "bearer TOKEN" (the scheme word in any case; blanks around the line and
// a CR before its LF ignored; later lines ignored). USER is not empty and
// holds no ':' (RFC 7617); USER and PASSWORD hold no control characters;
// TOKEN is an RFC 6750 b64token. Returns the Authorization header value
// ("Basic base64(USER:PASSWORD)" or "Bearer TOKEN"). InvalidArgument with
// a message that never quotes the text.
[[nodiscard]] Result<std::string> ParseCredentialsText(std::string_view text);

// "[redacted]", what Redact() puts in place of a secret value.
inline constexpr std::string_view kRedacted = "[redacted]";

class OriginCredentials {
 public:
  OriginCredentials() = default;

  // `credentials_directory` is $CREDENTIALS_DIRECTORY ("" when unset: a
  // rule's `credential` is then an error). Errors name the rule and key:
  // "[rule \"members\"] credentials_file /p: group or others may read it
  // (mode 0640); refused: chmod 600 it".
  [[nodiscard]] static Result<OriginCredentials> Create(
      const std::vector<RuleConfig>& rules,
      const std::string& credentials_directory);

  // "Name: value" lines for a request to `origin` (OriginOfUrl form);
  // empty for an origin no rule names.
  const std::vector<std::string>& HeadersFor(std::string_view origin) const;

  // `head` (a request head, CRLF or LF lines) with every secret field's
  // value replaced by kRedacted.
  std::string Redact(std::string_view head) const;

  bool empty() const { return by_origin_.empty(); }

 private:
  std::map<std::string, std::vector<std::string>, std::less<>> by_origin_;
  // Lower case; the first three always.
  std::vector<std::string> secret_names_ = {"authorization", "cookie",
                                            "proxy-authorization"};
};

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_ORIGIN_CREDENTIALS_H_
