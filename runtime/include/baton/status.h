#pragma once
// Status: a pointer-sized, [[nodiscard]] result. Ok is zero. The message is a
// static string (never owned, never formatted) so a Status is free to copy and
// can be stripped from the binary with -DBATON_STRIP_MESSAGES.

#include <stdint.h>

namespace baton {

enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument,
  kOutOfRange,
  kResourceExhausted,
  kFailedPrecondition,
  kDataLoss,
  kUnimplemented,
  kBusy,
  kNotReady,
  kInternal,
};

const char* StatusCodeName(StatusCode code);

#ifdef BATON_STRIP_MESSAGES
#define BATON_MSG(s) ""
#else
#define BATON_MSG(s) s
#endif

class [[nodiscard]] Status {
 public:
  constexpr Status() = default;
  constexpr Status(StatusCode code, const char* message)  // NOLINT
      : code_(code), message_(message) {}

  static constexpr Status Ok() { return Status(); }

  constexpr bool ok() const { return code_ == StatusCode::kOk; }
  constexpr StatusCode code() const { return code_; }
  // Never null.
  const char* message() const { return message_ ? message_ : ""; }

  // Explicitly drops a status the caller has decided not to handle.
  constexpr void IgnoreError() const {}

 private:
  StatusCode code_ = StatusCode::kOk;
  const char* message_ = nullptr;
};

}  // namespace baton

#define BATON_RETURN_IF_ERROR(expr)          \
  do {                                       \
    ::baton::Status baton_status_ = (expr);  \
    if (!baton_status_.ok()) {               \
      return baton_status_;                  \
    }                                        \
  } while (0)

#define BATON_ERROR(code, msg) ::baton::Status(::baton::StatusCode::code, BATON_MSG(msg))
