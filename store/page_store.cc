#include "store/page_store.h"

#include <utility>

namespace freshd::store {

PageStore::PageStore(std::unique_ptr<StoreCore> core)
    : core_(std::move(core)),
      pages_(core_.get()),
      hosts_(core_.get()),
      controls_(core_.get()),
      subscriptions_(core_.get()),
      aliases_(core_.get()),
      feed_(core_.get()),
      captures_(core_.get()),
      sketches_(core_.get()) {}

PageStore::~PageStore() { (void)core_->Close(); }

Result<std::unique_ptr<PageStore>> PageStore::Open(
    const StoreConfig& config, const StoreOpenOptions& options) {
  Result<std::unique_ptr<StoreCore>> core = StoreCore::Open(config, options);
  if (!core.ok()) return core.status();
  std::unique_ptr<PageStore> store(new PageStore(std::move(core).value()));
  if (Status s = store->feed_.Load(); !s.ok()) return s;
  if (Status s = store->captures_.Load(); !s.ok()) return s;
  return store;
}

Status PageStore::Commit(StoreBatch& batch, double now, bool* synced) {
  using Kind = StoreBatch::Op::Kind;
  return core_->Commit(
      now, synced,
      [&](CommitWriter& w) {
        feed_.BeginAppends();
        captures_.BeginAppends();
        for (const StoreBatch::Op& op : batch.ops_) {
          switch (op.kind) {
            case Kind::kPut:
              w.Put(op.key, op.value);
              break;
            case Kind::kDelete:
              w.Delete(op.key);
              break;
            case Kind::kFeed:
              feed_.Append(w, op.value);
              break;
            case Kind::kDigest:
              captures_.AppendDigest(w, op.key, op.value);
              break;
          }
        }
        feed_.FinishAppends(w);
        return Status::OK();
      },
      [&] {
        feed_.Committed();
        captures_.Committed();
        batch.Clear();
      });
}

}  // namespace freshd::store
