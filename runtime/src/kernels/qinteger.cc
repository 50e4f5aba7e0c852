// MatMulInteger (issue 15): ONNX's integer matrix product of dynamically
// quantized models (DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul).
//
//   y[..., m, n] = sum_k (a[..., m, k] - az[m]) * (b[k, n] - bz[n])   (int32)
//
// a and b uint8 or int8 (each its own), a_zero_point one element or one per
// row m, b_zero_point one element or one per column n, b 2-D. The sum is
// exact on every ISA: each term is at most 255 * 255 in magnitude and K is
// at most kMaxReduction (qlinear_gemm.h), so no partial sum leaves int32.
// A plain row-times-matrix loop (the QLinear GEMM blocks requantize and
// take one zero point for the column side; an int32 mode is future work).
// No workspace.
//
// ConvInteger: ONNX's integer convolution (1-D or 2-D, groups, strides,
// pads, dilations; ConvParams), x and w uint8 or int8, x_zero_point one
// element, w_zero_point one or one per output channel:
//   y[n, m, oy, ox] = sum (x[n, c, iy, ix] - xz) * (w[m, c', ky, kx] - wz[m])
// over the taps inside the input (a padded tap is the zero point: adds 0).
// A direct loop, exact in int32 (C / group * kH * kW <= kMaxReduction).

#include <stdint.h>

#include "conv.h"
#include "kernel_family.h"
#include "kernel_util.h"
#include "qlinear_gemm.h"

namespace baton {
namespace kernels {
namespace {

// A zero point of an 8-bit tensor: absent (0), per tensor or per index.
Status CheckZeroPoint(const TensorArg& zp, DType dtype, int64_t count) {
  if (!zp.present()) return Status::Ok();
  BATON_KCHECK(zp.dtype() == dtype, "zero point must have its tensor's dtype");
  BATON_KCHECK(zp.elements() == 1 || (zp.rank() == 1 && zp.elements() == count),
               "zero point must have 1 element or one per row / column / channel");
  return Status::Ok();
}

Status MatMulIntegerPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 2, 4, 1));
  const TensorArg& a = call.inputs[0];
  const TensorArg& b = call.inputs[1];
  const TensorArg& y = call.outputs[0];
  BATON_KCHECK(IsQ8(a.dtype()) && IsQ8(b.dtype()), "MatMulInteger a and b must be uint8 or int8");
  BATON_KCHECK(y.dtype() == DType::Int32, "MatMulInteger output must be int32");
  BATON_KCHECK(a.rank() >= 2 && b.rank() == 2, "MatMulInteger needs a of rank >= 2 and a 2-D b");
  const uint32_t r = a.rank();
  const int64_t m = a.dim(r - 2), k = a.dim(r - 1), n = b.dim(1);
  BATON_KCHECK(b.dim(0) == k, "MatMulInteger inner dimensions differ");
  BATON_KCHECK(k <= kMaxReduction, "MatMulInteger reduction too long for an int32 accumulator");
  BATON_KCHECK(y.rank() == r && y.dim(r - 2) == m && y.dim(r - 1) == n &&
                   DimProduct(y, 0, r - 2) == DimProduct(a, 0, r - 2),
               "MatMulInteger output shape mismatch");
  BATON_RETURN_IF_ERROR(CheckZeroPoint(Input(call, 2), a.dtype(), m));
  return CheckZeroPoint(Input(call, 3), b.dtype(), n);
}

Status MatMulIntegerEval(const KernelCall& call) {
  const TensorArg& a = call.inputs[0];
  const TensorArg& b = call.inputs[1];
  const TensorArg& az = Input(call, 2);
  const TensorArg& bz = Input(call, 3);
  const uint32_t r = a.rank();
  const int64_t m = a.dim(r - 2), k = a.dim(r - 1), n = b.dim(1);
  const int64_t rows = DimProduct(a, 0, r - 1);
  // v - z = (byte ^ flip) - (z byte ^ flip) for either 8-bit dtype; an
  // absent zero point is 0, whose byte ^ flip is the flip itself.
  const uint8_t af = FlipOf(a.dtype()), bf = FlipOf(b.dtype());
  const int64_t az_step = az.present() && az.elements() > 1 ? 1 : 0;
  const int64_t bz_step = bz.present() && bz.elements() > 1 ? 1 : 0;
  int32_t* y = static_cast<int32_t*>(call.outputs[0].data);
  for (int64_t row = 0; row < rows; ++row) {
    const int32_t za = az.present() ? UnsignedAt(az.data, (row % m) * az_step, af) : af;
    int32_t* out = y + row * n;
    for (int64_t j = 0; j < n; ++j) out[j] = 0;
    for (int64_t i = 0; i < k; ++i) {
      const int32_t av = UnsignedAt(a.data, row * k + i, af) - za;
      if (av == 0) continue;
      const int64_t base = i * n;
      for (int64_t j = 0; j < n; ++j) {
        const int32_t zb = bz.present() ? UnsignedAt(bz.data, j * bz_step, bf) : bf;
        out[j] += av * (UnsignedAt(b.data, base + j, bf) - zb);
      }
    }
  }
  return Status::Ok();
}

Status ConvIntegerPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 2, 4, 1));
  const TensorArg& x = call.inputs[0];
  const TensorArg& w = call.inputs[1];
  BATON_KCHECK(IsQ8(x.dtype()) && IsQ8(w.dtype()), "ConvInteger x and w must be uint8 or int8");
  BATON_KCHECK(call.outputs[0].dtype() == DType::Int32, "ConvInteger output must be int32");
  const schema::ConvParams* p = call.node->params_as_ConvParams();
  BATON_KCHECK(p != nullptr && p->clamp() == nullptr, "ConvInteger needs ConvParams, no clamp");
  ConvGeom g;
  BATON_RETURN_IF_ERROR(ParseConvGeometry(x, w, call.outputs[0], *p, &g));
  BATON_KCHECK(g.win.c / g.group * g.win.kh * g.win.kw <= kMaxReduction,
               "ConvInteger reduction too long for an int32 accumulator");
  const TensorArg& xz = Input(call, 2);
  BATON_KCHECK(!xz.present() || (xz.dtype() == x.dtype() && xz.elements() == 1),
               "ConvInteger x_zero_point must be one element of x's dtype");
  return CheckZeroPoint(Input(call, 3), w.dtype(), g.m);
}

Status ConvIntegerEval(const KernelCall& call) {
  const TensorArg& x = call.inputs[0];
  const TensorArg& w = call.inputs[1];
  const TensorArg& xz = Input(call, 2);
  const TensorArg& wz = Input(call, 3);
  ConvGeom g;
  BATON_RETURN_IF_ERROR(
      ParseConvGeometry(x, w, call.outputs[0], *call.node->params_as_ConvParams(), &g));
  const Window2d& win = g.win;
  const uint8_t xf = FlipOf(x.dtype()), wf = FlipOf(w.dtype());
  const int32_t zx = xz.present() ? UnsignedAt(xz.data, 0, xf) : xf;
  const int64_t wz_step = wz.present() && wz.elements() > 1 ? 1 : 0;
  const int64_t cg = win.c / g.group, mg = g.m / g.group;
  const int64_t plane = win.h * win.w, taps = win.kh * win.kw;
  int32_t* y = static_cast<int32_t*>(call.outputs[0].data);
  for (int64_t n = 0; n < win.n; ++n) {
    for (int64_t m = 0; m < g.m; ++m) {
      const int32_t zw = wz.present() ? UnsignedAt(wz.data, m * wz_step, wf) : wf;
      const int64_t c0 = (m / mg) * cg;
      for (int64_t oy = 0; oy < win.oh; ++oy) {
        for (int64_t ox = 0; ox < win.ow; ++ox) {
          int32_t acc = 0;
          for (int64_t c = 0; c < cg; ++c) {
            const int64_t xbase = (n * win.c + c0 + c) * plane;
            const int64_t wbase = (m * cg + c) * taps;
            for (int64_t ky = 0; ky < win.kh; ++ky) {
              const int64_t iy = oy * win.sh - win.pt + ky * win.dh;
              if (iy < 0 || iy >= win.h) continue;
              for (int64_t kx = 0; kx < win.kw; ++kx) {
                const int64_t ix = ox * win.sw - win.pl + kx * win.dw;
                if (ix < 0 || ix >= win.w) continue;
                acc += (UnsignedAt(x.data, xbase + iy * win.w + ix, xf) - zx) *
                       (UnsignedAt(w.data, wbase + ky * win.kw + kx, wf) - zw);
              }
            }
          }
          *y++ = acc;
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kQIntegerEntries[] = {
    {Op::MatMulInteger, kAllDeviceKinds, MatMulIntegerPrepare, MatMulIntegerEval, nullptr},
    {Op::ConvInteger, kAllDeviceKinds, ConvIntegerPrepare, ConvIntegerEval, nullptr},
};
BATON_KERNEL_FAMILY(QInteger, kQIntegerEntries);

}  // namespace kernels
}  // namespace baton
