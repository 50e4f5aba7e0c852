// Pad, any dtype: PadParams.pads (begin..., end..., non-negative, one pair
// per dim), mode 0 constant (value, converted to the dtype), 1 reflect
// (numpy/ONNX "reflect", mirrored without repeating the edge), 2 edge.
// Extra inputs (ONNX pads / constant_value / axes tensors) are ignored.
// Output rows are produced one at a time: left pad, the source row, right pad.

#include <string.h>

#include "kernel_family.h"
#include "kernel_util.h"
#include "layout.h"

namespace baton {
namespace kernels {
namespace {

enum PadMode : uint8_t { kConstant = 0, kReflect = 1, kEdge = 2 };

// Source index for padded index i (may be outside [0, n)); -1 for constant.
int64_t SourceIndex(int64_t i, int64_t n, uint8_t mode) {
  if (i >= 0 && i < n) return i;
  if (mode == kEdge) return i < 0 ? 0 : n - 1;
  if (mode == kReflect) {
    if (n == 1) return 0;
    const int64_t period = 2 * (n - 1);
    int64_t m = i % period;
    if (m < 0) m += period;
    return m < n ? m : period - m;
  }
  return -1;
}

template <typename T>
void StoreAs(float value, uint8_t* out) {
  const T v = static_cast<T>(value);
  memcpy(out, &v, sizeof(T));
}

// The pad value as `esize` bytes of the tensor's dtype.
void FillBytes(DType dtype, float value, uint8_t out[8]) {
  memset(out, 0, 8);
  switch (dtype) {
    case DType::Float32:
      return StoreAs<float>(value, out);
    case DType::Int32:
      return StoreAs<int32_t>(value, out);
    case DType::Int64:
      return StoreAs<int64_t>(value, out);
    case DType::UInt8:
      return StoreAs<uint8_t>(value, out);
    case DType::Int8:
      return StoreAs<int8_t>(value, out);
    case DType::Bool:
      return StoreAs<uint8_t>(value != 0.0f ? 1.0f : 0.0f, out);
  }
}

void Fill(uint8_t* dst, int64_t n, const uint8_t* value, size_t esize) {
  if (esize == 4) {
    uint32_t v;
    memcpy(&v, value, 4);
    uint32_t* d = reinterpret_cast<uint32_t*>(dst);
    for (int64_t i = 0; i < n; ++i) d[i] = v;
    return;
  }
  for (int64_t i = 0; i < n; ++i) memcpy(dst + static_cast<size_t>(i) * esize, value, esize);
}

Status PadPrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckLayoutPrepare(call, 4, BATON_MSG("Pad dtype mismatch"),
                                           BATON_MSG("Pad output rank != input rank")));
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  const schema::PadParams* p = call.node->params_as_PadParams();
  BATON_KCHECK(p != nullptr && p->pads() != nullptr, "Pad needs PadParams");
  const uint32_t r = x.rank();
  BATON_KCHECK(p->pads()->size() == 2 * r, "Pad pads must have 2 * rank entries");
  BATON_KCHECK(p->mode() <= kEdge, "Pad mode must be 0 (constant), 1 (reflect) or 2 (edge)");
  for (uint32_t d = 0; d < r; ++d) {
    const int64_t b = LongAt(p->pads(), d);
    const int64_t e = LongAt(p->pads(), r + d);
    BATON_KCHECK(b >= 0 && e >= 0, "Pad pads must be non-negative");
    BATON_KCHECK(y.dim(d) == x.dim(d) + b + e, "Pad output shape mismatch");
    if (p->mode() != kConstant && (b > 0 || e > 0)) {
      BATON_KCHECK(x.dim(d) > 0, "reflect/edge padding of an empty dimension");
    }
  }
  return Status::Ok();
}

Status PadEval(const KernelCall& call) {
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  const schema::PadParams* p = call.node->params_as_PadParams();
  const uint32_t r = x.rank();
  const size_t esize = DTypeSize(x.dtype());
  const uint8_t mode = p->mode();
  uint8_t value[8];
  FillBytes(x.dtype(), p->value(), value);
  if (y.elements() == 0) return Status::Ok();
  if (r == 0) {
    memcpy(y.data, x.data, esize);
    return Status::Ok();
  }
  int64_t stride[kMaxRank];  // input element strides
  ContiguousStrides(x, stride);
  const uint32_t inner = r - 1;
  const int64_t in_w = x.dim(inner);
  const int64_t out_w = y.dim(inner);
  const int64_t left = LongAt(p->pads(), inner);
  const int64_t right = LongAt(p->pads(), r + inner);
  const int64_t rows = y.elements() / out_w;
  const uint8_t* src = static_cast<const uint8_t*>(x.data);
  uint8_t* dst = static_cast<uint8_t*>(y.data);
  int64_t index[kMaxRank] = {};
  for (int64_t t = 0; t < rows; ++t, dst += static_cast<size_t>(out_w) * esize) {
    // Source row for this output row, or none (constant padding).
    int64_t off = 0;
    bool inside = in_w > 0;
    for (uint32_t d = 0; d < inner; ++d) {
      const int64_t s = SourceIndex(index[d] - LongAt(p->pads(), d), x.dim(d), mode);
      if (s < 0) {
        inside = false;
        break;
      }
      off += s * stride[d];
    }
    if (!inside) {
      Fill(dst, out_w, value, esize);
    } else {
      const uint8_t* row = src + static_cast<size_t>(off) * esize;
      for (int64_t i = 0; i < left; ++i) {
        const int64_t s = SourceIndex(i - left, in_w, mode);
        if (s < 0) {
          Fill(dst + static_cast<size_t>(i) * esize, 1, value, esize);
        } else {
          memcpy(dst + static_cast<size_t>(i) * esize, row + static_cast<size_t>(s) * esize, esize);
        }
      }
      memcpy(dst + static_cast<size_t>(left) * esize, row, static_cast<size_t>(in_w) * esize);
      for (int64_t i = 0; i < right; ++i) {
        const int64_t s = SourceIndex(in_w + i, in_w, mode);
        uint8_t* d = dst + static_cast<size_t>(left + in_w + i) * esize;
        if (s < 0) {
          Fill(d, 1, value, esize);
        } else {
          memcpy(d, row + static_cast<size_t>(s) * esize, esize);
        }
      }
    }
    for (int32_t d = static_cast<int32_t>(inner) - 1; d >= 0; --d) {
      if (++index[d] < y.dim(static_cast<uint32_t>(d))) break;
      index[d] = 0;
    }
  }
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kPadEntries[] = {
    {Op::Pad, kAllDeviceKinds, PadPrepare, PadEval, nullptr},
};
BATON_KERNEL_FAMILY(Pad, kPadEntries);

}  // namespace kernels
}  // namespace baton
