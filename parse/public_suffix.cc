#include "parse/public_suffix.h"

#include <arpa/inet.h>
#include <libpsl.h>

#include <string>

namespace freshd::parse {
namespace {

// "[v6]" or a dotted IPv4 address (the normalized forms of IP hosts).
bool IsIpLiteral(const std::string& host) {
  if (!host.empty() && host.front() == '[') return true;
  in_addr v4;
  return inet_pton(AF_INET, host.c_str(), &v4) == 1;
}

}  // namespace

void PublicSuffixList::Free::operator()(psl_ctx_st* ctx) const {
  psl_free(ctx);
}

Result<PublicSuffixList> PublicSuffixList::Load() {
  psl_ctx_t* ctx = psl_latest(nullptr);
  if (ctx == nullptr) {
    return Status::Unavailable(
        "public suffix list: libpsl has none (install publicsuffix)");
  }
  return PublicSuffixList(ctx);
}

std::string PublicSuffixList::RegistrableDomain(std::string_view host) const {
  std::string h(host);
  if (IsIpLiteral(h)) return h;
  const char* domain = psl_registrable_domain(ctx_.get(), h.c_str());
  return domain != nullptr ? std::string(domain) : h;
}

}  // namespace freshd::parse
