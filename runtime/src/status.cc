#include "baton/status.h"

#include "error_text.h"

namespace baton {

static_assert(static_cast<uint32_t>(StatusCode::kInternal) == 9, "one name per StatusCode below");

const char* StatusCodeName(StatusCode code) {
  // In enum order, then the name of any other value (one string list rather
  // than a switch: a table of pointers beside the strings costs code size).
  static constexpr char kNames[] =
      "Ok\0InvalidArgument\0OutOfRange\0ResourceExhausted\0FailedPrecondition\0DataLoss\0"
      "Unimplemented\0Busy\0NotReady\0Internal\0Unknown";
  const uint32_t i = static_cast<uint32_t>(code);
  return internal::NthString(kNames, i <= static_cast<uint32_t>(StatusCode::kInternal) ? i : 10);
}

namespace internal {

const char* NthString(const char* list, uint32_t index) {
  for (; index > 0; --index) {
    while (*list++ != '\0') {
    }
  }
  return list;
}

}  // namespace internal
}  // namespace baton
