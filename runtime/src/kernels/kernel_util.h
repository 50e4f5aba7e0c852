#pragma once
// Helpers shared by the reference kernels: argument checks for prepare(),
// shape arithmetic, the fused clamp, and workspace validation. Internal to
// baton_kernels.

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <limits>

#include "baton/config.h"
#include "baton/kernels.h"
#include "baton/status.h"

// Returns InvalidArgument with a static message when `cond` is false.
#define BATON_KCHECK(cond, msg)                  \
  do {                                           \
    if (!(cond)) {                               \
      return BATON_ERROR(kInvalidArgument, msg); \
    }                                            \
  } while (0)

namespace baton {
namespace kernels {

inline bool IsF32(const TensorArg& t) { return t.present() && t.dtype() == DType::Float32; }

// uint8 or int8: a quantized 8-bit dtype.
inline bool IsQ8(DType t) { return t == DType::UInt8 || t == DType::Int8; }

// The i-th input, or an absent argument when the node has fewer inputs.
inline const TensorArg& Input(const KernelCall& call, uint32_t i) {
  static constexpr TensorArg kAbsent{};
  return i < call.num_inputs ? call.inputs[i] : kAbsent;
}

inline bool HasInput(const KernelCall& call, uint32_t i) { return Input(call, i).present(); }

// Checks input/output counts and that the required tensors are present.
inline Status CheckArity(const KernelCall& call, uint32_t min_inputs, uint32_t max_inputs,
                         uint32_t outputs) {
  BATON_KCHECK(call.num_inputs >= min_inputs && call.num_inputs <= max_inputs,
               "wrong number of inputs");
  BATON_KCHECK(call.num_outputs == outputs, "wrong number of outputs");
  for (uint32_t i = 0; i < min_inputs; ++i) {
    BATON_KCHECK(call.inputs[i].present(), "required input missing");
  }
  for (uint32_t i = 0; i < outputs; ++i) {
    BATON_KCHECK(call.outputs[i].present(), "output missing");
  }
  return Status::Ok();
}

// All present inputs and all outputs are float32.
inline Status CheckAllF32(const KernelCall& call) {
  for (uint32_t i = 0; i < call.num_inputs; ++i) {
    if (call.inputs[i].present()) {
      BATON_KCHECK(call.inputs[i].dtype() == DType::Float32, "input must be float32");
    }
  }
  for (uint32_t i = 0; i < call.num_outputs; ++i) {
    BATON_KCHECK(call.outputs[i].dtype() == DType::Float32, "output must be float32");
  }
  return Status::Ok();
}

inline Status CheckRank(const TensorArg& t) {
  BATON_KCHECK(t.rank() <= kMaxRank, "tensor rank exceeds BATON_MAX_RANK");
  for (uint32_t i = 0; i < t.rank(); ++i) {
    BATON_KCHECK(t.dim(i) >= 0, "negative dimension");
  }
  return Status::Ok();
}

inline bool SameShape(const TensorArg& a, const TensorArg& b) {
  if (a.rank() != b.rank()) return false;
  for (uint32_t i = 0; i < a.rank(); ++i) {
    if (a.dim(i) != b.dim(i)) return false;
  }
  return true;
}

// Byte size computed from shape and dtype (the Tensor.bytes field is not
// trusted to be filled in).
// Element i of a [long] parameter vector (Slice, Pad). FlatBuffers aligns a
// vector's length prefix to 4 bytes only, so its 8-byte elements may be
// misaligned: read with memcpy (little-endian, as FlatBuffers stores them).
inline int64_t LongAt(const flatbuffers::Vector<int64_t>* v, uint32_t i) {
  int64_t value;
  memcpy(&value, v->Data() + static_cast<size_t>(i) * sizeof(value), sizeof(value));
  return flatbuffers::EndianScalar(value);
}

inline size_t ByteSize(const TensorArg& t) {
  return static_cast<size_t>(t.elements()) * DTypeSize(t.dtype());
}

// Product of dims [begin, end).
inline int64_t DimProduct(const TensorArg& t, uint32_t begin, uint32_t end) {
  int64_t n = 1;
  for (uint32_t i = begin; i < end; ++i) n *= t.dim(i);
  return n;
}

// x[0] + ... + x[n-1], summed in eight partial sums (vectorizable without
// reassociation flags), then the tail, then the partial sums in order.
inline float SumF32(const float* x, int64_t n) {
  float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += x[i + j];
  }
  float sum = 0.0f;
  for (; i < n; ++i) sum += x[i];
  for (int j = 0; j < 8; ++j) sum += acc[j];
  return sum;
}

// Fused output clamp; disabled means (-inf, +inf).
struct Clamp {
  float lo = -std::numeric_limits<float>::infinity();
  float hi = std::numeric_limits<float>::infinity();
  bool enabled = false;

  static Clamp From(const schema::Clamp* c) {
    Clamp out;
    if (c != nullptr) {
      out.lo = c->min();
      out.hi = c->max();
      out.enabled = true;
    }
    return out;
  }
};

// Rounds half to even under the default rounding mode, without libm: adding
// 1.5 * 2^23 leaves no fraction bits. Exact for |r| <= 2^22; callers clamp
// to that range first and map NaN away (QuantizeLinear, the QLinear ops).
inline float RoundHalfEven(float r) {
  const float kMagic = 12582912.0f;
  return (r + kMagic) - kMagic;
}

inline void ApplyClamp(const Clamp& c, float* y, int64_t n) {
  if (!c.enabled) return;
  const float lo = c.lo;
  const float hi = c.hi;
  for (int64_t i = 0; i < n; ++i) {
    float v = y[i];
    v = v < lo ? lo : v;
    v = v > hi ? hi : v;
    y[i] = v;
  }
}

inline bool HasWorkspace(const KernelCall& call) {
  return call.num_workspace >= 1 && call.workspace != nullptr && call.workspace[0].present();
}

// Bytes of the node's workspace tensor (0 without one).
inline size_t WorkspaceSize(const KernelCall& call) {
  return HasWorkspace(call) ? ByteSize(call.workspace[0]) : 0;
}

// Verifies the node carries a workspace of at least `need` bytes.
inline Status CheckWorkspace(const KernelCall& call, size_t need) {
  if (need == 0) return Status::Ok();
  BATON_KCHECK(HasWorkspace(call), "kernel needs a workspace tensor");
  BATON_KCHECK(WorkspaceSize(call) >= need, "workspace tensor too small");
  return Status::Ok();
}

inline float* WorkspaceF32(const KernelCall& call) {
  return call.num_workspace >= 1 ? call.workspace[0].f32() : nullptr;
}

// floor(a / b) for b > 0.
inline int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// ceil(a / b) for b > 0.
inline int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// Range [lo, hi) of output positions o in [0, out) whose tap at
// o * stride + offset lies inside [0, in).
inline void ValidRange(int64_t out, int64_t in, int64_t stride, int64_t offset, int64_t* lo,
                       int64_t* hi) {
  int64_t l = CeilDiv(-offset, stride);
  int64_t h = FloorDiv(in - 1 - offset, stride) + 1;
  l = l < 0 ? 0 : l;
  h = h > out ? out : h;
  if (h < l) h = l;
  *lo = l;
  *hi = h;
}

}  // namespace kernels
}  // namespace baton
