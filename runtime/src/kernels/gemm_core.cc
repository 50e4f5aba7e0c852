#include "gemm_core.h"

#include <string.h>

#if defined(__GNUC__)
// The micro-kernels stay out of line: their vectorized loop then does not
// depend on the caller's context, which keeps GCC's code generation stable.
#define BATON_NOINLINE __attribute__((noinline))
#else
#define BATON_NOINLINE
#endif

namespace baton {
namespace kernels {
namespace {

// Cache blocking. kc x kNr of B (one micro-panel) stays in L1 while the
// micro-kernel walks the mc x kc packed A block in L2; the kc x nc packed B
// block fits in L2/L3. Blocks are split evenly so that no block is tiny.
constexpr int64_t kKc = 256;
constexpr int64_t kMcTarget = 128;   // rounded down to a multiple of mr
constexpr int64_t kNcTarget = 1024;  // rounded down to a multiple of nr
// Direct driver: columns per block (kc x this of B is re-read per kMr rows).
constexpr int64_t kNcDirect = kNr * (512 / kNr);

int64_t Min(int64_t a, int64_t b) { return a < b ? a : b; }
int64_t RoundUp(int64_t a, int64_t unit) { return (a + unit - 1) / unit * unit; }

// Size of each block when splitting `n` into blocks of at most `max_block`
// (both multiples of `unit`), as evenly as possible.
int64_t BlockSize(int64_t n, int64_t max_block, int64_t unit) {
  const int64_t blocks = (n + max_block - 1) / max_block;
  return RoundUp((n + blocks - 1) / blocks, unit);
}

// Block sizes of GemmPacked for an mr x nr tile.
struct Blocking {
  int64_t mb, nb, kb;

  Blocking(int64_t mr, int64_t nr, int64_t m, int64_t n, int64_t k)
      : mb(BlockSize(m, mr * (kMcTarget / mr), mr)),
        nb(BlockSize(n, nr * (kNcTarget / nr), nr)),
        kb(BlockSize(k, kKc, 1)) {}

  // Workspace layout: packed A block, then (64-byte aligned) packed B block.
  int64_t BOffset() const { return RoundUp(mb * kb, 16); }
  int64_t Floats() const { return BOffset() + kb * nb; }
};

// tile[kMr x kNr] = sum_k a[k][0..kMr) (outer) b[k][0..kNr).
BATON_NOINLINE void MicroKernelPacked(int64_t kc, const float* __restrict a,
                                      const float* __restrict b, float* __restrict tile) {
  float acc[kMr][kNr];
  for (int i = 0; i < kMr; ++i) {
    for (int j = 0; j < kNr; ++j) acc[i][j] = 0.0f;
  }
  for (int64_t p = 0; p < kc; ++p) {
    for (int i = 0; i < kMr; ++i) {
      const float av = a[i];
      for (int j = 0; j < kNr; ++j) acc[i][j] += av * b[j];
    }
    a += kMr;
    b += kNr;
  }
  for (int i = 0; i < kMr; ++i) {
    for (int j = 0; j < kNr; ++j) tile[i * kNr + j] = acc[i][j];
  }
}

// Same product with A read in place (row-major, unit column stride) and B
// packed. With the wide-vector tiles this is as fast as the packed kernel and
// saves packing the weights (the dominant cost once the kernel is fast); with
// the SSE tile it is slower, so the portable build packs A.
#if defined(__AVX2__) || defined(__AVX512F__)
constexpr bool kAInPlace = true;
#else
constexpr bool kAInPlace = false;
#endif

BATON_NOINLINE void MicroKernelAStrided(int64_t kc, const float* __restrict a, int64_t lda,
                                        const float* __restrict b, float* __restrict tile) {
  float acc[kMr][kNr];
  for (int i = 0; i < kMr; ++i) {
    for (int j = 0; j < kNr; ++j) acc[i][j] = 0.0f;
  }
  for (int64_t p = 0; p < kc; ++p) {
    float av[kMr];
    for (int i = 0; i < kMr; ++i) av[i] = a[i * lda + p];
    for (int i = 0; i < kMr; ++i) {
      for (int j = 0; j < kNr; ++j) acc[i][j] += av[i] * b[j];
    }
    b += kNr;
  }
  for (int i = 0; i < kMr; ++i) {
    for (int j = 0; j < kNr; ++j) tile[i * kNr + j] = acc[i][j];
  }
}

// Same product with A and B read in place (row-major, unit column stride).
BATON_NOINLINE void MicroKernelDirect(int64_t kc, const float* __restrict a, int64_t lda,
                                      const float* __restrict b, int64_t ldb,
                                      float* __restrict tile) {
  float acc[kMr][kNr];
  for (int i = 0; i < kMr; ++i) {
    for (int j = 0; j < kNr; ++j) acc[i][j] = 0.0f;
  }
  for (int64_t p = 0; p < kc; ++p) {
    for (int i = 0; i < kMr; ++i) {
      const float av = a[i * lda + p];
      for (int j = 0; j < kNr; ++j) acc[i][j] += av * b[j];
    }
    b += ldb;
  }
  for (int i = 0; i < kMr; ++i) {
    for (int j = 0; j < kNr; ++j) tile[i * kNr + j] = acc[i][j];
  }
}

// Edge tiles of the direct driver: mr <= kMr rows, nr <= kNr columns.
void MicroKernelDirectEdge(int64_t kc, int64_t mr, int64_t nr, const float* a, int64_t lda,
                           const float* b, int64_t ldb, float* tile) {
  for (int64_t i = 0; i < mr; ++i) {
    float* t = tile + i * kNr;
    for (int64_t j = 0; j < nr; ++j) t[j] = 0.0f;
    const float* ar = a + i * lda;
    for (int64_t p = 0; p < kc; ++p) {
      const float av = ar[p];
      const float* br = b + p * ldb;
      for (int64_t j = 0; j < nr; ++j) t[j] += av * br[j];
    }
  }
}

// Writes the top-left mr x nr of `tile` (row stride kNr) to c. `first` and
// `last` mark the first and last k block: the bias is added in the first, the
// clamp applied in the last. kFull: mr == kMr and nr == kNr, so the loops have
// constant trip counts and vectorize without remainder code.
template <bool kFull>
void StoreTileT(const float* tile, int64_t mr, int64_t nr, float* c, int64_t ldc, const float* bias,
                const GemmEpilogue& epi, bool first, bool last) {
  if (kFull) {
    mr = kMr;
    nr = kNr;
  }
  const bool overwrite = first && !epi.accumulate;
  const bool clamp = last && epi.clamp;
  const float lo = epi.lo;
  const float hi = epi.hi;
  for (int64_t i = 0; i < mr; ++i) {
    const float* t = tile + i * kNr;
    float* row = c + i * ldc;
    const float b = (first && bias != nullptr) ? bias[i] : 0.0f;
    if (overwrite) {
      for (int64_t j = 0; j < nr; ++j) row[j] = t[j] + b;
    } else {
      for (int64_t j = 0; j < nr; ++j) row[j] += t[j] + b;
    }
    if (clamp) {
      for (int64_t j = 0; j < nr; ++j) {
        float v = row[j];
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
        row[j] = v;
      }
    }
  }
}

void StoreTile(const float* tile, int64_t mr, int64_t nr, float* c, int64_t ldc, const float* bias,
               const GemmEpilogue& epi, bool first, bool last) {
  if (mr == kMr && nr == kNr) {
    StoreTileT<true>(tile, mr, nr, c, ldc, bias, epi, first, last);
  } else {
    StoreTileT<false>(tile, mr, nr, c, ldc, bias, epi, first, last);
  }
}

// Packs rows [i0, i0+mc) x columns [k0, k0+kc) of alpha*A into kMr panels.
void PackA(const StridedMatrix& a, float alpha, int64_t i0, int64_t mc, int64_t k0, int64_t kc,
           float* dst) {
  const int64_t cs = a.col_stride;
  for (int64_t q = 0; q < mc; q += kMr) {
    float* panel = dst + q * kc;
    if (q + kMr <= mc && cs == 1) {
      // Full panel of row-major A: kMr sequential reads, one sequential write.
      const float* src[kMr];
      for (int ii = 0; ii < kMr; ++ii) src[ii] = a.data + (i0 + q + ii) * a.row_stride + k0;
      for (int64_t p = 0; p < kc; ++p) {
        for (int ii = 0; ii < kMr; ++ii) panel[p * kMr + ii] = alpha * src[ii][p];
      }
      continue;
    }
    for (int64_t ii = 0; ii < kMr; ++ii) {
      const int64_t row = q + ii;
      if (row < mc) {
        const float* src = a.data + (i0 + row) * a.row_stride + k0 * cs;
        for (int64_t p = 0; p < kc; ++p) panel[p * kMr + ii] = alpha * src[p * cs];
      } else {
        for (int64_t p = 0; p < kc; ++p) panel[p * kMr + ii] = 0.0f;
      }
    }
  }
}

// sum x[p * x_stride] * y[p] with sixteen partial sums, so that the loop
// vectorizes without reassociation flags. Out of line: inlined into Gemv's
// loop over columns, GCC vectorizes across columns with gathers instead.
BATON_NOINLINE float Dot(const float* __restrict x, int64_t x_stride, const float* __restrict y,
                         int64_t k) {
  float acc[16] = {};
  int64_t p = 0;
  if (x_stride == 1) {
    for (; p + 16 <= k; p += 16) {
      for (int l = 0; l < 16; ++l) acc[l] += x[p + l] * y[p + l];
    }
  }
  float sum = 0.0f;
  for (; p < k; ++p) sum += x[p * x_stride] * y[p];
  for (int l = 0; l < 16; ++l) sum += acc[l];
  return sum;
}

// c = 0 (or unchanged) + bias, clamped: the k == 0 case.
void GemmEmptyK(int64_t m, int64_t n, float* c, int64_t ldc, const GemmEpilogue& epi) {
  for (int64_t i = 0; i < m; ++i) {
    float* row = c + i * ldc;
    const float b = epi.row_bias ? epi.row_bias[i] : 0.0f;
    for (int64_t j = 0; j < n; ++j) {
      float v = (epi.accumulate ? row[j] : 0.0f) + b;
      if (epi.clamp) {
        v = v < epi.lo ? epi.lo : v;
        v = v > epi.hi ? epi.hi : v;
      }
      row[j] = v;
    }
  }
}

}  // namespace

void PackBStrided(const void* ctx, int64_t k0, int64_t kc, int64_t j0, int64_t nc, float* dst) {
  const StridedMatrix& b = *static_cast<const StridedMatrix*>(ctx);
  const int64_t rs = b.row_stride;
  const int64_t cs = b.col_stride;
  for (int64_t jp = 0; jp < nc; jp += kNr) {
    const int64_t w = Min(kNr, nc - jp);
    float* panel = dst + jp * kc;
    const float* src = b.data + k0 * rs + (j0 + jp) * cs;
    if (cs == 1 && w == kNr) {
      for (int64_t p = 0; p < kc; ++p) {
        memcpy(panel + p * kNr, src + p * rs, sizeof(float) * kNr);
      }
    } else if (rs == 1) {
      // Transposed B: walk each column contiguously.
      for (int64_t j = 0; j < kNr; ++j) {
        if (j < w) {
          const float* col = src + j * cs;
          for (int64_t p = 0; p < kc; ++p) panel[p * kNr + j] = col[p];
        } else {
          for (int64_t p = 0; p < kc; ++p) panel[p * kNr + j] = 0.0f;
        }
      }
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        const float* row = src + p * rs;
        float* out = panel + p * kNr;
        int64_t j = 0;
        for (; j < w; ++j) out[j] = row[j * cs];
        for (; j < kNr; ++j) out[j] = 0.0f;
      }
    }
  }
}

size_t GemmWorkspaceBytes(int64_t m, int64_t n, int64_t k) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  int64_t floats = 0;
  for (const TileShape& t : kAllTileShapes) {
    const int64_t f = Blocking(t.mr, t.nr, m, n, k).Floats();
    floats = f > floats ? f : floats;
  }
  return static_cast<size_t>(floats) * sizeof(float);
}

void GemmPacked(int64_t m, int64_t n, int64_t k, float alpha, StridedMatrix a, PackBFn pack_b,
                const void* b_ctx, float* c, int64_t ldc, const GemmEpilogue& epi,
                float* workspace) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    GemmEmptyK(m, n, c, ldc, epi);
    return;
  }
  const Blocking blocking(kMr, kNr, m, n, k);
  const int64_t mb = blocking.mb, nb = blocking.nb, kb = blocking.kb;
  float* packed_a = workspace;
  float* packed_b = workspace + blocking.BOffset();
  float tile[kMr * kNr];

  // Row-major A with alpha 1 (convolution weights) is read in place when the
  // tile allows; a partial bottom tile then reuses the last full window.
  const bool a_in_place = kAInPlace && a.col_stride == 1 && alpha == 1.0f && m >= kMr;

  for (int64_t jc = 0; jc < n; jc += nb) {
    const int64_t nc = Min(nb, n - jc);
    for (int64_t pc = 0; pc < k; pc += kb) {
      const int64_t kc = Min(kb, k - pc);
      const bool first = pc == 0;
      const bool last = pc + kc == k;
      pack_b(b_ctx, pc, kc, jc, nc, packed_b);
      for (int64_t ic = 0; ic < m; ic += mb) {
        const int64_t mc = Min(mb, m - ic);
        if (!a_in_place) PackA(a, alpha, ic, mc, pc, kc, packed_a);
        for (int64_t jr = 0; jr < nc; jr += kNr) {
          const int64_t nr = Min(kNr, nc - jr);
          const float* bp = packed_b + jr * kc;
          for (int64_t ir = 0; ir < mc; ir += kMr) {
            const int64_t mr = Min(kMr, mc - ir);
            const int64_t row = ic + ir;
            const float* kept = tile;
            if (a_in_place) {
              const int64_t r0 = mr == kMr ? row : m - kMr;
              MicroKernelAStrided(kc, a.data + r0 * a.row_stride + pc, a.row_stride, bp, tile);
              kept = tile + (row - r0) * kNr;
            } else {
              MicroKernelPacked(kc, packed_a + ir * kc, bp, tile);
            }
            const float* bias = epi.row_bias ? epi.row_bias + row : nullptr;
            StoreTile(kept, mr, nr, c + row * ldc + jc + jr, ldc, bias, epi, first, last);
          }
        }
      }
    }
  }
}

void Gemv(int64_t n, int64_t k, float alpha, const float* x, int64_t x_stride, StridedMatrix b,
          float* y, const GemmEpilogue& epi) {
  const float bias = epi.row_bias ? epi.row_bias[0] : 0.0f;
  if (!epi.accumulate) {
    for (int64_t j = 0; j < n; ++j) y[j] = 0.0f;
  }
  if (b.row_stride == 1 && b.col_stride != 1) {
    // Column j of B is contiguous (transposed B): one dot product per output,
    // eight partial sums so the loop vectorizes without reassociation flags.
    for (int64_t j = 0; j < n; ++j) {
      y[j] += alpha * Dot(x, x_stride, b.data + j * b.col_stride, k);
    }
  } else {
    // Rows of B: y += (alpha * x[p]) * B[p, :].
    for (int64_t p = 0; p < k; ++p) {
      const float s = alpha * x[p * x_stride];
      const float* row = b.data + p * b.row_stride;
      if (b.col_stride == 1) {
        for (int64_t j = 0; j < n; ++j) y[j] += s * row[j];
      } else {
        for (int64_t j = 0; j < n; ++j) y[j] += s * row[j * b.col_stride];
      }
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    float v = y[j] + bias;
    if (epi.clamp) {
      v = v < epi.lo ? epi.lo : v;
      v = v > epi.hi ? epi.hi : v;
    }
    y[j] = v;
  }
}

void GemmDirect(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                int64_t ldb, float* c, int64_t ldc, const GemmEpilogue& epi) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    GemmEmptyK(m, n, c, ldc, epi);
    return;
  }
  const int64_t nb = BlockSize(n, kNcDirect, kNr);
  const int64_t kb = BlockSize(k, kKc, 1);
  float tile[kMr * kNr];
  for (int64_t jc = 0; jc < n; jc += nb) {
    const int64_t nc = Min(nb, n - jc);
    for (int64_t pc = 0; pc < k; pc += kb) {
      const int64_t kc = Min(kb, k - pc);
      const bool first = pc == 0;
      const bool last = pc + kc == k;
      for (int64_t ir = 0; ir < m; ir += kMr) {
        const int64_t mr = Min(kMr, m - ir);
        // A partial tile at the bottom or right edge is computed by the fast
        // kernel on a full window shifted back over the previous tile (the
        // operands are read in place, so any window is free), keeping only
        // its last mr rows / nr columns. Tiny matrices use the edge kernel.
        const int64_t r0 = (mr == kMr || m < kMr) ? ir : m - kMr;
        const float* bias = epi.row_bias ? epi.row_bias + ir : nullptr;
        for (int64_t jr = 0; jr < nc; jr += kNr) {
          const int64_t nr = Min(kNr, nc - jr);
          const int64_t j = jc + jr;
          const int64_t c0 = (nr == kNr || n < kNr) ? j : j + nr - kNr;
          const float* kept = tile;
          if (m >= kMr && n >= kNr) {
            MicroKernelDirect(kc, a + r0 * lda + pc, lda, b + pc * ldb + c0, ldb, tile);
            kept = tile + (ir - r0) * kNr + (j - c0);
          } else {
            MicroKernelDirectEdge(kc, mr, nr, a + ir * lda + pc, lda, b + pc * ldb + j, ldb, tile);
          }
          StoreTile(kept, mr, nr, c + ir * ldc + j, ldc, bias, epi, first, last);
        }
      }
    }
  }
}

}  // namespace kernels
}  // namespace baton
