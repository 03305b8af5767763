#include "daemon/page_book.h"

#include <utility>

#include "daemon/recovery.h"

namespace freshd::daemon {

PageBook::PageBook(sched::Scheduler* scheduler, std::string url_dir)
    : sched_(scheduler), urls_(std::move(url_dir)) {}

void PageBook::Assign(std::vector<std::string> urls,
                      std::vector<PageMeta> metas) {
  urls_.Assign(std::move(urls));
  FinishRestore(std::move(metas));
}

void PageBook::FinishRestore(std::vector<PageMeta> metas) {
  metas.resize(urls_.size());
  metas_ = std::move(metas);
  host_pages_.assign(hosts_.size(), 0);
  for (sched::PageId id = 0; id < urls_.size(); ++id) {
    const sched::HostId host = sched_->page(id).host;
    if (host_pages_.size() <= host) host_pages_.resize(host + 1, 0);
    ++host_pages_[host];
  }
  page_dirty_.assign(urls_.size(), false);
  dirty_pages_.clear();
}

Result<sched::PageId> PageBook::Add(const std::string& url, sched::HostId host,
                                    double importance, uint32_t max_per_host) {
  if (host_pages_.size() <= host) host_pages_.resize(host + 1, 0);
  if (host_pages_[host] >= max_per_host) {
    return Status::ResourceExhausted("max_urls_per_host reached");
  }
  auto id = sched_->AddUrl(host, importance);
  if (!id.ok()) return id.status();
  ++host_pages_[host];
  // As id.value(): both count the pages added (appended even if the caller
  // did not ask Find first, so the two never drift apart).
  urls_.AddRestored(url);
  metas_.emplace_back();
  page_dirty_.push_back(false);
  MarkPage(id.value());
  return id.value();
}

Result<sched::PageId> PageBook::Adopt(const std::string& url,
                                      sched::HostId host,
                                      sched::SavedPage saved, PageMeta meta,
                                      uint32_t max_per_host) {
  if (host_pages_.size() <= host) host_pages_.resize(host + 1, 0);
  if (host_pages_[host] >= max_per_host) {
    return Status::ResourceExhausted("max_urls_per_host reached");
  }
  saved.state.host = host;
  auto id = sched_->RestorePage(saved.state, std::move(saved.profiles),
                                std::move(saved.recent), saved.rate);
  if (!id.ok()) return id.status();
  ++host_pages_[host];
  urls_.AddRestored(url);  // as id.value(), as in Add
  metas_.push_back(std::move(meta));
  page_dirty_.push_back(false);
  MarkPage(id.value());
  return id.value();
}

void PageBook::SetHostFetchState(sched::HostId host, std::string encoded) {
  if (host_fetch_state_.size() <= host) host_fetch_state_.resize(host + 1);
  if (host_fetch_state_[host] == encoded) return;
  host_fetch_state_[host] = std::move(encoded);
  MarkHost(host);
}

void PageBook::RestoreHostFetchState(sched::HostId host, std::string encoded) {
  if (host_fetch_state_.size() <= host) host_fetch_state_.resize(host + 1);
  host_fetch_state_[host] = std::move(encoded);
}

void PageBook::MarkPage(sched::PageId page) {
  if (page >= page_dirty_.size() || page_dirty_[page]) return;
  page_dirty_[page] = true;
  dirty_pages_.push_back(page);
}

void PageBook::MarkHost(sched::HostId host) {
  if (host_dirty_.size() <= host) host_dirty_.resize(host + 1, false);
  if (host_dirty_[host]) return;
  host_dirty_[host] = true;
  dirty_hosts_.push_back(host);
}

void PageBook::Note(sched::PageId page,
                    const sched::Scheduler::ObserveEffect& effect) {
  if (effect.page) MarkPage(page);
  if (effect.host && page < sched_->size()) MarkHost(sched_->page(page).host);
  if (effect.globals) globals_dirty_ = true;
}

void PageBook::TakeBatch(store::StoreBatch* batch, uint64_t* failures) {
  auto failed = [&] {
    if (failures != nullptr) ++*failures;
  };
  for (sched::PageId page : dirty_pages_) {
    page_dirty_[page] = false;
    store::PageRecord record;
    metas_[page].ToRecord(&record);
    if (!PersistPage(*sched_, page, urls_.url(page), std::move(record), batch)
             .ok()) {
      failed();
    }
  }
  dirty_pages_.clear();
  for (sched::HostId host : dirty_hosts_) {
    host_dirty_[host] = false;
    store::HostRecord base;
    if (host < host_fetch_state_.size()) {
      base.fetch_state = host_fetch_state_[host];
    }
    if (!PersistHostOnly(*sched_, hosts_, host, std::move(base), batch).ok()) {
      failed();
    }
  }
  dirty_hosts_.clear();
  if (globals_dirty_) {
    globals_dirty_ = false;
    if (!PersistGlobals(*sched_, batch).ok()) failed();
  }
}

}  // namespace freshd::daemon
