// The second half of FetchRequest::defer_decoding. The network thread hands
// over a 2xx body still in its Content-Encoding; a worker decodes it here,
// with the same cap and outcomes as the fetcher's own decoding (a bomb is
// too-large, a broken stream bad-encoding). DeferredBodyDecoder does it a
// slice at a time, so that a worker pool can run other jobs between the
// slices of a bomb instead of queueing them behind it.
// Thread-safety: a DeferredBodyDecoder is used by one thread at a time.

#ifndef FRESHD_FETCH_DEFERRED_BODY_H_
#define FRESHD_FETCH_DEFERRED_BODY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fetch/content_decoder.h"
#include "fetch/outcome.h"

namespace freshd::fetch {

class DeferredBodyDecoder {
 public:
  // Takes `result`; decoding is needed when it is ok and names a coding.
  DeferredBodyDecoder(FetchResult result, uint64_t max_decompressed_bytes);

  // Decodes about `budget` more output bytes. True once done: result() is
  // then decoded (content_encoding cleared), or too-large / bad-encoding
  // with its body cleared and detail set.
  bool Step(uint64_t budget);

  FetchResult& result() { return result_; }

 private:
  bool Finish(ContentDecoder::State state);

  FetchResult result_;
  const uint64_t max_output_;
  std::string input_;  // the encoded body
  size_t fed_ = 0;     // input_ bytes given to the decoder
  std::unique_ptr<ContentDecoder> decoder_;
  std::vector<std::string> parts_;  // decoded, about 1 MiB each
  bool done_ = false;
};

// The whole of it at once (callers with nothing else to run).
void DecodeDeferredBody(FetchResult* r, uint64_t max_decompressed_bytes);

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_DEFERRED_BODY_H_
