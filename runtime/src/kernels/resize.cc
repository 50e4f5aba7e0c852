// Resize (and Upsample), float32 (nearest also uint8 and int8): nearest or
// bilinear over the last two dims
// (a rank-1 input has a unit H). The planner resolved coordinates and
// rounding into per-axis tables carried in PoolParams (docs/formats.md):
// kernel = y0 ++ y1, pads = x0 ++ x1, strides / dilations = the weights wy /
// wx bit-cast to int32, ceil_mode = linear. The kernel only looks up rows
// and columns and blends.

#include "kernel_family.h"
#include "kernel_util.h"

namespace baton {
namespace kernels {
namespace {

struct ResizeGeom {
  int64_t planes = 1, h = 1, w = 1, oh = 1, ow = 1;
};

ResizeGeom Geom(const TensorArg& x, const TensorArg& y) {
  ResizeGeom g;
  const uint32_t r = x.rank();
  g.w = x.dim(r - 1);
  g.ow = y.dim(r - 1);
  if (r >= 2) {
    g.h = x.dim(r - 2);
    g.oh = y.dim(r - 2);
    g.planes = DimProduct(x, 0, r - 2);
  }
  return g;
}

// `v` has `n * parts` entries, each in [0, limit).
bool IndexTable(const flatbuffers::Vector<int32_t>* v, int64_t n, int64_t limit, int64_t parts) {
  if (v == nullptr || static_cast<int64_t>(v->size()) != n * parts) return false;
  for (uint32_t i = 0; i < v->size(); ++i) {
    if (v->Get(i) < 0 || v->Get(i) >= limit) return false;
  }
  return true;
}

Status ResizePrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 1, 1, 1));
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  const schema::PoolParams* p = call.node->params_as_PoolParams();
  const bool bytes = IsQ8(x.dtype());
  BATON_KCHECK(y.dtype() == x.dtype() && (x.dtype() == DType::Float32 ||
                                          (bytes && p != nullptr && !p->ceil_mode())),
               "Resize dtype must be float32 (nearest: also uint8, int8), x and y alike");
  BATON_KCHECK(x.rank() >= 1 && y.rank() == x.rank(), "Resize output rank != input rank");
  for (uint32_t d = 0; d + 2 < x.rank(); ++d) {
    BATON_KCHECK(x.dim(d) == y.dim(d), "Resize may change only the last two dims");
  }
  BATON_KCHECK(p != nullptr, "Resize needs PoolParams (its per-axis tables)");
  const ResizeGeom g = Geom(x, y);
  const int64_t parts = p->ceil_mode() ? 2 : 1;  // linear: y0 ++ y1, x0 ++ x1
  BATON_KCHECK(IndexTable(p->kernel(), g.oh, g.h, parts) && IndexTable(p->pads(), g.ow, g.w, parts),
               "Resize index tables do not match the shapes");
  if (p->ceil_mode()) {
    BATON_KCHECK(p->strides() != nullptr && p->strides()->size() == static_cast<uint32_t>(g.oh) &&
                     p->dilations() != nullptr &&
                     p->dilations()->size() == static_cast<uint32_t>(g.ow),
                 "Resize linear tables do not match the shapes");
  }
  return Status::Ok();
}

// Nearest: each output element is the input element at (y0[oy], x0[ox]).
template <typename T>
void ResizeNearest(const ResizeGeom& g, const int32_t* y0, const int32_t* x0, const void* xv,
                   void* yv) {
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  for (int64_t c = 0; c < g.planes; ++c) {
    const T* plane = x + c * g.h * g.w;
    T* out = y + c * g.oh * g.ow;
    for (int64_t oy = 0; oy < g.oh; ++oy, out += g.ow) {
      if (oy > 0 && y0[oy] == y0[oy - 1]) {  // same source row: copy the last output row
        memcpy(out, out - g.ow, static_cast<size_t>(g.ow) * sizeof(T));
        continue;
      }
      const T* row = plane + static_cast<int64_t>(y0[oy]) * g.w;
      for (int64_t ox = 0; ox < g.ow; ++ox) out[ox] = row[x0[ox]];
    }
  }
}

Status ResizeEval(const KernelCall& call) {
  const schema::PoolParams* p = call.node->params_as_PoolParams();
  const ResizeGeom g = Geom(call.inputs[0], call.outputs[0]);
  const int32_t* y0 = p->kernel()->data();
  const int32_t* x0 = p->pads()->data();
  if (!p->ceil_mode()) {
    if (call.inputs[0].dtype() == DType::Float32) {
      ResizeNearest<float>(g, y0, x0, call.inputs[0].data, call.outputs[0].data);
    } else {
      ResizeNearest<uint8_t>(g, y0, x0, call.inputs[0].data, call.outputs[0].data);
    }
    return Status::Ok();
  }
  const float* x = call.inputs[0].f32();
  float* y = call.outputs[0].f32();
  const int32_t* y1 = y0 + g.oh;
  const int32_t* x1 = x0 + g.ow;
  // The weights are float bits in int32 vectors: memcpy, never a cast pointer.
  const int32_t* wy = p->strides()->data();
  const int32_t* wx = p->dilations()->data();
  for (int64_t c = 0; c < g.planes; ++c) {
    const float* plane = x + c * g.h * g.w;
    float* out = y + c * g.oh * g.ow;
    for (int64_t oy = 0; oy < g.oh; ++oy, out += g.ow) {
      const float* r0 = plane + static_cast<int64_t>(y0[oy]) * g.w;
      const float* r1 = plane + static_cast<int64_t>(y1[oy]) * g.w;
      float b;
      memcpy(&b, wy + oy, sizeof(b));
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        float a;
        memcpy(&a, wx + ox, sizeof(a));
        const float top = r0[x0[ox]] + (r0[x1[ox]] - r0[x0[ox]]) * a;
        const float bottom = r1[x0[ox]] + (r1[x1[ox]] - r1[x0[ox]]) * a;
        out[ox] = top + (bottom - top) * b;
      }
    }
  }
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kResizeEntries[] = {
    {Op::Resize, kAllDeviceKinds, ResizePrepare, ResizeEval, nullptr},
};
BATON_KERNEL_FAMILY(Resize, kResizeEntries);

}  // namespace kernels
}  // namespace baton
