// Winograd F(2x2, 3x3) for dense 3x3, stride-1, undilated convolutions.
//
// Each 2x2 output tile comes from a 4x4 input patch d (tiles step by 2):
//   Y = A^T [ (G g G^T) (.) (B^T d B) ] A
// so the 9 multiply-adds per output, channel pair and pixel of the direct
// convolution become 16 per 4 outputs (2.25x fewer). With U = G g G^T (per
// output/input channel pair) and V = B^T d B (per input channel and tile),
// the 16 elementwise products summed over input channels are 16 GEMMs:
//   M_f[m x t] = U_f[m x c] * V_f[c x t],   f = 0..15,
// which GemmDirect runs in place (no packing). Matrices (Lavin & Gray 2016):
//   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
//   G   = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1]
//   A^T = [1 1 1 0; 0 1 -1 -1]
// The weights are transformed at every call (about 40 flops per channel
// pair, a few percent of the GEMMs for the layers that qualify).
//
// The three transforms are compiled per instruction set with the GEMM
// drivers (gemm/winograd_isa.inc, through GemmImpl): each runs along the
// tiles of a row segment or along channels with unit strides, so it
// vectorizes at the unit's width (as scalar code they cost more than the
// 16 GEMMs).
//
// Memory stays bounded: tiles go in blocks of at most tb (all M output
// channels at once), and the workspace holds U and one tile block of the
// other operands:
//   [ U: 16 x M x C ][ V: 16 x C x tb ][ M: 16 x M x tb ][ scratch rows ]
// Blocks are chosen from the shape alone (never from the instruction set),
// so the planner's workspace size holds for every build.

#include "conv_winograd.h"

#include "gemm/gemm_blocking.h"
#include "gemm_core.h"
#include "parallel.h"

namespace baton {
namespace kernels {
namespace {

constexpr int64_t kFreqs = 16;
// Largest workspace the Winograd path may use; a layer that would need more
// takes im2col + GEMM instead. 3 MiB admits 128 channels at 28x28
// (resnet18's second stage: U 1 MiB, V and M 0.5 MiB each).
constexpr int64_t kMaxWorkspaceBytes = 3 << 20;
// Tiles per block (the GEMMs' n): blocks of kTileBlock, a multiple of every
// micro-kernel tile's width (32, 24, 12), so that no tile is computed on a
// window shifted back over its neighbour; the rest (kMinBlock to block +
// kMinBlock tiles) in one or two blocks of at least kMinBlock, the widest
// tile (a narrower n falls back to the slow edge kernel).
constexpr int64_t kTileBlock = 96;
// Where V and M of a 96-tile block would pass this (floats, 1 MiB), blocks
// take 64 tiles (the arena holds a layer's workspace; 96 x 96 + 128 channels
// would grow googlenet's).
constexpr int64_t kBlockOperandFloats = 256 * 1024;
constexpr int64_t kNarrowTileBlock = 64;
constexpr int64_t kMinBlock = 32;
// Below this the GEMMs (k = input channels) are too thin to beat im2col +
// GEMM. This channel floor was 64 until the transforms went per ISA: since then
// squeezenet's 16- and 32-channel expand layers (16->64 at 55x55, 32->128
// at 27x27, 16->32 at 28x28) run 1.5-1.6x faster on AVX2 and the portable
// build; on AVX-512 (Zen) between 9% faster and 1.6x slower per layer, no
// change on squeezenet1_1 and googlenet as a whole. The floor of tiles is
// the active copy's (WinogradMinTiles, gemm_core.h) where U is transformed
// whole; plans reserve for the lowest of them (kWinogradMinTilesAnyIsa).
constexpr int64_t kMinChannels = 16;
// U larger than this (floats: 1 MiB) is not transformed whole: with one
// tile block (small planes with many channels, resnet18's 256 channels at
// 14x14) the output channels go in blocks of mb rows, each transforming its
// own part of U (at most kUBlockFloats, 512 KiB, so that it stays in cache
// for its 16 GEMMs) right before using it. Such layers then qualify from
// kMinBlock tiles on.
constexpr int64_t kSharedUFloats = 256 * 1024;
constexpr int64_t kUBlockFloats = 128 * 1024;
// mb is a multiple of every tile's rows (12, 4, 6).
constexpr int64_t kRowUnit = 12;

struct Plan {
  int64_t tiles_y = 0, tiles_x = 0, tiles = 0;
  int64_t block = 0;             // kTileBlock or kNarrowTileBlock
  int64_t full = 0;              // blocks of `block` tiles
  int64_t tail0 = 0, tail1 = 0;  // then blocks of these many (0: none)
  int64_t tb = 0;                // the widest block
  bool blocked = false;          // U per block of mb output channels
  int64_t mb = 0;                // output channels per block (m when not blocked)
  bool u_given = false;          // U is the node's input 4, not in the workspace

  int64_t Blocks() const { return full + (tail0 > 0 ? 1 : 0) + (tail1 > 0 ? 1 : 0); }
  // First tile and width of block b.
  void Block(int64_t b, int64_t* t0, int64_t* width) const {
    if (b < full) {
      *t0 = b * block;
      *width = block;
    } else if (b == full) {
      *t0 = full * block;
      *width = tail0;
    } else {
      *t0 = full * block + tail0;
      *width = tail1;
    }
  }

  // Frequency planes of V (c x tb) and M (m x tb), 16 floats apart beyond
  // their size: planes a multiple of 4 KiB apart (64 channels x 96 tiles)
  // would put the output transform's 16 streams in one L1 set.
  int64_t VPlane(const ConvGeom& g) const { return RoundUp(g.win.c * tb, 16) + 16; }
  int64_t MPlane(const ConvGeom&) const { return RoundUp(mb * tb, 16) + 16; }
  // Workspace offsets (floats) of V, M and the scratch rows, and the total.
  int64_t VOffset(const ConvGeom& g) const {
    return u_given ? 0 : RoundUp(kFreqs * mb * g.win.c, 16);
  }
  int64_t MOffset(const ConvGeom& g) const { return VOffset(g) + kFreqs * VPlane(g); }
  int64_t RowsOffset(const ConvGeom& g) const { return MOffset(g) + kFreqs * MPlane(g); }
  int64_t Floats(const ConvGeom& g) const { return RowsOffset(g) + WinoScratchFloats(tb); }
};

// Asks for floats [p, p + n) in L2, one request per 64-byte line (x86-64
// and AArch64 hosts; nothing elsewhere).
void PrefetchToL2(const float* p, int64_t n) {
#if defined(__x86_64__) || defined(__aarch64__)
  for (int64_t i = 0; i < n; i += 16) __builtin_prefetch(p + i, 0, 1);
#else
  (void)p;
  (void)n;
#endif
}

bool Shape(const ConvGeom& g) {
  const Window2d& w = g.win;
  return g.group == 1 && w.kh == 3 && w.kw == 3 && w.sh == 1 && w.sw == 1 && w.dh == 1 && w.dw == 1;
}

// False when the layer should not use Winograd with this floor of tiles
// (for U transformed whole). `u_given`: U comes with the node (input 4), so
// the workspace leaves it out; which layers qualify does not change.
bool MakePlan(const ConvGeom& g, int64_t min_tiles, Plan* out, bool u_given = false) {
  if (!Shape(g)) return false;
  const Window2d& w = g.win;
  Plan p;
  p.tiles_y = (w.oh + 1) / 2;
  p.tiles_x = (w.ow + 1) / 2;
  p.tiles = p.tiles_y * p.tiles_x;
  if (p.tiles < kMinBlock || w.c < kMinChannels || g.m < kMinChannels) return false;
  int64_t rest = p.tiles;
  p.block = kFreqs * (w.c + g.m) * kTileBlock > kBlockOperandFloats ? kNarrowTileBlock
                                                                     : kTileBlock;
  while (rest >= p.block + kMinBlock) {
    ++p.full;
    rest -= p.block;
  }
  if (rest <= p.block) {
    p.tail0 = rest;
  } else {  // two blocks of at least kMinBlock
    p.tail0 = Min(p.block, (rest - kMinBlock) / kMinBlock * kMinBlock);
    p.tail1 = rest - p.tail0;
  }
  p.tb = p.full > 0 ? p.block : (p.tail0 > p.tail1 ? p.tail0 : p.tail1);
  p.blocked = kFreqs * g.m * w.c > kSharedUFloats;
  if (p.blocked) {
    if (p.Blocks() > 1) return false;  // U would be transformed once per tile block
    const int64_t rows = kUBlockFloats / (kFreqs * w.c) / kRowUnit * kRowUnit;
    p.mb = Min(g.m, rows > kRowUnit ? rows : kRowUnit);
  } else {
    if (p.tiles < min_tiles) return false;
    p.mb = g.m;
  }
  if (p.Floats(g) * static_cast<int64_t>(sizeof(float)) <= kMaxWorkspaceBytes) {
    p.u_given = u_given;
    *out = p;
    return true;
  }
  return false;
}

// Tiles [t0, t0 + tb) of a block go row by row: `len` tiles of tile row ty
// starting at tile column tx0.
struct Segment {
  int64_t ty, tx0, len;
};

Segment SegmentAt(const Plan& p, int64_t t, int64_t remaining) {
  const int64_t ty = t / p.tiles_x;
  const int64_t tx0 = t % p.tiles_x;
  return Segment{ty, tx0, Min(remaining, p.tiles_x - tx0)};
}

// V[f][c][j] for tiles [t0, t0 + tb) (row stride tb, plane stride fv): B^T d
// B of each 4x4 input patch, one row segment at a time.
void TransformInput(const Window2d& w, const Plan& p, const float* x, int64_t t0, int64_t tb,
                    int64_t fv, float* v, float* scratch) {
  for (int64_t j0 = 0; j0 < tb;) {
    const Segment seg = SegmentAt(p, t0 + j0, tb - j0);
    WinoInputSeg s;
    s.x = x;
    s.h = w.h;
    s.w = w.w;
    s.c = w.c;
    s.iy0 = seg.ty * 2 - w.pt;
    s.ix0 = seg.tx0 * 2 - w.pl;
    s.len = seg.len;
    s.v = v + j0;
    s.ldv = tb;
    s.fstride = fv;
    WinogradInput(s, scratch);
    j0 += seg.len;
  }
}

// y tiles [t0, t0 + tb) of all m channels from M[f][i][j] (row stride tb,
// plane stride fm): A^T M A, plus bias, clamped, then the fused epilogue. A
// segment reaching past the output's right or bottom edge (odd sizes) drops
// those pixels.
void TransformOutput(const Window2d& w, const Plan& p, const float* mo, int64_t m, int64_t t0,
                     int64_t tb, int64_t fm, const float* bias, const Clamp& clamp, float* y,
                     const GemmEpilogue* fused, const float* sum) {
  for (int64_t j0 = 0; j0 < tb;) {
    const Segment seg = SegmentAt(p, t0 + j0, tb - j0);
    const int64_t oy = seg.ty * 2;
    const int64_t ox0 = seg.tx0 * 2;
    WinoOutputSeg s;
    s.mo = mo + j0;
    s.m = m;
    s.ldm = tb;
    s.fstride = fm;
    s.len = seg.len;
    const int64_t at = oy * w.ow + ox0;
    s.y = y + at;
    s.plane = w.oh * w.ow;
    s.ow = w.ow;
    s.rows = Min(2, w.oh - oy);
    s.cols = Min(2 * seg.len, w.ow - ox0);
    s.bias = bias;
    s.lo = clamp.lo;  // -inf/inf when disabled
    s.hi = clamp.hi;
    s.fused = fused;
    s.sum = sum != nullptr ? sum + at : nullptr;
    WinogradOutput(s);
    j0 += seg.len;
  }
}

}  // namespace

bool UseWinograd(const ConvGeom& g, bool u_given) {
  Plan p;
  return MakePlan(g, u_given ? kWinogradMinTilesAnyIsa : WinogradMinTiles(), &p);
}

bool WinogradOnEveryIsa(const ConvGeom& g) {
  Plan p;
  return MakePlan(g, kWinogradMinTilesEveryIsa, &p);
}

size_t WinogradWorkspaceBytes(const ConvGeom& g, bool u_given) {
  Plan p;
  if (!MakePlan(g, kWinogradMinTilesAnyIsa, &p, u_given)) return 0;
  return static_cast<size_t>(p.Floats(g)) * sizeof(float);
}

}  // namespace kernels

bool ConvTakesWinogradWeights(int64_t c, int64_t m, int64_t oh, int64_t ow) {
  kernels::ConvGeom g;
  g.win.c = c;
  g.win.oh = oh;
  g.win.ow = ow;
  g.win.kh = g.win.kw = 3;
  g.m = m;
  return kernels::WinogradWorkspaceBytes(g, true) > 0;
}

namespace kernels {
namespace {

// Tile blocks [begin, end) of all batch items (item = n * blocks + block),
// with the v, M and row buffers of workspace slice `slot`; U (the
// transformed weights, `u`) is the node's input 4 (Plan::u_given), or lives
// in slice 0 only, or, blocked, a block of it in each slice (`u` unused).
struct WinogradJob {
  const ConvGeom* g;
  const Plan* p;
  const float* x;
  const float* w;
  const float* u;  // U[f][m][c], given or transformed whole
  const float* bias;
  const Clamp* clamp;
  const GemmEpilogue* fused;
  float* y;
  float* workspace;
  int64_t slice_floats;
};

// Output channel blocks [b0, b1) (of p.mb channels each) of batch item n's
// tile block [t0, t0 + tb), whose V is in v: U (blocked: each block's part,
// transformed here) and M in `slice`, then the output transform.
void ChannelBlocks(const WinogradJob& j, float* slice, const float* v, int64_t n, int64_t t0,
                   int64_t tb, int64_t b0, int64_t b1) {
  const ConvGeom& g = *j.g;
  const Plan& p = *j.p;
  const Window2d& win = g.win;
  const int64_t c = win.c;
  const int64_t m = g.m;
  float* mo = slice + p.MOffset(g);
  const int64_t fv = p.VPlane(g);
  const int64_t fm = p.MPlane(g);
  const GemmEpilogue overwrite;
  const int64_t plane = win.oh * win.ow;
  float* yn = j.y + n * m * plane;
  const float* sum_n =
      j.fused != nullptr && j.fused->sum != nullptr ? j.fused->sum + n * m * plane : nullptr;
  for (int64_t i0 = b0 * p.mb; i0 < m && i0 < b1 * p.mb; i0 += p.mb) {
    const int64_t rows = Min(p.mb, m - i0);
    const int64_t next_rows = p.blocked ? Min(p.mb, m - i0 - rows) : 0;
    // Frequency f's rows of this block: u + f * fu, c floats apart.
    const float* u = slice;
    int64_t fu = rows * c;
    if (p.blocked && !p.u_given) {
      WinogradWeights(j.w + i0 * c * 9, c, rows, slice);
    } else {
      u = j.u + i0 * c;
      fu = m * c;
    }
    // Blocked: the next block's weights are read from DRAM (ResNet-50's
    // 256-channel layers hold 2.3 MiB); a sixteenth of them (given U: its
    // rows of the next frequency) goes to L2 before each of this block's
    // GEMMs, so that its transform or GEMM does not wait on them.
    const float* next_w = j.w + (i0 + rows) * c * 9;
    const int64_t next_floats = next_rows * c * 9;
    const int64_t chunk = (next_floats + kFreqs - 1) / kFreqs;
    for (int64_t f = 0; f < kFreqs; ++f) {
      if (p.u_given) {
        PrefetchToL2(u + f * fu + rows * c, next_rows * c);
      } else {
        PrefetchToL2(next_w + f * chunk, Min(chunk, next_floats - f * chunk));
      }
      GemmDirect(rows, tb, c, u + f * fu, c, v + f * fv, tb, mo + f * fm, tb, overwrite);
    }
    TransformOutput(win, p, mo, rows, t0, tb, fm, j.bias != nullptr ? j.bias + i0 : nullptr,
                    *j.clamp, yn + i0 * plane, j.fused,
                    sum_n != nullptr ? sum_n + i0 * plane : nullptr);
  }
}

void WinogradBlocks(void* ctx, int64_t begin, int64_t end, int slot) {
  const WinogradJob& j = *static_cast<const WinogradJob*>(ctx);
  const ConvGeom& g = *j.g;
  const Plan& p = *j.p;
  const Window2d& win = g.win;
  float* slice = j.workspace + slot * j.slice_floats;
  float* v = slice + p.VOffset(g);
  float* scratch = slice + p.RowsOffset(g);
  const int64_t blocks = p.Blocks();
  const int64_t mblocks = (g.m + p.mb - 1) / p.mb;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t n = item / blocks;
    int64_t t0 = 0, tb = 0;
    p.Block(item % blocks, &t0, &tb);
    TransformInput(win, p, j.x + n * win.c * win.h * win.w, t0, tb, p.VPlane(g), v, scratch);
    ChannelBlocks(j, slice, v, n, t0, tb, 0, mblocks);
  }
}

// One tile block split by output channel blocks: V (in slice 0) is shared,
// each part transforms its own blocks of U into its own slice.
struct ChannelJob {
  const WinogradJob* j;
  const float* v;
  int64_t tb;
};

void ChannelRange(void* ctx, int64_t begin, int64_t end, int slot) {
  const ChannelJob& cj = *static_cast<const ChannelJob*>(ctx);
  ChannelBlocks(*cj.j, cj.j->workspace + slot * cj.j->slice_floats, cj.v, 0, 0, cj.tb, begin,
                end);
}

}  // namespace

void WinogradConv(const ConvGeom& g, const float* x, const float* w, const float* bias,
                  const Clamp& clamp, float* y, float* workspace, size_t workspace_bytes,
                  const GemmEpilogue* fused, const float* u_given) {
  Plan p;
  if (!MakePlan(g, kWinogradMinTilesAnyIsa, &p, u_given != nullptr)) return;
  const float* u = u_given;
  if (u == nullptr && !p.blocked) {
    WinogradWeights(w, g.win.c, g.m, workspace);  // once per call
    u = workspace;
  }
  const size_t slice = static_cast<size_t>(p.Floats(g)) * sizeof(float);
  const int64_t blocks = p.Blocks();
  // With several tile blocks and workspace slices, the blocks go to the
  // calling thread's parallel runner (one GemmDirect each, serial inside);
  // else one block at a time, each GEMM split instead.
  const int slices = ParallelWorkspaceSlices(workspace_bytes, slice);
  WinogradJob job{&g,    &p,     x,     w, u,
                  bias,  &clamp, fused, y,
                  workspace, static_cast<int64_t>(ParallelSliceStride(slice) / sizeof(float))};
  const int64_t items = g.win.n * blocks;
  if (BATON_PARALLEL_KERNELS && p.u_given && !p.blocked && items == 1 && slices > 1 &&
      ParallelThreads() > 1) {
    // Given U, one tile block splits by output channels too (below), in
    // blocks of a part's share (squeezenet's 13x13 layers: each GEMM split
    // instead, 2 threads took the model 1.81 -> 1.52x over one). Each part
    // needs only its own rows of M, fewer than the slice holds.
    const int64_t parts = ParallelThreads();
    p.mb = RoundUp((g.m + parts - 1) / parts, kRowUnit);
  }
  const int64_t mblocks = (g.m + p.mb - 1) / p.mb;
  if (slices > 1 && items >= 2) {
    ParallelFor(items, 1, slices, WinogradBlocks, &job);
  } else if (BATON_PARALLEL_KERNELS && slices > 1 && items == 1 &&
             (p.blocked || p.u_given) && mblocks >= 2 && ParallelThreads() > 1) {
    // One tile block with U in blocks (256 channels at 14x14), or given: the
    // input transform once, then the output channel blocks over the runner,
    // each with its U block's transform (none when given), 16 GEMMs and
    // output transform. Splitting each GEMM instead left the transforms
    // serial: resnet18's 256-channel layers ran 1.07x faster on 2 threads
    // than on one.
    float* v = workspace + p.VOffset(g);
    TransformInput(g.win, p, x, 0, p.tb, p.VPlane(g), v, workspace + p.RowsOffset(g));
    ChannelJob cj{&job, v, p.tb};
    ParallelFor(mblocks, 1, slices, ChannelRange, &cj);
  } else {
    WinogradBlocks(&job, 0, items, 0);
  }
}

}  // namespace kernels
}  // namespace baton
