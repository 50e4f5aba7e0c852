// Conv: NCHW (or NCL) float32, grouped, with optional bias, fused clamp,
// fused activation, an optional fourth input `sum` (a fused residual Add):
//   y = act(clamp(conv(x) + bias + sum))
// and an optional fifth, U: the weights of a dense 3x3 stride-1 layer
// transformed for Winograd by the planner (`baton plan --winograd-weights`,
// docs/formats.md), [16, M, C].
// The sum, clamp and activation run in the GEMM epilogue per tile, in
// Winograd's output transform per tile row, and in the depthwise paths per
// finished row, channel or channel block (ApplyEpilogue), while the output
// is still in cache.
//
// Per batch item and group, the convolution is the GEMM
//   Y_g[Mg x OH*OW] = W_g[Mg x Cg*kH*kW] * im2col(X_g)[Cg*kH*kW x OH*OW]
// with the bias as a row bias and the clamp in the GEMM epilogue.
//  - 1x1, stride 1, no padding: im2col(X_g) is X_g itself; GemmDirect reads
//    it in place and the node needs no workspace.
//  - otherwise GemmPacked packs B straight from the implicit im2col matrix,
//    one kc x nc block at a time, so the workspace is the GEMM's packing
//    buffers (about 1 MB at most) whatever the layer size. The packer
//    (Im2colPacker, gemm/window_isa.inc) is compiled per instruction set:
//    with stride 2 (the stems) each packed row segment is a vectorized
//    stride-2 copy, and the padding is cut off each segment in one step.
//  - dense 3x3 stride-1 layers with enough channels and output pixels take
//    Winograd F(2x2, 3x3) (conv_winograd.cc): 2.25x fewer multiply-adds.
//  - depthwise convolutions take depthwise_conv.cc.

#include "conv.h"

#include "conv_winograd.h"
#include "gemm_core.h"
#include "kernel_family.h"
#include "parallel.h"

namespace baton {
namespace kernels {
namespace {

Status ParseConv(const KernelCall& call, ConvGeom* out, Clamp* out_clamp) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 2, 5, 1));
  BATON_RETURN_IF_ERROR(CheckAllF32(call));
  const schema::ConvParams* p = call.node->params_as_ConvParams();
  BATON_KCHECK(p != nullptr, "Conv needs ConvParams");
  ConvGeom g;
  BATON_RETURN_IF_ERROR(ParseConvGeometry(call.inputs[0], call.inputs[1], call.outputs[0], *p, &g));
  const TensorArg& b = Input(call, 2);
  if (b.present()) {
    BATON_KCHECK(b.rank() == 1 && b.dim(0) == g.m, "Conv bias must be [M]");
  }
  const TensorArg& sum = Input(call, 3);
  if (sum.present()) {
    const TensorArg& y = call.outputs[0];
    bool same = sum.rank() == y.rank();
    for (uint32_t d = 0; same && d < y.rank(); ++d) same = sum.dim(d) == y.dim(d);
    BATON_KCHECK(same, "Conv sum (input 3) must have the output's shape");
  }
  const TensorArg& u = Input(call, 4);
  if (u.present()) {
    const Window2d& w = g.win;
    BATON_KCHECK(g.group == 1 && w.kh == 3 && w.kw == 3 && w.sh == 1 && w.sw == 1 &&
                     w.dh == 1 && w.dw == 1,
                 "Conv Winograd weights (input 4) need a dense 3x3 stride-1 layer");
    BATON_KCHECK(u.rank() == 3 && u.dim(0) == 16 && u.dim(1) == g.m && u.dim(2) == w.c,
                 "Conv Winograd weights (input 4) must be [16, M, C]");
  }
  const uint8_t act = static_cast<uint8_t>(p->activation());
  BATON_KCHECK(act <= static_cast<uint8_t>(schema::FusedActivation::MAX),
               "Conv activation is not a known FusedActivation");
  *out = g;
  *out_clamp = Clamp::From(p->clamp());
  return Status::Ok();
}

// The im2col + GEMM path's workspace (0 for pointwise layers; the
// phase-plane workspace for depthwise ones).
size_t GemmPathWorkspace(const ConvGeom& g) {
  if (IsDepthwise(g)) return DepthwiseWorkspaceBytes(g);
  if (IsPointwise(g)) return 0;
  const Window2d& w = g.win;
  return GemmWorkspaceBytes(g.m / g.group, w.oh * w.ow, (w.c / g.group) * w.kh * w.kw);
}

// What the planner reserves: Winograd's workspace where some instruction
// set takes it, and room for im2col + GEMM too where another one does not
// (13x13 planes: AVX-512 runs them on im2col + GEMM, unless the node
// carries U: then every one takes Winograd, without room for U).
size_t WorkspaceFor(const ConvGeom& g, bool u_given) {
  if (u_given) {
    const size_t winograd = WinogradWorkspaceBytes(g, true);
    if (winograd > 0) return winograd;
  }
  const size_t winograd = WinogradWorkspaceBytes(g);
  if (winograd == 0) return GemmPathWorkspace(g);
  const size_t gemm = WinogradOnEveryIsa(g) ? 0 : GemmPathWorkspace(g);
  return winograd > gemm ? winograd : gemm;
}

// Winograd runs where the active instruction set takes it and the plan
// reserved its workspace; a plan sized for im2col + GEMM (an older planner,
// or other thresholds) still runs, on that path. Prepare accepts either
// size.
bool RunsWinograd(const ConvGeom& g, const KernelCall& call) {
  const bool u_given = Input(call, 4).present();
  return UseWinograd(g, u_given) && WorkspaceSize(call) >= WinogradWorkspaceBytes(g, u_given);
}

// Convolutions of at most 4 input channels (image stems), stride 1 or 2,
// undilated, that ConvDirect can take (it declines when the ISA or the
// workspace cannot; a band's phase rows are smaller than the GEMM path's
// packing buffers for the stems, so plans keep their workspace).
[[maybe_unused]] bool RunsDirect(const ConvGeom& g) {
  const Window2d& win = g.win;
  return g.group == 1 && win.c <= 4 && win.dh == 1 && win.dw == 1 && win.sh == win.sw &&
         win.sw <= 2 && win.c * win.kh * win.kw <= kConvDirectMaxTaps && !IsPointwise(g);
}

Status ConvPrepare(const KernelCall& call) {
  ConvGeom g;
  Clamp clamp;
  BATON_RETURN_IF_ERROR(ParseConv(call, &g, &clamp));
  if (RunsWinograd(g, call)) return Status::Ok();
  // A depthwise layer runs without a workspace too (a plan from before the
  // phase-plane path), on the row path.
  if (IsDepthwise(g)) return Status::Ok();
  return CheckWorkspace(call, GemmPathWorkspace(g));
}

size_t ConvWorkspaceBytes(const KernelCall& call) {
  ConvGeom g;
  Clamp clamp;
  if (!ParseConv(call, &g, &clamp).ok()) return 0;
  return WorkspaceFor(g, Input(call, 4).present());
}

Status ConvEval(const KernelCall& call) {
  ConvGeom g;
  Clamp clamp;
  BATON_RETURN_IF_ERROR(ParseConv(call, &g, &clamp));
  const float* x = call.inputs[0].f32();
  const float* w = call.inputs[1].f32();
  const TensorArg& b = Input(call, 2);
  const float* bias = b.present() ? b.f32() : nullptr;
  const TensorArg& sum_arg = Input(call, 3);
  const float* sum = sum_arg.present() ? sum_arg.f32() : nullptr;
  float* y = call.outputs[0].f32();
  const Window2d& win = g.win;
  const schema::ConvParams* p = call.node->params_as_ConvParams();

  // The whole epilogue; `fused` when it goes past bias and clamp (the paths
  // outside the GEMM then leave the clamp to ApplyEpilogue).
  GemmEpilogue epi;
  epi.clamp = clamp.enabled;
  epi.lo = clamp.lo;
  epi.hi = clamp.hi;
  epi.sum = sum;
  epi.act = static_cast<int>(p->activation());
  epi.act_alpha = p->activation_alpha();
  epi.act_beta = p->activation_beta();
  const bool fused = HasFusedEpilogue(epi);
  const Clamp inner = fused ? Clamp() : clamp;

  if (IsDepthwise(g)) {
    DepthwiseConv(g, x, w, bias, inner, y, WorkspaceF32(call),
                  HasWorkspace(call) ? WorkspaceSize(call) : 0, fused ? &epi : nullptr);
    return Status::Ok();
  }
  if (RunsWinograd(g, call)) {
    const TensorArg& u = Input(call, 4);
    WinogradConv(g, x, w, bias, inner, y, WorkspaceF32(call), WorkspaceSize(call),
                 fused ? &epi : nullptr, u.present() ? u.f32() : nullptr);
    return Status::Ok();
  }

#if BATON_CONV_DIRECT_BUILT
  if (RunsDirect(g) && HasWorkspace(call)) {
    // The stems: no im2col copy (ConvDirect, gemm_core.h), in the GEMM
    // path's workspace; false (nothing written) sends them on below.
    const size_t have = WorkspaceSize(call);
    const int parts = ParallelWorkspaceSlices(have, GemmPathWorkspace(g));
    const size_t slice = have / static_cast<size_t>(parts) / 64 * 64;
    epi.row_bias = bias;
    epi.ldsum = win.oh * win.ow;
    bool ran = true;
    for (int64_t n = 0; n < win.n && ran; ++n) {
      epi.sum = sum ? sum + n * g.m * win.oh * win.ow : nullptr;
      DirectConv d{};
      d.x = x + n * win.c * win.h * win.w;
      d.w = w;
      d.y = y + n * g.m * win.oh * win.ow;
      d.epi = &epi;
      d.c = win.c;
      d.h = win.h;
      d.w_in = win.w;
      d.m = g.m;
      d.oh = win.oh;
      d.ow = win.ow;
      d.kh = win.kh;
      d.kw = win.kw;
      d.s = win.sh;
      d.pt = win.pt;
      d.pl = win.pl;
      ran = ConvDirect(d, WorkspaceF32(call), slice, parts);
    }
    if (ran) return Status::Ok();
  }
#endif

  const int64_t cg = win.c / g.group;
  const int64_t mg = g.m / g.group;
  const int64_t kg = cg * win.kh * win.kw;
  const int64_t hw = win.h * win.w;
  const int64_t ohw = win.oh * win.ow;
  const bool pointwise = IsPointwise(g);
  float* ws = pointwise ? nullptr : WorkspaceF32(call);
  const int slices = ParallelWorkspaceSlices(WorkspaceSize(call), GemmPathWorkspace(g));

  epi.ldsum = ohw;
  for (int64_t n = 0; n < win.n; ++n) {
    for (int64_t gi = 0; gi < g.group; ++gi) {
      const float* xg = x + (n * win.c + gi * cg) * hw;
      const float* wg = w + gi * mg * kg;
      float* yg = y + (n * g.m + gi * mg) * ohw;
      epi.row_bias = bias ? bias + gi * mg : nullptr;
      epi.sum = sum ? sum + (n * g.m + gi * mg) * ohw : nullptr;
      if (pointwise) {
        GemmDirect(mg, ohw, kg, wg, kg, xg, hw, yg, ohw, epi);
      } else {
        const Im2colPlane src{xg,     win.h,  win.w,  win.ow, win.kh, win.kw,
                              win.sh, win.sw, win.dh, win.dw, win.pt, win.pl};
        const StridedMatrix a{wg, kg, 1};
        GemmPackedSliced(mg, ohw, kg, 1.0f, a, Im2colPacker(), &src, yg, ohw, epi, ws, slices);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status ParseConvGeometry(const TensorArg& x, const TensorArg& w, const TensorArg& y,
                         const schema::ConvParams& p, ConvGeom* out) {
  ConvGeom g;
  BATON_RETURN_IF_ERROR(
      ParseWindow(x, y, p.kernel(), p.strides(), p.pads(), p.dilations(), &g.win));
  const Window2d& win = g.win;
  BATON_KCHECK(w.rank() == x.rank(), "Conv weight rank must match input rank");
  g.m = w.dim(0);
  g.group = p.group();
  BATON_KCHECK(g.group >= 1 && win.c % g.group == 0 && g.m % g.group == 0,
               "Conv group must divide input and output channels");
  BATON_KCHECK(w.dim(1) == win.c / g.group, "Conv weight dim 1 must be C / group");
  if (x.rank() == 4) {
    BATON_KCHECK(w.dim(2) == win.kh && w.dim(3) == win.kw, "Conv kernel shape != weight shape");
  } else {
    BATON_KCHECK(w.dim(2) == win.kw, "Conv kernel shape != weight shape");
  }
  BATON_KCHECK(y.dim(0) == win.n && y.dim(1) == g.m, "Conv output N or channels mismatch");
  BATON_KCHECK(win.oh == WindowOutputSize(win.h, win.kh, win.sh, win.dh, win.pt, win.pb, false) &&
                   win.ow == WindowOutputSize(win.w, win.kw, win.sw, win.dw, win.pl, win.pr, false),
               "Conv output spatial shape mismatch");
  *out = g;
  return Status::Ok();
}

constexpr KernelEntry kConvEntries[] = {
    {Op::Conv, kAllDeviceKinds, ConvPrepare, ConvEval, ConvWorkspaceBytes},
};
BATON_KERNEL_FAMILY(Conv, kConvEntries);

}  // namespace kernels
}  // namespace baton
