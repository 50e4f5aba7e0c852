#pragma once
// printf-free number formatting for firmware output. newlib's printf with
// float support pulls in malloc (and ~20 KB); these write into a caller
// buffer and never allocate.

#include <stddef.h>
#include <stdint.h>

namespace baton::cortex_m {

// Enough for any result below, including the terminating NUL
// ("-1.17549435e-38" is 15 characters).
inline constexpr size_t kNumberTextBytes = 24;

// Writes `value` exactly as C's printf("%.9g", (double)value) does (glibc:
// correctly rounded, ties to even, "inf"/"nan" with their sign), NUL
// terminated. `out` holds at least kNumberTextBytes. Returns the length.
size_t FormatFloat(float value, char* out);

// Decimal integers, NUL terminated. Return the length.
size_t FormatInt(int64_t value, char* out);
size_t FormatUint(uint64_t value, char* out);

}  // namespace baton::cortex_m
