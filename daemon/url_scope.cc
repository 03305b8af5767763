#include "daemon/url_scope.h"

#include <re2/re2.h>

#include "parse/url.h"

namespace freshd::daemon {

UrlScope::UrlScope(UrlScope&&) noexcept = default;
UrlScope& UrlScope::operator=(UrlScope&&) noexcept = default;
UrlScope::~UrlScope() = default;

Result<UrlScope> UrlScope::Create(const CrawlerConfig& crawler) {
  UrlScope scope;
  scope.mode_ = crawler.scope;
  for (const auto* list : {&crawler.include, &crawler.exclude}) {
    auto& out = list == &crawler.include ? scope.include_ : scope.exclude_;
    for (const std::string& pattern : *list) {
      auto re = std::make_unique<re2::RE2>(pattern, re2::RE2::Quiet);
      if (!re->ok()) {
        return Status::InvalidArgument(
            "[crawler] invalid regular expression \"" + pattern +
            "\": " + re->error());
      }
      out.push_back(std::move(re));
    }
  }
  if (scope.mode_ == "seed-domains") {
    auto psl = parse::PublicSuffixList::Load();
    if (!psl.ok()) return psl.status();
    scope.public_suffixes_.emplace(std::move(psl).value());
  }
  return scope;
}

void UrlScope::Add(std::string_view normalized_url) {
  hosts_.insert(std::string(parse::UrlAuthority(normalized_url)));
  if (public_suffixes_) {
    domains_.insert(
        public_suffixes_->RegistrableDomain(parse::UrlHost(normalized_url)));
  }
}

bool UrlScope::Contains(std::string_view normalized_url) const {
  if (mode_ == "seed-hosts") {
    if (!hosts_.count(std::string(parse::UrlAuthority(normalized_url)))) {
      return false;
    }
  } else if (public_suffixes_) {  // seed-domains
    if (!domains_.count(public_suffixes_->RegistrableDomain(
            parse::UrlHost(normalized_url)))) {
      return false;
    }
  }
  const re2::StringPiece url(normalized_url.data(), normalized_url.size());
  for (const auto& re : exclude_) {
    if (re2::RE2::PartialMatch(url, *re)) return false;
  }
  if (include_.empty()) return true;
  for (const auto& re : include_) {
    if (re2::RE2::PartialMatch(url, *re)) return true;
  }
  return false;
}

}  // namespace freshd::daemon
