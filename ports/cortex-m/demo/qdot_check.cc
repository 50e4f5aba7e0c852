// baton-qdot-check: the int8 dot-product and depthwise-tap loops of this
// core's kernels (gemm_core.h's QDot and QTap: SMLAD with the DSP
// extension, MVE on the M55, plain loops otherwise; gemm/qdot_isa.inc)
// against plain int64 sums, on the target (tests/cross:
// cross.<core>.int8.qdot under QEMU). The cases of
// tests/runtime_only/qdot_test.cc, which checks the host and aarch64 copies:
// every tail (k mod 8, n mod 4, odd row counts), unaligned rows and columns,
// values at the bounds and the longest reduction. Prints
// "qdot-check: N checks, F failed" through semihosting; returns F != 0.

#include <stdint.h>
#include <string.h>

#include "baton/cortex_m/format.h"
#include "baton/cortex_m/semihosting.h"
#include "gemm_core.h"
#include "qlinear_gemm.h"

namespace {

using baton::kernels::kMaxReduction;

// A fixed pseudo-random sequence (qdot_test.cc's).
uint64_t g_state = 0x853c49e6748fea9bULL;
uint32_t Next() {
  g_state = g_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return static_cast<uint32_t>(g_state >> 33);
}
int32_t Range(int32_t lo, int32_t hi) {  // [lo, hi]
  return lo + static_cast<int32_t>(Next() % static_cast<uint32_t>(hi - lo + 1));
}

// The largest case: 2 rows (and 2 columns) of the longest reduction.
constexpr int64_t kMaxLdw = kMaxReduction + kMaxReduction % 3;
uint8_t g_weights[2 * kMaxLdw + 8];
int16_t g_columns[2 * kMaxReduction + 8];
constexpr int64_t kLdacc = 16;
int32_t g_acc[5 * kLdacc];

int g_checks = 0, g_failed = 0;

// QDot of rows x n (at most 5 x 9) with reduction k, rows ldw apart, data
// from `skew` bytes / elements past an aligned address; extreme: every
// product 255 * 255 (the largest sum).
void CheckDot(int64_t rows, int64_t n, int64_t k, uint8_t flip, int64_t skew, bool extreme) {
  const int64_t ldw = k + k % 3;
  uint8_t* w = g_weights + skew;
  int16_t* cols = g_columns + skew;
  for (int64_t i = 0; i < rows * ldw; ++i) {
    w[i] = extreme ? static_cast<uint8_t>(0xFF ^ flip) : static_cast<uint8_t>(Next());
  }
  for (int64_t i = 0; i < n * k; ++i) {
    cols[i] = static_cast<int16_t>(extreme ? 255 : Range(-255, 255));
  }
  for (int32_t& a : g_acc) a = -1;
  baton::kernels::QDot(w, ldw, flip, rows, cols, n, k, g_acc, kLdacc);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t want = 0;
      for (int64_t t = 0; t < k; ++t) want += (w[i * ldw + t] ^ flip) * int64_t{cols[j * k + t]};
      ++g_checks;
      if (g_acc[i * kLdacc + j] != want) ++g_failed;
    }
  }
}

void CheckTap(int64_t n, int64_t skew) {
  int16_t src[48];
  int32_t acc[48], want[48];
  for (int16_t& v : src) v = static_cast<int16_t>(Range(-255, 255));
  for (int32_t& v : acc) v = Range(-1000000, 1000000);
  const auto wv = static_cast<int16_t>(n % 5 == 0 ? -255 : Range(-255, 255));
  memcpy(want, acc, sizeof(acc));
  for (int64_t i = skew; i < skew + n; ++i) want[i] += wv * src[i];
  baton::kernels::QTap(acc + skew, src + skew, wv, n);
  ++g_checks;
  if (memcmp(acc, want, sizeof(acc)) != 0) ++g_failed;
}

}  // namespace

int main() {
  const int64_t ks[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 27, 36, 72, 100};
  const int64_t row_counts[] = {1, 2, 3, 5};
  const int64_t column_counts[] = {1, 3, 4, 6, 9};
  for (int64_t k : ks) {
    for (int64_t rows : row_counts) {
      for (int64_t n : column_counts) {
        CheckDot(rows, n, k, 0, (k + rows + n) % 4, false);
        CheckDot(rows, n, k, 0x80, (k + rows + n) % 4, false);
      }
    }
  }
  CheckDot(2, 2, kMaxReduction, 0, 1, true);
  CheckDot(1, 2, kMaxReduction, 0x80, 0, true);
  for (int64_t n = 0; n <= 41; ++n) {
    CheckTap(n, 0);
    CheckTap(n, 1);
  }
  char number[baton::cortex_m::kNumberTextBytes];
  baton::cortex_m::SemihostWrite("qdot-check: ");
  baton::cortex_m::FormatInt(g_checks, number);
  baton::cortex_m::SemihostWrite(number);
  baton::cortex_m::SemihostWrite(" checks, ");
  baton::cortex_m::FormatInt(g_failed, number);
  baton::cortex_m::SemihostWrite(number);
  baton::cortex_m::SemihostWrite(" failed\n");
  return g_failed != 0;
}
