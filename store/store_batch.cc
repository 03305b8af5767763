#include "store/store_batch.h"

#include <iterator>
#include <utility>

#include "store/keys.h"

namespace freshd::store {

void StoreBatch::Append(StoreBatch&& other) {
  if (ops_.empty()) {
    ops_ = std::move(other.ops_);
  } else {
    ops_.insert(ops_.end(), std::make_move_iterator(other.ops_.begin()),
                std::make_move_iterator(other.ops_.end()));
  }
  other.ops_.clear();
}

Status StoreBatch::PutPage(const PageRecord& page) {
  Op op{Op::Kind::kPut, PageKey(page.url_key, page.url), {}};
  if (Status s = EncodePageValue(page, &op.value); !s.ok()) return s;
  ops_.push_back(std::move(op));
  return Status::OK();
}

void StoreBatch::ForEachPagePut(
    const std::function<void(uint64_t, std::string_view, std::string_view)>& fn)
    const {
  std::string url;
  for (const Op& op : ops_) {
    if ((op.kind != Op::Kind::kPut && op.kind != Op::Kind::kDelete) ||
        op.key.empty() || op.key[0] != kPagePrefix) {
      continue;
    }
    uint64_t url_key = 0;
    if (ParsePageKey(op.key, &url_key, &url)) {
      fn(url_key, url, op.kind == Op::Kind::kPut ? op.value : "");
    }
  }
}

Status StoreBatch::PutHost(const HostRecord& host) {
  Op op{Op::Kind::kPut, HostKey(host.host), {}};
  if (Status s = EncodeHostValue(host, &op.value); !s.ok()) return s;
  ops_.push_back(std::move(op));
  return Status::OK();
}

Status StoreBatch::AddFeedEvent(const FeedEvent& event) {
  Op op{Op::Kind::kFeed, {}, {}};
  if (Status s = EncodeFeedValue(event, &op.value); !s.ok()) return s;
  ops_.push_back(std::move(op));
  return Status::OK();
}

Status StoreBatch::PutSketch(uint64_t url_key, std::string_view url,
                             std::string_view sketch) {
  if (url.size() > kMaxUrlBytes)
    return Status::InvalidArgument("sketch: url over the limit");
  if (sketch.size() > kMaxBlobBytes)
    return Status::InvalidArgument("sketch over 1 MiB");
  if (sketch.empty()) {
    ops_.push_back({Op::Kind::kDelete, SketchKey(url_key, url), {}});
  } else {
    ops_.push_back(
        {Op::Kind::kPut, SketchKey(url_key, url), std::string(sketch)});
  }
  return Status::OK();
}

Status StoreBatch::PutDigestCapture(const WarcCapture& capture) {
  if (capture.payload_digest.empty() ||
      capture.payload_digest.size() > kMaxSmallFieldBytes)
    return Status::InvalidArgument("digest index: bad payload digest");
  WarcCapture c = capture;
  c.seq = 0;  // one byte, replaced at commit
  Op op{Op::Kind::kDigest, DigestKey(c.payload_digest), {}};
  if (Status s = EncodeCaptureValue(c, &op.value); !s.ok()) return s;
  ops_.push_back(std::move(op));
  return Status::OK();
}

Status StoreBatch::PutLastCapture(uint64_t url_key, std::string_view url,
                                  const WarcCapture& capture) {
  if (url.size() > kMaxUrlBytes)
    return Status::InvalidArgument("last capture: url over the limit");
  WarcCapture c = capture;
  c.seq = 0;
  Op op{Op::Kind::kPut, LastCaptureKey(url_key, url), {}};
  if (Status s = EncodeCaptureValue(c, &op.value); !s.ok()) return s;
  ops_.push_back(std::move(op));
  return Status::OK();
}

void StoreBatch::DeletePage(uint64_t url_key, std::string_view url) {
  ops_.push_back({Op::Kind::kDelete, PageKey(url_key, url), {}});
  ops_.push_back({Op::Kind::kDelete, SketchKey(url_key, url), {}});
  ops_.push_back({Op::Kind::kDelete, LastCaptureKey(url_key, url), {}});
}

void StoreBatch::DeleteHost(std::string_view host) {
  ops_.push_back({Op::Kind::kDelete, HostKey(host), {}});
}

void StoreBatch::PutControl(const ControlRecord& control) {
  ops_.push_back({Op::Kind::kPut, ControlKey(control.kind, control.target),
                  EncodeControlValue(control)});
}

void StoreBatch::PutAlias(const AliasRecord& alias) {
  ops_.push_back({Op::Kind::kPut, AliasKey(alias.url_key, alias.url),
                  EncodeAliasValue(alias)});
}

void StoreBatch::DeleteAlias(uint64_t url_key, std::string_view url) {
  ops_.push_back({Op::Kind::kDelete, AliasKey(url_key, url), {}});
}

void StoreBatch::PutSubscription(const SubscriptionRecord& subscription) {
  ops_.push_back({Op::Kind::kPut, SubscriptionKey(subscription.id),
                  EncodeSubscriptionValue(subscription)});
}

void StoreBatch::DeleteSubscription(std::string_view id) {
  ops_.push_back({Op::Kind::kDelete, SubscriptionKey(id), {}});
}

void StoreBatch::DeleteControl(char kind, std::string_view target) {
  ops_.push_back({Op::Kind::kDelete, ControlKey(kind, target), {}});
}

}  // namespace freshd::store
