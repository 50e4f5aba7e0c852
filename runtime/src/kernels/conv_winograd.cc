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
// Memory stays bounded: tiles go in blocks of tb (all M output channels at
// once), and the workspace holds U and one tile block of the other operands:
//   [ U: 16 x M x C ][ V: 16 x C x tb ][ M: 16 x M x tb ][ 4 input rows ]
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
// takes im2col + GEMM instead. 2 MiB admits 128 channels (resnet18's second
// stage). On the torchvision models the arena peak lies elsewhere, so their
// arenas do not grow (resnet18: 4,439,040 B either way).
constexpr int64_t kMaxWorkspaceBytes = 2 << 20;
// Tiles per block (the GEMMs' n): split evenly into blocks of at most this
// many, so no block is narrower than 32, the widest micro-kernel tile (a
// narrower n falls back to the slow edge kernel).
constexpr int64_t kTileBlock = 64;
// Below these the GEMMs (k = input channels, n = tiles) are too thin to beat
// im2col + GEMM, measured with tests/bench (squeezenet's 16- and 32-channel
// expand layers, resnet18's 7x7 and 14x14 stages lose).
constexpr int64_t kMinTiles = 64;
constexpr int64_t kMinChannels = 64;

struct Plan {
  int64_t tiles_y = 0, tiles_x = 0, tiles = 0;
  int64_t tb = 0;  // tiles per block (evenly split)

  // Workspace offsets (floats) of V, M and the input rows, and the total.
  int64_t VOffset(const ConvGeom& g) const { return RoundUp(kFreqs * g.m * g.win.c, 16); }
  int64_t MOffset(const ConvGeom& g) const {
    return VOffset(g) + RoundUp(kFreqs * g.win.c * tb, 16);
  }
  int64_t RowsOffset(const ConvGeom& g) const {
    return MOffset(g) + RoundUp(kFreqs * g.m * tb, 16);
  }
  int64_t Floats(const ConvGeom& g) const { return RowsOffset(g) + 4 * (2 * tb + 2); }
};

bool Shape(const ConvGeom& g) {
  const Window2d& w = g.win;
  return g.group == 1 && w.kh == 3 && w.kw == 3 && w.sh == 1 && w.sw == 1 && w.dh == 1 && w.dw == 1;
}

// False when the layer should not use Winograd.
bool MakePlan(const ConvGeom& g, Plan* out) {
  if (!Shape(g)) return false;
  const Window2d& w = g.win;
  Plan p;
  p.tiles_y = (w.oh + 1) / 2;
  p.tiles_x = (w.ow + 1) / 2;
  p.tiles = p.tiles_y * p.tiles_x;
  if (p.tiles < kMinTiles || w.c < kMinChannels || g.m < kMinChannels) return false;
  p.tb = BlockSize(p.tiles, kTileBlock, 1);
  if (p.Floats(g) * static_cast<int64_t>(sizeof(float)) <= kMaxWorkspaceBytes) {
    *out = p;
    return true;
  }
  return false;
}

// U[f][i][c]: G g G^T of each 3x3 filter.
void TransformWeights(const float* wt, int64_t c_in, int64_t m, float* u) {
  const int64_t plane = m * c_in;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t c = 0; c < c_in; ++c) {
      const float* g = wt + (i * c_in + c) * 9;
      float gg[4][3];  // G g
      for (int col = 0; col < 3; ++col) {
        const float a = g[col], b = g[3 + col], d = g[6 + col];
        gg[0][col] = a;
        gg[1][col] = 0.5f * (a + b + d);
        gg[2][col] = 0.5f * (a - b + d);
        gg[3][col] = d;
      }
      float* dst = u + i * c_in + c;
      for (int r = 0; r < 4; ++r) {
        const float a = gg[r][0], b = gg[r][1], d = gg[r][2];
        dst[(r * 4 + 0) * plane] = a;
        dst[(r * 4 + 1) * plane] = 0.5f * (a + b + d);
        dst[(r * 4 + 2) * plane] = 0.5f * (a - b + d);
        dst[(r * 4 + 3) * plane] = d;
      }
    }
  }
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

// V[f][c][j] for tiles [t0, t0 + tb): B^T d B of each 4x4 input patch. Per
// row segment and channel, the four input rows (zero padded) are combined
// along y in place (B^T d, vectorized over x), then along x per tile (stride
// 2 over x, unit stride over the tiles that V is laid out in). `rows` holds
// 4 x (2 * tb + 2) floats.
void TransformInput(const Window2d& w, const Plan& p, const float* x, int64_t t0, int64_t tb,
                    float* v, float* rows) {
  const int64_t plane = w.c * tb;
  for (int64_t j0 = 0; j0 < tb;) {
    const Segment seg = SegmentAt(p, t0 + j0, tb - j0);
    const int64_t span = 2 * seg.len + 2;
    const int64_t iy0 = seg.ty * 2 - w.pt;
    const int64_t ix0 = seg.tx0 * 2 - w.pl;
    float* d0 = rows;
    float* d1 = rows + span;
    float* d2 = rows + 2 * span;
    float* d3 = rows + 3 * span;
    for (int64_t c = 0; c < w.c; ++c) {
      const float* xc = x + c * w.h * w.w;
      for (int r = 0; r < 4; ++r) {
        float* d = rows + r * span;
        const int64_t iy = iy0 + r;
        if (iy < 0 || iy >= w.h) {
          for (int64_t i = 0; i < span; ++i) d[i] = 0.0f;
          continue;
        }
        const float* row = xc + iy * w.w;
        if (ix0 >= 0 && ix0 + span <= w.w) {
          for (int64_t i = 0; i < span; ++i) d[i] = row[ix0 + i];
        } else {
          for (int64_t i = 0; i < span; ++i) {
            const int64_t ix = ix0 + i;
            d[i] = (ix >= 0 && ix < w.w) ? row[ix] : 0.0f;
          }
        }
      }
      for (int64_t i = 0; i < span; ++i) {  // B^T d, in place
        const float a = d0[i], b = d1[i], e = d2[i], f = d3[i];
        d0[i] = a - e;
        d1[i] = b + e;
        d2[i] = e - b;
        d3[i] = b - f;
      }
      for (int r = 0; r < 4; ++r) {  // (B^T d) B
        const float* e = rows + r * span;
        float* o = v + (r * 4) * plane + c * tb + j0;
        for (int64_t j = 0; j < seg.len; ++j) {
          const float a = e[2 * j], b = e[2 * j + 1], cc = e[2 * j + 2], dd = e[2 * j + 3];
          o[j] = a - cc;
          o[plane + j] = b + cc;
          o[2 * plane + j] = cc - b;
          o[3 * plane + j] = b - dd;
        }
      }
    }
    j0 += seg.len;
  }
}

// y tiles [t0, t0 + tb) of all m channels from M[f][i][j]: A^T M A,
// plus bias, clamped. Vectorized over the tiles of a row segment; a segment
// reaching past the output's right or bottom edge (odd sizes) drops those
// pixels.
void TransformOutput(const Window2d& w, const Plan& p, const float* mo, int64_t m, int64_t t0,
                     int64_t tb, const float* bias, const Clamp& clamp, float* y,
                     const GemmEpilogue* fused, const float* sum) {
  const int64_t plane = m * tb;
  const float lo = clamp.lo, hi = clamp.hi;  // -inf/inf when disabled
  for (int64_t j0 = 0; j0 < tb;) {
    const Segment seg = SegmentAt(p, t0 + j0, tb - j0);
    const int64_t oy = seg.ty * 2;
    const int64_t ox0 = seg.tx0 * 2;
    const bool full = oy + 2 <= w.oh && ox0 + 2 * seg.len <= w.ow;
    for (int64_t i = 0; i < m; ++i) {
      const float* src = mo + i * tb + j0;
      float* y0 = y + i * w.oh * w.ow + oy * w.ow + ox0;
      const float b = bias ? bias[i] : 0.0f;
      for (int64_t j = 0; j < seg.len; ++j) {
        float mf[16];  // the 16 frequencies of this tile
        for (int f = 0; f < 16; ++f) mf[f] = src[f * plane + j];
        float am[2][4];  // A^T M
        for (int q = 0; q < 4; ++q) {
          am[0][q] = mf[q] + mf[4 + q] + mf[8 + q];
          am[1][q] = mf[4 + q] - mf[8 + q] - mf[12 + q];
        }
        float out[2][2];
        for (int r = 0; r < 2; ++r) {
          out[r][0] = am[r][0] + am[r][1] + am[r][2] + b;
          out[r][1] = am[r][1] - am[r][2] - am[r][3] + b;
          for (int q = 0; q < 2; ++q) {
            float val = out[r][q];
            val = val < lo ? lo : val;
            val = val > hi ? hi : val;
            out[r][q] = val;
          }
        }
        if (full) {
          y0[2 * j] = out[0][0];
          y0[2 * j + 1] = out[0][1];
          y0[w.ow + 2 * j] = out[1][0];
          y0[w.ow + 2 * j + 1] = out[1][1];
        } else {
          for (int r = 0; r < 2 && oy + r < w.oh; ++r) {
            for (int q = 0; q < 2 && ox0 + 2 * j + q < w.ow; ++q) {
              y0[r * w.ow + 2 * j + q] = out[r][q];
            }
          }
        }
      }
      if (fused != nullptr) {  // the segment's two output rows of channel i
        const int64_t cols = Min(2 * seg.len, w.ow - ox0);
        for (int64_t r = 0; r < 2 && oy + r < w.oh; ++r) {
          const int64_t at = i * w.oh * w.ow + (oy + r) * w.ow + ox0;
          ApplyEpilogue(*fused, y + at, sum ? sum + at : nullptr, cols);
        }
      }
    }
    j0 += seg.len;
  }
}

}  // namespace

bool UseWinograd(const ConvGeom& g) {
  Plan p;
  return MakePlan(g, &p);
}

size_t WinogradWorkspaceBytes(const ConvGeom& g) {
  Plan p;
  if (!MakePlan(g, &p)) return 0;
  return static_cast<size_t>(p.Floats(g)) * sizeof(float);
}

namespace {

// Tile blocks [begin, end) of all batch items (item = n * blocks + block),
// with the v, M and row buffers of workspace slice `slot`; U (the
// transformed weights) lives in slice 0 only.
struct WinogradJob {
  const ConvGeom* g;
  const Plan* p;
  const float* x;
  const float* u;
  const float* bias;
  const Clamp* clamp;
  const GemmEpilogue* fused;
  float* y;
  float* workspace;
  int64_t slice_floats;
};

void WinogradBlocks(void* ctx, int64_t begin, int64_t end, int slot) {
  const WinogradJob& j = *static_cast<const WinogradJob*>(ctx);
  const ConvGeom& g = *j.g;
  const Plan& p = *j.p;
  const Window2d& win = g.win;
  const int64_t c = win.c;
  const int64_t m = g.m;
  float* slice = j.workspace + slot * j.slice_floats;
  float* v = slice + p.VOffset(g);
  float* mo = slice + p.MOffset(g);
  float* rows = slice + p.RowsOffset(g);
  const GemmEpilogue overwrite;
  const int64_t blocks = (p.tiles + p.tb - 1) / p.tb;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t n = item / blocks;
    const int64_t t0 = (item % blocks) * p.tb;
    const float* xn = j.x + n * c * win.h * win.w;
    float* yn = j.y + n * m * win.oh * win.ow;
    const int64_t tb = Min(p.tb, p.tiles - t0);
    TransformInput(win, p, xn, t0, tb, v, rows);
    for (int64_t f = 0; f < kFreqs; ++f) {
      GemmDirect(m, tb, c, j.u + f * m * c, c, v + f * c * tb, tb, mo + f * m * tb, tb, overwrite);
    }
    const float* sum_n = j.fused != nullptr && j.fused->sum != nullptr
                             ? j.fused->sum + n * m * win.oh * win.ow
                             : nullptr;
    TransformOutput(win, p, mo, m, t0, tb, j.bias, *j.clamp, yn, j.fused, sum_n);
  }
}

}  // namespace

void WinogradConv(const ConvGeom& g, const float* x, const float* w, const float* bias,
                  const Clamp& clamp, float* y, float* workspace, size_t workspace_bytes,
                  const GemmEpilogue* fused) {
  Plan p;
  if (!MakePlan(g, &p)) return;
  float* u = workspace;
  TransformWeights(w, g.win.c, g.m, u);  // once per call
  const size_t slice = static_cast<size_t>(p.Floats(g)) * sizeof(float);
  const int64_t blocks = (p.tiles + p.tb - 1) / p.tb;
  // With several tile blocks and workspace slices, the blocks go to the
  // calling thread's parallel runner (one GemmDirect each, serial inside);
  // else one block at a time, each GEMM split instead.
  const int slices = ParallelWorkspaceSlices(workspace_bytes, slice);
  WinogradJob job{&g,    &p, x,         u,
                  bias,  &clamp, fused, y,
                  workspace, static_cast<int64_t>(ParallelSliceStride(slice) / sizeof(float))};
  const int64_t items = g.win.n * blocks;
  if (slices > 1 && items >= 2) {
    ParallelFor(items, 1, slices, WinogradBlocks, &job);
  } else {
    WinogradBlocks(&job, 0, items, 0);
  }
}

}  // namespace kernels
}  // namespace baton
