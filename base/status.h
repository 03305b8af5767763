// Status and Result<T>: how every freshd module reports failure across its
// boundary, in the manner of leveldb::Status. Nothing throws across a module
// boundary; a function that can fail returns one of these. A Status is cheap
// to copy when ok() (no allocation).

#ifndef FRESHD_BASE_STATUS_H_
#define FRESHD_BASE_STATUS_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace freshd {

class Status {
 public:
  enum class Code {
    kOk = 0,
    kInvalidArgument,    // bad input from outside: config, page, URL, file
    kNotFound,           // a requested thing does not exist
    kIOError,            // the operating system said no
    kCorruption,         // stored data failed to decode
    kResourceExhausted,  // a configured limit was hit
    kUnavailable,        // try again later (remote busy, not yet ready)
    kInternal,           // a bug in freshd
  };

  Status() = default;  // ok
  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string_view msg) {
    return {Code::kInvalidArgument, msg};
  }
  static Status NotFound(std::string_view msg) {
    return {Code::kNotFound, msg};
  }
  static Status IOError(std::string_view msg) { return {Code::kIOError, msg}; }
  static Status Corruption(std::string_view msg) {
    return {Code::kCorruption, msg};
  }
  static Status ResourceExhausted(std::string_view msg) {
    return {Code::kResourceExhausted, msg};
  }
  static Status Unavailable(std::string_view msg) {
    return {Code::kUnavailable, msg};
  }
  static Status Internal(std::string_view msg) {
    return {Code::kInternal, msg};
  }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // "OK" or "<code name>: <message>".
  std::string ToString() const;
  static const char* CodeName(Code code);

 private:
  Status(Code code, std::string_view msg) : code_(code), message_(msg) {}

  Code code_ = Code::kOk;
  std::string message_;
};

// A value or the Status that explains why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok())
      status_ = Status::Internal("Result built from an ok Status");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  const T& value() const& { return *value_; }
  T& value() & { return *value_; }
  T&& value() && { return std::move(*value_); }
  const T& operator*() const& { return *value_; }
  T& operator*() & { return *value_; }
  const T* operator->() const { return &*value_; }
  T* operator->() { return &*value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace freshd

#endif  // FRESHD_BASE_STATUS_H_
