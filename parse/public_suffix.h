// Registrable domains ("eTLD+1") by the Public Suffix List: what the crawl
// scope "seed-domains" means by a seed's domain. "news.bbc.co.uk" ->
// "bbc.co.uk", "a.example.org" -> "example.org", "user.github.io" stays
// itself (github.io is a public suffix). Backed by libpsl with Debian's
// publicsuffix data (the newer of libpsl's built-in list and
// /usr/share/publicsuffix). Thread-safe (const after Load).
#ifndef FRESHD_PARSE_PUBLIC_SUFFIX_H_
#define FRESHD_PARSE_PUBLIC_SUFFIX_H_

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

struct psl_ctx_st;

namespace freshd::parse {

class PublicSuffixList {
 public:
  // Unavailable when libpsl has no list to load.
  static Result<PublicSuffixList> Load();

  // The registrable domain of a normalized URL's host (UrlHost: lowercase
  // ASCII, IDN labels in punycode, IPv6 in brackets). An IP literal, a
  // public suffix itself ("co.uk") and a single label ("localhost") are
  // their own domain.
  std::string RegistrableDomain(std::string_view host) const;

 private:
  struct Free {
    void operator()(psl_ctx_st* ctx) const;
  };
  explicit PublicSuffixList(psl_ctx_st* ctx) : ctx_(ctx) {}
  std::unique_ptr<psl_ctx_st, Free> ctx_;
};

}  // namespace freshd::parse

#endif  // FRESHD_PARSE_PUBLIC_SUFFIX_H_
