// ConvTranspose: NCHW (or NCL) float32, grouped, with optional bias and fused
// clamp. Weight [C, M/group, kH, kW].
//
// Per batch item and group, a block of input rows goes through the GEMM core
// and is scattered into the output (col2im):
//   col[Mg*kH*kW x rows*W] = W_g^T[Mg*kH*kW x Cg] * X_g[Cg x rows*W]
//   y[m][iy*sh - pt + ky*dh][ix*sw - pl + kx*dw] += col[(m, ky, kx)][(iy, ix)]
// The output starts as the bias. Output positions no tap reaches (past the
// end: output_padding) keep the bias. Row blocks bound the col buffer to
// about kColBudgetBytes whatever the layer size.
//
//   workspace: [ GEMM packing buffers ][ col block: Mg*kH*kW x rows*W floats ]

#include <string.h>

#include "gemm_core.h"
#include "kernel_family.h"
#include "window.h"

namespace baton {
namespace kernels {
namespace {

constexpr int64_t kColBudgetBytes = 1 << 20;

struct TransposedGeom {
  Window2d win;  // h, w: input; oh, ow: output
  int64_t m = 0, group = 1;
  int64_t rows = 1;  // input rows per block
};

Status ParseConvTranspose(const KernelCall& call, TransposedGeom* out, Clamp* out_clamp) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 2, 3, 1));
  BATON_RETURN_IF_ERROR(CheckAllF32(call));
  const schema::ConvParams* p = call.node->params_as_ConvParams();
  BATON_KCHECK(p != nullptr, "ConvTranspose needs ConvParams");
  const TensorArg& x = call.inputs[0];
  const TensorArg& w = call.inputs[1];
  const TensorArg& y = call.outputs[0];
  TransposedGeom g;
  BATON_RETURN_IF_ERROR(
      ParseWindow(x, y, p->kernel(), p->strides(), p->pads(), p->dilations(), &g.win));
  const Window2d& win = g.win;
  BATON_KCHECK(w.rank() == x.rank(), "ConvTranspose weight rank must match input rank");
  g.group = p->group();
  BATON_KCHECK(g.group >= 1 && win.c % g.group == 0 && w.dim(0) == win.c,
               "ConvTranspose weight dim 0 must be C, divisible by group");
  g.m = w.dim(1) * g.group;
  if (x.rank() == 4) {
    BATON_KCHECK(w.dim(2) == win.kh && w.dim(3) == win.kw,
                 "ConvTranspose kernel shape != weight shape");
  } else {
    BATON_KCHECK(w.dim(2) == win.kw, "ConvTranspose kernel shape != weight shape");
  }
  BATON_KCHECK(y.dim(0) == win.n && y.dim(1) == g.m, "ConvTranspose output N or channels mismatch");
  const int64_t full_h = (win.h - 1) * win.sh + win.dh * (win.kh - 1) + 1;
  const int64_t full_w = (win.w - 1) * win.sw + win.dw * (win.kw - 1) + 1;
  BATON_KCHECK(win.oh >= 1 && win.ow >= 1 && win.oh >= full_h - win.pt - win.pb &&
                   win.ow >= full_w - win.pl - win.pr,
               "ConvTranspose output spatial shape mismatch");
  const TensorArg& b = Input(call, 2);
  if (b.present()) {
    BATON_KCHECK(b.rank() == 1 && b.dim(0) == g.m, "ConvTranspose bias must be [M]");
  }
  const int64_t col_rows = (g.m / g.group) * win.kh * win.kw;
  const int64_t row_bytes = col_rows * win.w * static_cast<int64_t>(sizeof(float));
  g.rows = row_bytes > 0 ? kColBudgetBytes / row_bytes : win.h;
  g.rows = g.rows < 1 ? 1 : (g.rows > win.h ? win.h : g.rows);
  *out = g;
  *out_clamp = Clamp::From(p->clamp());
  return Status::Ok();
}

// GEMM buffers, rounded to 64 bytes, then the col block.
size_t GemmPart(const TransposedGeom& g) {
  const Window2d& w = g.win;
  const size_t gemm = GemmWorkspaceBytes((g.m / g.group) * w.kh * w.kw, g.rows * w.w, w.c / g.group);
  return (gemm + 63) & ~static_cast<size_t>(63);
}

size_t WorkspaceFor(const TransposedGeom& g) {
  const Window2d& w = g.win;
  return GemmPart(g) +
         static_cast<size_t>((g.m / g.group) * w.kh * w.kw * g.rows * w.w) * sizeof(float);
}

Status ConvTransposePrepare(const KernelCall& call) {
  TransposedGeom g;
  Clamp clamp;
  BATON_RETURN_IF_ERROR(ParseConvTranspose(call, &g, &clamp));
  return CheckWorkspace(call, WorkspaceFor(g));
}

size_t ConvTransposeWorkspaceBytes(const KernelCall& call) {
  TransposedGeom g;
  Clamp clamp;
  if (!ParseConvTranspose(call, &g, &clamp).ok()) return 0;
  return WorkspaceFor(g);
}

// Adds col rows (m, ky, kx) for input rows [r0, r0 + rows) into y_g.
void Col2Im(const Window2d& g, int64_t mg, const float* col, int64_t r0, int64_t rows,
            float* yg) {
  const int64_t ohw = g.oh * g.ow;
  const int64_t ncol = rows * g.w;
  for (int64_t mo = 0; mo < mg; ++mo) {
    float* plane = yg + mo * ohw;
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      for (int64_t kx = 0; kx < g.kw; ++kx) {
        const float* src = col + ((mo * g.kh + ky) * g.kw + kx) * ncol;
        int64_t x_lo, x_hi;  // input columns whose tap lands inside the output row
        ValidRange(g.w, g.ow, g.sw, kx * g.dw - g.pl, &x_lo, &x_hi);
        for (int64_t iy = r0; iy < r0 + rows; ++iy) {
          const int64_t oy = iy * g.sh - g.pt + ky * g.dh;
          if (oy < 0 || oy >= g.oh) continue;
          // Output column of input column ix: ix * sw + x_off.
          const int64_t x_off = kx * g.dw - g.pl;
          float* out = plane + oy * g.ow + x_lo * g.sw + x_off;
          const float* in = src + (iy - r0) * g.w + x_lo;
          const int64_t len = x_hi - x_lo;
          if (g.sw == 1) {
            for (int64_t i = 0; i < len; ++i) out[i] += in[i];
          } else {
            for (int64_t i = 0; i < len; ++i) out[i * g.sw] += in[i];
          }
        }
      }
    }
  }
}

Status ConvTransposeEval(const KernelCall& call) {
  TransposedGeom g;
  Clamp clamp;
  BATON_RETURN_IF_ERROR(ParseConvTranspose(call, &g, &clamp));
  const Window2d& win = g.win;
  const float* x = call.inputs[0].f32();
  const float* w = call.inputs[1].f32();
  const TensorArg& b = Input(call, 2);
  const float* bias = b.present() ? b.f32() : nullptr;
  float* y = call.outputs[0].f32();
  float* gemm_ws = WorkspaceF32(call);
  float* col = gemm_ws + GemmPart(g) / sizeof(float);

  const int64_t cg = win.c / g.group;
  const int64_t mg = g.m / g.group;
  const int64_t col_rows = mg * win.kh * win.kw;
  const int64_t hw = win.h * win.w;
  const int64_t ohw = win.oh * win.ow;
  const GemmEpilogue epi;
  for (int64_t n = 0; n < win.n; ++n) {
    for (int64_t mo = 0; mo < g.m; ++mo) {
      float* plane = y + (n * g.m + mo) * ohw;
      const float v = bias ? bias[mo] : 0.0f;
      for (int64_t i = 0; i < ohw; ++i) plane[i] = v;
    }
    for (int64_t gi = 0; gi < g.group; ++gi) {
      const float* xg = x + (n * win.c + gi * cg) * hw;
      // W_g^T: element (i, k) of [col_rows x cg] is w[(gi*cg + k) * col_rows + i].
      const StridedMatrix a{w + gi * cg * col_rows, 1, col_rows};
      float* yg = y + (n * g.m + gi * mg) * ohw;
      for (int64_t r0 = 0; r0 < win.h; r0 += g.rows) {
        const int64_t rows = win.h - r0 < g.rows ? win.h - r0 : g.rows;
        const StridedMatrix bm{xg + r0 * win.w, hw, 1};
        GemmPacked(col_rows, rows * win.w, cg, 1.0f, a, PackBStrided, &bm, col, rows * win.w,
                   epi, gemm_ws);
        Col2Im(win, mg, col, r0, rows, yg);
      }
    }
  }
  ApplyClamp(clamp, y, win.n * g.m * ohw);
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kConvTransposeEntries[] = {
    {Op::ConvTranspose, kAllDeviceKinds, ConvTransposePrepare, ConvTransposeEval,
     ConvTransposeWorkspaceBytes},
};
BATON_KERNEL_FAMILY(ConvTranspose, kConvTransposeEntries);

}  // namespace kernels
}  // namespace baton
