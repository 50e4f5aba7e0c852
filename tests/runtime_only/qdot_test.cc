// The integer dot-product, depthwise-tap and quad kernels of the int8 family
// (gemm_core.h's QDot, QTap, QTaps and QGemmQuads, runtime/src/kernels/gemm/
// qdot_isa.inc) against plain int64 loops, in every instruction set the
// build and CPU have. They are the int8 loops with per-ISA code (NEON by
// GCC's vectorizer and SDOT on aarch64, AVX2/AVX-512/VNNI on x86-64,
// SMLAD/MVE on Cortex-M), so this is what the aarch64 cross ctest runs to
// hold its copies to exact sums (once more on a CPU without the dot-product
// extension, where the dispatch must not offer it). Sizes cover
// every tail (k mod 8, n mod 4, odd row counts) and unaligned rows and
// columns; the values reach the bounds (bytes 0..255, columns -255..255)
// and the longest reduction, kMaxReduction.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#if defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

#include "baton/kernels.h"
#include "gemm_core.h"
#include "isa_util.h"
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

using testing::IsaRestore;
using testing::Isas;

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

// QTaps (where a copy has it: AVX2, AVX-512, aarch64 dot product): up to
// kQTapsMax depthwise taps at once, with and without `add`, every length's
// tail, values at the bounds (-255..255), against plain int64 sums.
TEST(QTapsTest, ExactSumsEveryLengthAndIsa) {
  IsaRestore restore;
  int ran = 0;
  for (KernelIsa isa : Isas()) {
    ASSERT_TRUE(SelectKernelIsa(isa));
    if (!kernels::QTapsAvailable()) continue;
    ++ran;
    Lcg rng;
    for (int64_t taps :
         {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{9}, int64_t{25}, kernels::kQTapsMax}) {
      for (int64_t n = 0; n <= 41; n += (n < 20 ? 1 : 7)) {
        for (bool add : {false, true}) {
          std::vector<std::vector<int16_t>> src(static_cast<size_t>(taps));
          std::vector<const int16_t*> ptrs;
          std::vector<int16_t> wv;
          for (int64_t t = 0; t < taps; ++t) {
            src[static_cast<size_t>(t)].resize(static_cast<size_t>(n + 1));
            for (auto& v : src[static_cast<size_t>(t)]) {
              v = static_cast<int16_t>(t % 4 == 0 ? 255 : t % 4 == 1 ? -255 : rng.Range(-255, 255));
            }
            ptrs.push_back(src[static_cast<size_t>(t)].data() + t % 2);  // unaligned too
            wv.push_back(static_cast<int16_t>(t % 3 == 0 ? -255 : rng.Range(-255, 255)));
          }
          std::vector<int32_t> acc(static_cast<size_t>(n + 1));
          for (auto& v : acc) v = rng.Range(-1000000, 1000000);
          std::vector<int32_t> want = acc;
          for (int64_t i = 0; i < n; ++i) {
            int64_t sum = add ? want[static_cast<size_t>(i)] : 0;
            for (int64_t t = 0; t < taps; ++t)
              sum += int64_t{wv[static_cast<size_t>(t)]} * ptrs[static_cast<size_t>(t)][i];
            want[static_cast<size_t>(i)] = static_cast<int32_t>(sum);
          }
          kernels::QTaps(acc.data(), ptrs.data(), wv.data(), taps, n, add);
          ASSERT_EQ(acc, want) << "isa " << KernelIsaName(isa) << " taps " << taps << " n " << n
                               << " add " << add;
        }
      }
    }
  }
  RecordProperty("isas_with_taps", ran);
}

// QGemmQuads (where a copy has it: AVX-512 VNNI, aarch64 dot product) on
// kQQuadRows int8 weight rows read in place and uint8 column quads, against
// plain sums in wrapping uint32 arithmetic: kq full quads, with and without
// a tail quad, n a multiple of kQColTile, columns ldx apart.
void CheckQuads(Lcg& rng, int64_t kq, bool has_tail, int64_t n, int64_t ldx, int extreme) {
  using kernels::kQQuadRows;
  const int64_t ldw = 4 * kq + 3;  // rows need not be packed, nor aligned
  std::vector<uint8_t> wbuf(static_cast<size_t>(kQQuadRows * ldw + 1));
  // extreme 1: weights -128, columns 255 (the largest products); 2: weights
  // 127 and -128 alternating, columns 0 and 255.
  for (size_t i = 0; i < wbuf.size(); ++i) {
    wbuf[i] = extreme == 1   ? 0x80
              : extreme == 2 ? (i % 2 != 0 ? 0x7F : 0x80)
                             : static_cast<uint8_t>(rng.Next());
  }
  const uint8_t* w[kQQuadRows];
  for (int64_t r = 0; r < kQQuadRows; ++r) w[r] = wbuf.data() + 1 + r * ldw;
  std::vector<uint8_t> x(static_cast<size_t>((kq + 1) * ldx * 4));
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = extreme == 1   ? 255
           : extreme == 2 ? ((i / 3) % 2 != 0 ? 255 : 0)
                          : static_cast<uint8_t>(rng.Next());
  }
  int32_t tail[kQQuadRows], init[kQQuadRows];
  for (int64_t r = 0; r < kQQuadRows; ++r) {
    tail[r] = static_cast<int32_t>(rng.Next() ^ (rng.Next() << 16));
    if (extreme == 1) tail[r] = static_cast<int32_t>(0x80808080u);
    // Near the int32 bounds: the adds must wrap, as the contract says.
    init[r] = r == 0 ? INT32_MAX : r == 1 ? INT32_MIN : rng.Range(-1000000, 1000000);
  }
  const int64_t ldacc = n + 5;
  std::vector<int32_t> acc(static_cast<size_t>(kQQuadRows * ldacc), -1);
  kernels::QGemmQuads(w, kq, has_tail ? tail : nullptr, x.data(), ldx, n, init, acc.data(), ldacc);
  for (int64_t r = 0; r < kQQuadRows; ++r) {
    int8_t last[4];
    memcpy(last, &tail[r], sizeof(last));
    for (int64_t j = 0; j < n; ++j) {
      auto want = static_cast<uint32_t>(init[r]);
      for (int64_t q = 0; q < kq + (has_tail ? 1 : 0); ++q) {
        for (int64_t t = 0; t < 4; ++t) {
          const int32_t wv = q < kq ? static_cast<int8_t>(w[r][4 * q + t]) : last[t];
          want += static_cast<uint32_t>(wv * x[static_cast<size_t>((q * ldx + j) * 4 + t)]);
        }
      }
      ASSERT_EQ(acc[static_cast<size_t>(r * ldacc + j)], static_cast<int32_t>(want))
          << "isa " << KernelIsaName(ActiveKernelIsa()) << " kq " << kq << " tail " << has_tail
          << " n " << n << " ldx " << ldx << " extreme " << extreme << " at (" << r << ", " << j
          << ")";
    }
    // Nothing past n.
    for (int64_t j = n; j < ldacc; ++j) ASSERT_EQ(acc[static_cast<size_t>(r * ldacc + j)], -1);
  }
}

TEST(QGemmQuadsTest, ExactSumsEveryShapeAndIsa) {
  IsaRestore restore;
  int ran = 0;
  for (KernelIsa isa : Isas()) {
    ASSERT_TRUE(SelectKernelIsa(isa));
    if (!kernels::QGemmQuadsAvailable()) continue;
    ++ran;
    Lcg rng;
    for (int64_t kq : {0, 1, 2, 3, 4, 5, 7, 16, 33}) {
      for (bool has_tail : {false, true}) {
        for (int64_t n : {16, 32, 48, 64}) {
          for (int extreme = 0; extreme < 3; ++extreme) {
            CheckQuads(rng, kq, has_tail, n, n + (kq % 2) * 16, extreme);
          }
        }
      }
    }
    // A long reduction (K = 4 * 2048 + 3).
    CheckQuads(rng, 2048, true, 16, 16, 0);
    CheckQuads(rng, 2048, true, 32, 48, 1);
  }
  RecordProperty("isas_with_quads", ran);
}

// The dispatch offers the dot-product copy exactly where the CPU has the
// instructions (asked here from the kernel's own report, HWCAP_ASIMDDP), and
// prefers it; elsewhere it refuses it and nothing else changes.
TEST(KernelIsaTest, NeonDotProdMatchesCpu) {
  IsaRestore restore;
  EXPECT_STREQ(KernelIsaName(KernelIsa::kNeonDot), "neon_dotprod");
#if defined(__aarch64__) && defined(__linux__) && BATON_KERNEL_DISPATCH
  const bool dot = (getauxval(AT_HWCAP) & HWCAP_ASIMDDP) != 0;
  // cross.aarch64.ctest_no_dotprod runs this under qemu-aarch64 as a
  // Cortex-A53, which has no dot product.
  const char* qemu_cpu = std::getenv("QEMU_CPU");
  if (qemu_cpu != nullptr && std::strcmp(qemu_cpu, "cortex-a53") == 0) {
    EXPECT_FALSE(dot);
  }
  EXPECT_EQ(KernelIsaAvailable(KernelIsa::kNeonDot), dot);
  EXPECT_EQ(DefaultKernelIsa(), dot ? KernelIsa::kNeonDot : KernelIsa::kPortable);
  EXPECT_EQ(SelectKernelIsa(KernelIsa::kNeonDot), dot);
  EXPECT_EQ(ActiveKernelIsa(), dot ? KernelIsa::kNeonDot : restore.saved);
  if (dot) {
    EXPECT_TRUE(kernels::QGemmQuadsAvailable());
    EXPECT_TRUE(kernels::QTapsAvailable());
  }
  ASSERT_TRUE(SelectKernelIsa(KernelIsa::kPortable));
  EXPECT_FALSE(kernels::QGemmQuadsAvailable());
  EXPECT_FALSE(kernels::QTapsAvailable());
  std::printf("[ note ] neon_dotprod %s on this CPU\n", dot ? "available" : "unavailable");
#else
  EXPECT_FALSE(KernelIsaAvailable(KernelIsa::kNeonDot));
  EXPECT_FALSE(SelectKernelIsa(KernelIsa::kNeonDot));
  EXPECT_NE(DefaultKernelIsa(), KernelIsa::kNeonDot);
#endif
}

}  // namespace
}  // namespace baton
