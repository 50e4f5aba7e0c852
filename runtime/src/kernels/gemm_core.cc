// GEMM entry points: pick one compiled copy of the drivers (gemm/gemm_isa.inc)
// and forward to it; plus the B packer for strided matrices and workspace
// sizing, which do not depend on the instruction set.

#include "gemm_core.h"

#include <string.h>

#include "baton/kernels.h"
#include "gemm/gemm_blocking.h"
#include "parallel.h"

#if BATON_KERNEL_DISPATCH
#include <atomic>
#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif
#endif

namespace baton {
namespace kernels {

namespace isa_portable {
extern const GemmImpl kImpl;
}
#if BATON_KERNEL_DISPATCH && defined(__x86_64__)
namespace isa_avx2 {
extern const GemmImpl kImpl;
}
namespace isa_avx512 {
extern const GemmImpl kImpl;
}
namespace isa_avx512vnni {
extern const GemmImpl kImpl;
}
#elif BATON_KERNEL_DISPATCH && defined(__aarch64__)
namespace isa_neon_dotprod {
extern const GemmImpl kImpl;
}
#endif

namespace {

#if BATON_KERNEL_DISPATCH
#if defined(__aarch64__)
// The dot-product instructions (SDOT/UDOT), as the kernel reports them.
bool CpuHasDotProd() {
#if defined(__ARM_FEATURE_DOTPROD)
  return true;  // the build's own target has them
#elif defined(__linux__)
  // HWCAP_ASIMDDP (asm/hwcap.h), spelled out for older C libraries.
  constexpr unsigned long kHwcapAsimdDp = 1ul << 20;
  return (getauxval(AT_HWCAP) & kHwcapAsimdDp) != 0;
#else
  return false;
#endif
}
#endif

const GemmImpl* ImplFor(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::kPortable:
      return &isa_portable::kImpl;
#if defined(__x86_64__)
    case KernelIsa::kAvx2:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? &isa_avx2::kImpl
                                                                             : nullptr;
    case KernelIsa::kAvx512:
      // libgcc also checks that the OS saves the AVX-512 state (XCR0).
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma") ? &isa_avx512::kImpl
                                                                                : nullptr;
    case KernelIsa::kAvx512Vnni:
      __builtin_cpu_init();
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                     __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("fma")
                 ? &isa_avx512vnni::kImpl
                 : nullptr;
#elif defined(__aarch64__)
    case KernelIsa::kNeonDot:
      return CpuHasDotProd() ? &isa_neon_dotprod::kImpl : nullptr;
#endif
    default:
      return nullptr;
  }
}

// The chosen copy: an immutable table, so relaxed ordering suffices; racing
// first calls both store the same pointer.
std::atomic<const GemmImpl*> g_active{nullptr};

const GemmImpl& Active() {
  const GemmImpl* impl = g_active.load(std::memory_order_relaxed);
  if (impl == nullptr) {
    impl = ImplFor(DefaultKernelIsa());
    g_active.store(impl, std::memory_order_relaxed);
  }
  return *impl;
}
#else
const GemmImpl* ImplFor(KernelIsa isa) {
  return isa == KernelIsa::kPortable ? &isa_portable::kImpl : nullptr;
}
const GemmImpl& Active() { return isa_portable::kImpl; }
#endif

}  // namespace

void PackBStrided(const void* ctx, int64_t k0, int64_t kc, int64_t j0, int64_t nc, int nr,
                  float* dst) {
  const StridedMatrix& b = *static_cast<const StridedMatrix*>(ctx);
  const int64_t rs = b.row_stride;
  const int64_t cs = b.col_stride;
  for (int64_t jp = 0; jp < nc; jp += nr) {
    const int64_t w = Min(nr, nc - jp);
    float* panel = dst + jp * kc;
    const float* src = b.data + k0 * rs + (j0 + jp) * cs;
    if (cs == 1 && w == nr) {
      for (int64_t p = 0; p < kc; ++p) {
        memcpy(panel + p * nr, src + p * rs, sizeof(float) * nr);
      }
    } else if (rs == 1) {
      // Transposed B: walk each column contiguously.
      for (int64_t j = 0; j < nr; ++j) {
        if (j < w) {
          const float* col = src + j * cs;
          for (int64_t p = 0; p < kc; ++p) panel[p * nr + j] = col[p];
        } else {
          for (int64_t p = 0; p < kc; ++p) panel[p * nr + j] = 0.0f;
        }
      }
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        const float* row = src + p * rs;
        float* out = panel + p * nr;
        int64_t j = 0;
        for (; j < w; ++j) out[j] = row[j * cs];
        for (; j < nr; ++j) out[j] = 0.0f;
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
  Active().packed(m, n, k, alpha, a, pack_b, b_ctx, c, ldc, epi, workspace);
}

namespace {

// Below this many multiply-adds a GEMM runs on one thread: waking the
// workers costs a few microseconds.
constexpr int64_t kParallelMinMacs = 64 * 1024;

// One GEMM split into column (split_n) or row ranges of whole tiles. Every
// range is at least one full tile when the matrix is, so each driver picks
// the same micro-kernel as for the whole matrix, and the k blocking (hence
// every element's summation order) depends on k only.
struct GemmSplit {
  const GemmImpl* impl;
  int64_t m, n, k;
  float alpha;
  StridedMatrix a;
  PackBFn pack_b;
  const void* b_ctx;
  const float* b;  // GemmDirect's B
  int64_t ldb;
  float* c;
  int64_t ldc;
  const GemmEpilogue* epi;
  float* workspace;
  int64_t slice_floats;
  bool split_n;
};

// B's columns from j_offset on, for a column range's GemmPacked.
struct OffsetB {
  PackBFn pack_b;
  const void* ctx;
  int64_t j_offset;
};

void PackBOffset(const void* ctx, int64_t k0, int64_t kc, int64_t j0, int64_t nc, int nr,
                 float* dst) {
  const OffsetB& o = *static_cast<const OffsetB*>(ctx);
  o.pack_b(o.ctx, k0, kc, j0 + o.j_offset, nc, nr, dst);
}

// The epilogue of C's columns from `j` on, and of its rows from `i` on: the
// row bias and the fused sum move with them.
GemmEpilogue ColumnRange(const GemmEpilogue& epi, int64_t j) {
  GemmEpilogue out = epi;
  if (out.sum != nullptr) out.sum += j;
  return out;
}
GemmEpilogue RowRange(const GemmEpilogue& epi, int64_t i) {
  GemmEpilogue out = epi;
  if (out.row_bias != nullptr) out.row_bias += i;
  if (out.sum != nullptr) out.sum += i * out.ldsum;
  return out;
}

// The packing workspace of `size` columns (split_n) or rows of the split
// GEMM.
size_t PartWorkspaceBytes(const GemmSplit& s, int64_t size) {
  return s.split_n ? GemmWorkspaceBytes(s.m, size, s.k) : GemmWorkspaceBytes(size, s.n, s.k);
}

// A part runs in chunks whose workspace fits its slice (sized for the whole
// matrix): a part sizes its blocks from its own extent, so one of 1024
// columns may need one 1024-column block where the whole matrix of 3136
// used 784-column blocks, and would overrun into the next part's slice.
// Chunks are whole tiles; the summation order depends on k only, so the
// results do not change.
void PackedRange(void* ctx, int64_t begin, int64_t end, int slot) {
  const GemmSplit& s = *static_cast<const GemmSplit*>(ctx);
  float* ws = s.workspace + slot * s.slice_floats;
  const size_t capacity = GemmWorkspaceBytes(s.m, s.n, s.k);
  const int64_t grain = s.split_n ? s.impl->nr : s.impl->mr;
  while (begin < end) {
    int64_t size = end - begin;
    while (size > grain && PartWorkspaceBytes(s, size) > capacity) {
      const int64_t half = (size / 2 + grain - 1) / grain * grain;
      size = half < grain ? grain : half;
    }
    if (s.split_n) {
      const OffsetB ob{s.pack_b, s.b_ctx, begin};
      s.impl->packed(s.m, size, s.k, s.alpha, s.a, PackBOffset, &ob, s.c + begin, s.ldc,
                     ColumnRange(*s.epi, begin), ws);
    } else {
      StridedMatrix a = s.a;
      a.data += begin * a.row_stride;
      s.impl->packed(size, s.n, s.k, s.alpha, a, s.pack_b, s.b_ctx, s.c + begin * s.ldc, s.ldc,
                     RowRange(*s.epi, begin), ws);
    }
    begin += size;
  }
}

void DirectRange(void* ctx, int64_t begin, int64_t end, int slot) {
  (void)slot;
  const GemmSplit& s = *static_cast<const GemmSplit*>(ctx);
  if (s.split_n) {
    s.impl->direct(s.m, end - begin, s.k, s.a.data, s.a.row_stride, s.b + begin, s.ldb, s.c + begin,
                   s.ldc, ColumnRange(*s.epi, begin));
  } else {
    const GemmEpilogue epi = RowRange(*s.epi, begin);
    s.impl->direct(end - begin, s.n, s.k, s.a.data + begin * s.a.row_stride, s.a.row_stride, s.b,
                   s.ldb, s.c + begin * s.ldc, s.ldc, epi);
  }
}

// The largest of ParallelFor's ranges over n items in whole grains split
// `parts` ways.
int64_t LargestRange(int64_t n, int64_t grain, int parts) {
  const int64_t units = n / grain > 0 ? n / grain : 1;
  if (parts > units) parts = static_cast<int>(units);
  int64_t largest = 0;
  for (int slot = 0; slot < parts; ++slot) {
    int64_t begin = 0, end = 0;
    ParallelRange(n, grain, parts, slot, &begin, &end);
    largest = end - begin > largest ? end - begin : largest;
  }
  return largest;
}

// Parts to split into (1: serial) and along which dimension: columns when
// there are enough column tiles (packing A, the weights, is then the
// repeated work, or none when read in place), else rows. Columns too unless
// that gives one part more than 1.1x the share of the work rows would:
// squeezenet's classifier (n = 169, five 32-column tiles) split 64 and 105
// columns on 2 threads (1.44x over one), its 1000 rows split 492 and 508;
// its 13x13 3x3 layers likewise (256 rows: 120 and 136), where each part
// then packs all of B, 6% of the layer.
int ChooseSplit(const GemmImpl& impl, int64_t m, int64_t n, int64_t k, int max_parts,
                bool* out_split_n) {
  if (!BATON_PARALLEL_KERNELS) return 1;  // bare metal: the split code folds away
  int parts = ParallelThreads();
  if (parts > max_parts) parts = max_parts;
  if (parts <= 1 || m * n * k < kParallelMinMacs) return 1;
  const int64_t tiles_n = n / impl.nr;
  const int64_t tiles_m = m / impl.mr;
  *out_split_n = tiles_n >= 2 * parts || tiles_n >= tiles_m;
  if (*out_split_n && tiles_m >= 2) {
    const int64_t cn = LargestRange(n, impl.nr, parts), cm = LargestRange(m, impl.mr, parts);
    if (cn * m * 10 > cm * n * 11) *out_split_n = false;  // cn / n > 1.1 cm / m
  }
  const int64_t tiles = *out_split_n ? tiles_n : tiles_m;
  return tiles >= 2 ? parts : 1;
}

}  // namespace

void GemmPackedSliced(int64_t m, int64_t n, int64_t k, float alpha, StridedMatrix a, PackBFn pack_b,
                      const void* b_ctx, float* c, int64_t ldc, const GemmEpilogue& epi,
                      float* workspace, int slices) {
  const GemmImpl& impl = Active();
  bool split_n = true;
  const int parts = ChooseSplit(impl, m, n, k, slices, &split_n);
  if (parts <= 1 || k <= 0) {
    impl.packed(m, n, k, alpha, a, pack_b, b_ctx, c, ldc, epi, workspace);
    return;
  }
  const int64_t slice_floats =
      static_cast<int64_t>(ParallelSliceStride(GemmWorkspaceBytes(m, n, k)) / sizeof(float));
  GemmSplit s{&impl,   m, n, k,   alpha, a,         pack_b,       b_ctx,
              nullptr, 0, c, ldc, &epi,  workspace, slice_floats, split_n};
  ParallelFor(split_n ? n : m, split_n ? impl.nr : impl.mr, parts, PackedRange, &s);
}

namespace {

// Gemv's columns go to the runner's threads from this many multiply-adds (a
// classifier's 1000 x 1280 weights: 5 MB read once per inference), in
// ranges of whole 64-column grains, so that every column takes the same
// kernel path (vector groups, tails) as on one thread.
constexpr int64_t kParallelMinGemvMacs = 256 * 1024;

struct GemvJob {
  const GemmImpl* impl;
  int64_t k;
  float alpha;
  const float* x;
  int64_t x_stride;
  StridedMatrix b;
  float* y;
  const GemmEpilogue* epi;
};

void GemvRange(void* ctx, int64_t begin, int64_t end, int) {
  const GemvJob& j = *static_cast<const GemvJob*>(ctx);
  StridedMatrix b = j.b;
  b.data += begin * b.col_stride;
  j.impl->gemv(end - begin, j.k, j.alpha, j.x, j.x_stride, b, j.y + begin,
               ColumnRange(*j.epi, begin));
}

}  // namespace

void Gemv(int64_t n, int64_t k, float alpha, const float* x, int64_t x_stride, StridedMatrix b,
          float* y, const GemmEpilogue& epi) {
  const GemmImpl& impl = Active();
  if (BATON_PARALLEL_KERNELS && n >= 128 && n * k >= kParallelMinGemvMacs) {
    GemvJob job{&impl, k, alpha, x, x_stride, b, y, &epi};
    ParallelFor(n, 64, ParallelThreads(), GemvRange, &job);
    return;
  }
  impl.gemv(n, k, alpha, x, x_stride, b, y, epi);
}

void GemmDirect(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                int64_t ldb, float* c, int64_t ldc, const GemmEpilogue& epi) {
  const GemmImpl& impl = Active();
  bool split_n = true;
  const int parts = ChooseSplit(impl, m, n, k, 1 << 10, &split_n);
  if (parts <= 1 || k <= 0) {
    impl.direct(m, n, k, a, lda, b, ldb, c, ldc, epi);
    return;
  }
  GemmSplit s{&impl,   m,       n, k,      1.0f, StridedMatrix{a, lda, 1},
              nullptr, nullptr, b, ldb,    c,    ldc,
              &epi,    nullptr, 0, split_n};
  // With AVX-512's 12 x 32 tile, row parts in whole 8-row blocks too when
  // there are rows enough, so that the parts of a 7x7 or 13x13 layer keep
  // the 48-column panels (DirectTiles48) that one thread runs: squeezenet's
  // classifier split 492 and 508 rows, both on 32-column panels. The bits do
  // not depend on the split.
  const bool panels48 = impl.mr == 12 && impl.nr == 32;
  const int64_t row_grain = panels48 && m / 24 >= parts ? 24 : impl.mr;
  ParallelFor(split_n ? n : m, split_n ? impl.nr : row_grain, parts, DirectRange, &s);
}

#if BATON_CONV_DIRECT_BUILT
namespace {

struct ConvDirectJob {
  const DirectConv* g;
  float* ws;
  size_t stride;  // floats between slices
};

void ConvDirectRange(void* ctx, int64_t begin, int64_t end, int slot) {
  const ConvDirectJob& j = *static_cast<const ConvDirectJob*>(ctx);
  Active().conv_direct(*j.g, begin, end, j.ws + static_cast<size_t>(slot) * j.stride);
}

}  // namespace

bool ConvDirect(DirectConv g, float* ws, size_t slice_bytes, int slices) {
  const GemmImpl& impl = Active();
  if (impl.conv_direct == nullptr || g.m < impl.mr || g.c * g.kh * g.kw > kConvDirectMaxTaps) {
    return false;
  }
  g.lq = ConvDirectRowFloats(g.ow, g.kw, g.s);
  // As many output rows per band as a slice holds (at most the plane).
  const int64_t have = static_cast<int64_t>(slice_bytes / sizeof(float));
  const int64_t one = ConvDirectBandFloats(g, 1);
  const int64_t row_floats = ConvDirectBandFloats(g, 2) - one;  // per output row past the first
  if (have < one) return false;
  const int64_t band = 1 + (have - one) / row_floats;
  g.band = band < g.oh ? band : g.oh;
  ConvDirectJob job{&g, ws, ParallelSliceStride(slice_bytes) / sizeof(float)};
  ParallelFor(g.oh, 1, slices, ConvDirectRange, &job);
  return true;
}
#endif

void DepthwisePlane(const DwPlane& g, const float* x, const float* w, float bias, float* y,
                    float* ws) {
  Active().depthwise(g, x, w, bias, y, ws);
}

PackBFn Im2colPacker() { return Active().pack_im2col; }

namespace {

// Planes are independent: with a runner, ranges of them go to its threads
// (the same filter per plane, so the same bits) when the input holds at
// least this many floats (128 KiB).
constexpr int64_t kParallelMinPoolFloats = 32 * 1024;

struct PoolJob {
  const PoolPlane* g;
  const float* x;
  float* y;
};

void PoolRange(void* ctx, int64_t begin, int64_t end, int) {
  const PoolJob& j = *static_cast<const PoolJob*>(ctx);
  const int64_t in = j.g->h * j.g->w, out = j.g->oh * j.g->ow;
  Active().max_pool(*j.g, end - begin, j.x + begin * in, j.y + begin * out);
}

}  // namespace

void MaxPoolPlanes(const PoolPlane& g, int64_t planes, const float* x, float* y) {
  if (BATON_PARALLEL_KERNELS && planes > 1 && planes * g.h * g.w >= kParallelMinPoolFloats) {
    PoolJob job{&g, x, y};
    ParallelFor(planes, 1, ParallelThreads(), PoolRange, &job);
    return;
  }
  Active().max_pool(g, planes, x, y);
}

void WinogradWeights(const float* w, int64_t c, int64_t m, float* u) {
  Active().wino_weights(w, c, m, u);
}

void WinogradInput(const WinoInputSeg& s, float* scratch) { Active().wino_input(s, scratch); }

void WinogradOutput(const WinoOutputSeg& s) { Active().wino_output(s); }

int64_t WinogradMinTiles() { return Active().wino_min_tiles; }

void MapUnary(UnaryFn fn, const float* x, float* y, int64_t n) { Active().unary(fn, x, y, n); }

void ApplyEpilogue(const GemmEpilogue& epi, float* y, const float* sum, int64_t n) {
  Active().epilogue(epi, y, sum, n);
}

void QDot(const uint8_t* w, int64_t ldw, uint8_t flip, int64_t rows, const int16_t* cols, int64_t n,
          int64_t k, int32_t* acc, int64_t ldacc) {
  Active().qdot(w, ldw, flip, rows, cols, n, k, acc, ldacc);
}

void QTap(int32_t* acc, const int16_t* src, int16_t wv, int64_t n) {
  Active().qtap(acc, src, wv, n);
}

void QGemmPairs(const int16_t* w, const int16_t* x, int64_t ldx, int64_t kp, int64_t n,
                int32_t* acc, int64_t ldacc) {
  Active().qgemm_pairs(w, x, ldx, kp, n, acc, ldacc);
}

bool QGemmPairsAvailable() { return Active().qgemm_pairs != nullptr; }

void QGemmQuads(const uint8_t* const* w, int64_t kq, const int32_t* tail, const uint8_t* x,
                int64_t ldx, int64_t n, const int32_t* init, int32_t* acc, int64_t ldacc) {
  Active().qgemm_quads(w, kq, tail, x, ldx, n, init, acc, ldacc);
}

bool QGemmQuadsAvailable() { return Active().qgemm_quads != nullptr; }

void QTaps(int32_t* acc, const int16_t* const* src, const int16_t* wv, int64_t taps, int64_t n,
           bool add) {
  Active().qtaps(acc, src, wv, taps, n, add);
}

bool QTapsAvailable() { return Active().qtaps != nullptr; }

void QRequantize(const int32_t* acc, const int32_t* sums, int32_t wz, int32_t bias, int64_t n,
                 float scale, float lo, float hi, int32_t zero, uint8_t* y, int64_t stride) {
  Active().qrequantize(acc, sums, wz, bias, n, scale, lo, hi, zero, y, stride);
}

void QAddRow(const uint8_t* a, int64_t sa, const uint8_t* b, int64_t sb, int64_t n,
             const QAddRowParams& p, uint8_t* out) {
  Active().qadd_row(a, sa, b, sb, n, p, out);
}

void DepthwiseChannels(const DwPlane& g, const float* x, int64_t m0, int64_t lanes, int64_t mult,
                       const float* w, const float* bias, float* y, float* ws) {
  Active().depthwise_channels(g, x, m0, lanes, mult, w, bias, y, ws);
}

#if BATON_DW_DIRECT_BUILT
DwDirectFn DepthwiseDirect(const DwPlane& g) {
  const GemmImpl& impl = Active();
  return impl.depthwise_direct_takes != nullptr && impl.depthwise_direct_takes(g)
             ? impl.depthwise_direct
             : nullptr;
}
#endif

}  // namespace kernels

const char* KernelIsaName(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::kPortable:
      return "portable";
    case KernelIsa::kAvx2:
      return "avx2";
    case KernelIsa::kAvx512:
      return "avx512";
    case KernelIsa::kAvx512Vnni:
      return "avx512vnni";
    case KernelIsa::kNeonDot:
      return "neon_dotprod";
  }
  return "?";
}

bool KernelIsaAvailable(KernelIsa isa) { return kernels::ImplFor(isa) != nullptr; }

KernelIsa DefaultKernelIsa() {
  for (KernelIsa isa :
       {KernelIsa::kAvx512Vnni, KernelIsa::kAvx512, KernelIsa::kAvx2, KernelIsa::kNeonDot}) {
    if (KernelIsaAvailable(isa)) return isa;
  }
  return KernelIsa::kPortable;
}

KernelIsa ActiveKernelIsa() {
  const kernels::GemmImpl* active = &kernels::Active();
  for (KernelIsa isa :
       {KernelIsa::kAvx512Vnni, KernelIsa::kAvx512, KernelIsa::kAvx2, KernelIsa::kNeonDot}) {
    if (kernels::ImplFor(isa) == active) return isa;
  }
  return KernelIsa::kPortable;
}

bool SelectKernelIsa(KernelIsa isa) {
  const kernels::GemmImpl* impl = kernels::ImplFor(isa);
  if (impl == nullptr) return false;
#if BATON_KERNEL_DISPATCH
  kernels::g_active.store(impl, std::memory_order_relaxed);
#endif
  return true;
}

}  // namespace baton
