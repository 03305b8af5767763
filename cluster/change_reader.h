// ChangeReader: reads the cluster's change stream (ChangePublisher writes
// it; cluster/README.md "Change feed") for `freshd changes --nats`.
//
// Each message is one node's change event (its JSON line, with "node");
// its stream sequence is the cursor: a consumer that processed stream
// sequence N resumes after N. Open() starts after `after` (a stream
// sequence) or at `since_unix` (the first event stored at or after that
// time), through an ephemeral pull consumer filtered on every node's
// subject, so memory is bounded by the batch: Next() returns at most
// `batch` messages. A consumer lost (NATS restarted, the connection
// dropped long enough for the server to forget it) is created again after
// the last sequence returned, so nothing is skipped or repeated.
// Thread-safety: one thread at a time per reader.

#ifndef FRESHD_CLUSTER_CHANGE_READER_H_
#define FRESHD_CLUSTER_CHANGE_READER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "cluster/change_publisher.h"

namespace freshd::cluster {

inline constexpr size_t kChangeReadMaxBatch = 10000;

struct ChangeReaderOptions {
  std::string nats_url;
  std::string stream = kChangeStream;
  uint64_t after = 0;      // the last stream sequence already processed
  double since_unix = -1;  // >= 0: start at this time instead of `after`
  size_t batch = 1000;     // 1..kChangeReadMaxBatch
  double timeout_s = 5;    // per NATS request
};

struct ChangeMessage {
  uint64_t stream_seq = 0;
  std::string node;  // from the subject
  std::string data;  // the event's JSON line
};

struct ChangeBatch {
  std::vector<ChangeMessage> messages;  // in stream order
  uint64_t cursor = 0;  // the last sequence returned so far (this or before)
  uint64_t oldest = 0;  // the stream's first kept sequence, as last seen
  uint64_t newest = 0;  // its last, as last seen
  // Messages were waiting after this batch (the consumer's count, so also
  // after an empty batch whose wait ran out with messages waiting).
  bool more = false;
  // Events after the starting cursor were gone (aged out) before they were
  // read: only on the first batch.
  bool gap = false;
};

class ChangeReader {
 public:
  // Connects and looks the stream up: IOError when NATS cannot be reached,
  // NotFound when the stream does not exist (no node ever published),
  // InvalidArgument for bad options.
  static Result<std::unique_ptr<ChangeReader>> Open(
      const ChangeReaderOptions& options);
  ~ChangeReader();

  // The messages after the cursor, waiting at most `wait_s` (at least
  // 0.1 s) for the first when none is waiting. IOError when NATS is lost
  // (the next call tries again from the cursor).
  Result<ChangeBatch> Next(double wait_s);

 private:
  struct Nats;
  explicit ChangeReader(const ChangeReaderOptions& options);
  Status Connect();
  Status Subscribe();
  Status ReadBounds();

  const ChangeReaderOptions options_;
  std::unique_ptr<Nats> nats_;
  uint64_t cursor_ = 0;
  bool by_time_ = false;  // the first consumer starts at since_unix
  bool first_ = true;
  // Messages the current consumer has brought us (it delivers each once).
  uint64_t received_ = 0;
  // Empty batches in a row while the consumer had delivered more than we
  // received (messages on their way): after kMaxInTransitWaits of them the
  // rest counts as lost in transit, so that a read without --follow ends.
  int in_transit_waits_ = 0;
  uint64_t oldest_ = 0, newest_ = 0;
};

}  // namespace freshd::cluster

#endif  // FRESHD_CLUSTER_CHANGE_READER_H_
