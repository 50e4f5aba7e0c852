// The integer dot-product and depthwise-tap kernels of the int8 family
// (gemm_core.h's QDot and QTap, runtime/src/kernels/gemm/qdot_isa.inc)
// against plain int64 loops, in every instruction set the build has. They
// are the only int8 loops with per-ISA code (NEON by GCC's vectorizer on
// aarch64, AVX2/AVX-512 on x86-64, SMLAD/MVE on Cortex-M), so this is what
// the aarch64 cross ctest runs to hold its copy to exact sums. Sizes cover
// every tail (k mod 8, n mod 4, odd row counts) and unaligned rows and
// columns; the values reach the bounds (bytes 0..255, columns -255..255)
// and the longest reduction, kMaxReduction.

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "baton/kernels.h"
#include "gemm_core.h"
#include "qlinear_gemm.h"

namespace baton {
namespace {

// A fixed pseudo-random sequence (the tests must not depend on the C library).
class Lcg {
 public:
  uint32_t Next() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state_ >> 33);
  }
  int32_t Range(int32_t lo, int32_t hi) {  // [lo, hi]
    return lo + static_cast<int32_t>(Next() % static_cast<uint32_t>(hi - lo + 1));
  }

 private:
  uint64_t state_ = 0x853c49e6748fea9bULL;
};

std::vector<KernelIsa> Isas() {
  std::vector<KernelIsa> isas;
  for (KernelIsa isa : {KernelIsa::kPortable, KernelIsa::kAvx2, KernelIsa::kAvx512}) {
    if (KernelIsaAvailable(isa)) isas.push_back(isa);
  }
  return isas;
}

struct IsaRestore {
  KernelIsa saved = ActiveKernelIsa();
  ~IsaRestore() { SelectKernelIsa(saved); }
};

// QDot on rows x n with reduction k, weights and columns starting `skew`
// bytes / elements past an aligned address.
void CheckDot(Lcg& rng, int64_t rows, int64_t n, int64_t k, uint8_t flip, int64_t skew,
              bool extreme) {
  const int64_t ldw = k + (k % 3);  // rows need not be packed
  std::vector<uint8_t> wbuf(static_cast<size_t>(rows * ldw + 8));
  std::vector<int16_t> cbuf(static_cast<size_t>(n * k + 8));
  uint8_t* w = wbuf.data() + skew;
  int16_t* cols = cbuf.data() + skew;
  for (auto& b : wbuf) b = extreme ? static_cast<uint8_t>(0xFF ^ flip) : rng.Next() & 0xFF;
  // extreme: every product 255 * 255, the largest sum.
  for (auto& c : cbuf) c = static_cast<int16_t>(extreme ? 255 : rng.Range(-255, 255));
  const int64_t ldacc = n + 3;
  std::vector<int32_t> acc(static_cast<size_t>(rows * ldacc), -1);
  kernels::QDot(w, ldw, flip, rows, cols, n, k, acc.data(), ldacc);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t want = 0;
      for (int64_t t = 0; t < k; ++t) want += (w[i * ldw + t] ^ flip) * int64_t{cols[j * k + t]};
      ASSERT_EQ(acc[static_cast<size_t>(i * ldacc + j)], want)
          << "isa " << KernelIsaName(ActiveKernelIsa()) << " rows " << rows << " n " << n << " k "
          << k << " flip " << int{flip} << " skew " << skew << " at (" << i << ", " << j << ")";
    }
  }
}

TEST(QDotTest, ExactSumsEveryShapeAndIsa) {
  IsaRestore restore;
  for (KernelIsa isa : Isas()) {
    ASSERT_TRUE(SelectKernelIsa(isa));
    Lcg rng;
    for (int64_t k : {0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 27, 36, 72, 100}) {
      for (int64_t rows : {1, 2, 3, 5}) {
        for (int64_t n : {1, 3, 4, 6, 9}) {
          for (uint8_t flip : {uint8_t{0}, uint8_t{0x80}}) {
            CheckDot(rng, rows, n, k, flip, (k + rows + n) % 4, false);
          }
        }
      }
    }
  }
}

TEST(QDotTest, LongestReductionAtTheBound) {
  IsaRestore restore;
  for (KernelIsa isa : Isas()) {
    ASSERT_TRUE(SelectKernelIsa(isa));
    Lcg rng;
    CheckDot(rng, 2, 4, kernels::kMaxReduction, 0, 1, true);
    CheckDot(rng, 3, 5, kernels::kMaxReduction, 0x80, 0, true);
    CheckDot(rng, 2, 4, 1001, 0x80, 3, false);
  }
}

TEST(QTapTest, ExactSumsEveryLengthAndIsa) {
  IsaRestore restore;
  for (KernelIsa isa : Isas()) {
    ASSERT_TRUE(SelectKernelIsa(isa));
    Lcg rng;
    for (int64_t n = 0; n <= 41; ++n) {
      for (int64_t skew = 0; skew < 2; ++skew) {
        std::vector<int16_t> src(static_cast<size_t>(n + 2));
        std::vector<int32_t> acc(static_cast<size_t>(n + 2));
        for (auto& v : src) v = static_cast<int16_t>(rng.Range(-255, 255));
        for (auto& v : acc) v = rng.Range(-1000000, 1000000);
        const auto wv = static_cast<int16_t>(n % 5 == 0 ? -255 : rng.Range(-255, 255));
        std::vector<int32_t> want = acc;
        for (int64_t i = 0; i < n; ++i) {
          want[static_cast<size_t>(i + skew)] += wv * src[static_cast<size_t>(i + skew)];
        }
        kernels::QTap(acc.data() + skew, src.data() + skew, wv, n);
        ASSERT_EQ(acc, want) << "isa " << KernelIsaName(isa) << " n " << n << " skew " << skew;
      }
    }
  }
}

}  // namespace
}  // namespace baton
