#include "baton/cortex_m/format.h"

#include <string.h>

namespace baton::cortex_m {
namespace {

constexpr int kPrecision = 9;  // significant digits, as in "%.9g"

// An unsigned integer wide enough for the exact value of any float scaled to
// an integer: m * 5^149 < 2^24 * 2^347 (denormals) or m * 2^104 (largest).
class BigInt {
 public:
  explicit BigInt(uint32_t v) {
    limbs_[0] = v;
    size_ = v ? 1 : 0;
  }

  void MulSmall(uint32_t f) {
    uint64_t carry = 0;
    for (int i = 0; i < size_; ++i) {
      const uint64_t p = static_cast<uint64_t>(limbs_[i]) * f + carry;
      limbs_[i] = static_cast<uint32_t>(p);
      carry = p >> 32;
    }
    if (carry != 0) limbs_[size_++] = static_cast<uint32_t>(carry);
  }

  void ShiftLeft(int bits) {
    while (bits >= 32) {
      for (int i = size_; i > 0; --i) limbs_[i] = limbs_[i - 1];
      limbs_[0] = 0;
      ++size_;
      bits -= 32;
    }
    if (bits > 0) {
      uint32_t carry = 0;
      for (int i = 0; i < size_; ++i) {
        const uint32_t v = limbs_[i];
        limbs_[i] = (v << bits) | carry;
        carry = v >> (32 - bits);
      }
      if (carry != 0) limbs_[size_++] = carry;
    }
  }

  // Divides in place, returns the remainder.
  uint32_t DivSmall(uint32_t d) {
    uint64_t rem = 0;
    for (int i = size_ - 1; i >= 0; --i) {
      const uint64_t cur = (rem << 32) | limbs_[i];
      limbs_[i] = static_cast<uint32_t>(cur / d);
      rem = cur % d;
    }
    while (size_ > 0 && limbs_[size_ - 1] == 0) --size_;
    return static_cast<uint32_t>(rem);
  }

  bool zero() const { return size_ == 0; }

 private:
  uint32_t limbs_[13] = {};
  int size_ = 0;
};

// Decimal digits of `n` (most significant first, no leading zeros) into
// `out`; returns their count. `n` is consumed.
int Digits(BigInt& n, char* out, int capacity) {
  char reversed[128];
  int count = 0;
  while (!n.zero()) {
    uint32_t chunk = n.DivSmall(1000000000u);
    const bool last = n.zero();
    for (int k = 0; k < 9 && (!last || chunk != 0); ++k) {
      reversed[count++] = static_cast<char>('0' + chunk % 10);
      chunk /= 10;
    }
  }
  if (count > capacity) count = capacity;  // unreachable for floats
  for (int i = 0; i < count; ++i) out[i] = reversed[count - 1 - i];
  return count;
}

// 5^e for 0 <= e <= 13 (5^13 < 2^32).
uint32_t Pow5(int e) {
  uint32_t f = 1;
  while (e-- > 0) f *= 5;
  return f;
}

size_t Copy(const char* text, char* out) {
  const size_t n = strlen(text);
  memcpy(out, text, n + 1);
  return n;
}

}  // namespace

size_t FormatUint(uint64_t value, char* out) {
  char reversed[20];
  int n = 0;
  do {
    reversed[n++] = static_cast<char>('0' + value % 10);
    value /= 10;
  } while (value != 0);
  for (int i = 0; i < n; ++i) out[i] = reversed[n - 1 - i];
  out[n] = '\0';
  return static_cast<size_t>(n);
}

size_t FormatInt(int64_t value, char* out) {
  if (value >= 0) return FormatUint(static_cast<uint64_t>(value), out);
  out[0] = '-';
  // -(v + 1) + 1 avoids overflowing on INT64_MIN.
  return 1 + FormatUint(static_cast<uint64_t>(-(value + 1)) + 1, out + 1);
}

size_t FormatFloat(float value, char* out) {
  uint32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  const bool negative = (bits >> 31) != 0;
  const uint32_t biased = (bits >> 23) & 0xffu;
  const uint32_t fraction = bits & 0x7fffffu;
  char* p = out;
  if (negative) *p++ = '-';
  if (biased == 0xff) return (p - out) + Copy(fraction ? "nan" : "inf", p);
  if (biased == 0 && fraction == 0) return (p - out) + Copy("0", p);

  // value = mantissa * 2^exp2 exactly.
  uint32_t mantissa = biased ? (fraction | 0x800000u) : fraction;
  int exp2 = biased ? static_cast<int>(biased) - 150 : -149;
  while ((mantissa & 1u) == 0) {  // smaller numbers, same value
    mantissa >>= 1;
    ++exp2;
  }
  // value = n * 10^exp10 with n an integer: m * 2^e, or m * 5^-e * 10^e.
  BigInt n(mantissa);
  int exp10 = 0;
  if (exp2 >= 0) {
    n.ShiftLeft(exp2);
  } else {
    for (int k = -exp2; k > 0; k -= 13) n.MulSmall(Pow5(k < 13 ? k : 13));
    exp10 = exp2;
  }
  char digits[120];
  const int count = Digits(n, digits, sizeof(digits));
  // Scientific exponent of the exact value: d.ddd * 10^x.
  int x = count - 1 + exp10;

  // Round to kPrecision significant digits, ties to even (the exact tail
  // decides, as in glibc).
  char d[kPrecision];
  for (int i = 0; i < kPrecision; ++i) d[i] = i < count ? digits[i] : '0';
  if (count > kPrecision) {
    const char next = digits[kPrecision];
    bool rest_nonzero = false;
    for (int i = kPrecision + 1; i < count; ++i) rest_nonzero |= digits[i] != '0';
    const bool odd = ((d[kPrecision - 1] - '0') & 1) != 0;
    if (next > '5' || (next == '5' && (rest_nonzero || odd))) {
      int i = kPrecision - 1;
      while (i >= 0 && d[i] == '9') d[i--] = '0';
      if (i >= 0) {
        ++d[i];
      } else {  // 999999999 -> 1000000000
        d[0] = '1';
        ++x;
      }
    }
  }
  int used = kPrecision;  // %g drops trailing zeros (and a bare point)
  while (used > 1 && d[used - 1] == '0') --used;

  if (x < -4 || x >= kPrecision) {
    *p++ = d[0];
    if (used > 1) {
      *p++ = '.';
      for (int i = 1; i < used; ++i) *p++ = d[i];
    }
    *p++ = 'e';
    *p++ = x < 0 ? '-' : '+';
    const int ax = x < 0 ? -x : x;
    if (ax >= 100) *p++ = static_cast<char>('0' + ax / 100);
    *p++ = static_cast<char>('0' + ax / 10 % 10);
    *p++ = static_cast<char>('0' + ax % 10);
  } else if (x >= 0) {
    for (int i = 0; i <= x; ++i) *p++ = d[i];
    if (used > x + 1) {
      *p++ = '.';
      for (int i = x + 1; i < used; ++i) *p++ = d[i];
    }
  } else {
    *p++ = '0';
    *p++ = '.';
    for (int i = 0; i < -x - 1; ++i) *p++ = '0';
    for (int i = 0; i < used; ++i) *p++ = d[i];
  }
  *p = '\0';
  return static_cast<size_t>(p - out);
}

}  // namespace baton::cortex_m
