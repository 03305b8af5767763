#include "daemon/page_meta.h"

#include "parse/http_date.h"

namespace freshd::daemon {

static_assert(sizeof(PageMeta) <= 32, "PageMeta is 32 bytes a page");

std::optional<fetch::OutcomeClass> PageMeta::last_outcome_class() const {
  if (outcome_ == kNoOutcome || outcome_ == kOtherOutcome) return std::nullopt;
  return static_cast<fetch::OutcomeClass>(outcome_ - 1);
}

std::string_view PageMeta::last_outcome() const {
  const std::optional<fetch::OutcomeClass> c = last_outcome_class();
  return c ? fetch::OutcomeName(*c) : std::string_view();
}

void PageMeta::set_last_outcome_name(std::string_view name) {
  outcome_ = name.empty() ? kNoOutcome : kOtherOutcome;
  if (name.empty()) return;
  for (int i = 0; i <= static_cast<int>(fetch::kLastOutcomeClass); ++i) {
    const auto c = static_cast<fetch::OutcomeClass>(i);
    if (fetch::OutcomeName(c) == name) {
      set_last_outcome(c);
      return;
    }
  }
}

void PageMeta::set_last_modified(std::string_view http_date) {
  last_modified_s_ = 0;
  if (http_date.empty()) return;
  const std::optional<double> t = parse::ParseHttpDate(http_date);
  if (t && *t >= 1 && *t <= static_cast<double>(UINT32_MAX)) {
    last_modified_s_ = static_cast<uint32_t>(*t);
  }
}

}  // namespace freshd::daemon
