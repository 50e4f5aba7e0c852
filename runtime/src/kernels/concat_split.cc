// Concat and Split along AxisParams.axis (non-negative), any dtype. Split
// sizes come from the output shapes (a second "split" input is ignored).
// Both are a loop over the dims before the axis copying one contiguous chunk
// per operand; a chunk already in place (same address) is skipped. With a
// runner (a CPU queue of several threads), ranges of the whole tensor's
// bytes go to its threads.

#include <string.h>

#include "kernel_family.h"
#include "kernel_util.h"
#include "parallel.h"

namespace baton {
namespace kernels {
namespace {

// Checks that `parts` concatenated along `axis` give `whole`.
Status CheckParts(const TensorArg& whole, const TensorArg* parts, uint32_t count,
                  int32_t axis_param) {
  BATON_RETURN_IF_ERROR(CheckRank(whole));
  BATON_KCHECK(axis_param >= 0 && static_cast<uint32_t>(axis_param) < whole.rank(),
               "axis out of range");
  const uint32_t axis = static_cast<uint32_t>(axis_param);
  int64_t total = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const TensorArg& t = parts[i];
    BATON_KCHECK(t.present(), "missing operand");
    BATON_KCHECK(t.dtype() == whole.dtype(), "operand dtypes differ");
    BATON_KCHECK(t.rank() == whole.rank(), "operand ranks differ");
    for (uint32_t d = 0; d < whole.rank(); ++d) {
      if (d != axis) BATON_KCHECK(t.dim(d) == whole.dim(d), "operand shapes differ off the axis");
    }
    total += t.dim(axis);
  }
  BATON_KCHECK(total == whole.dim(axis), "operand sizes along the axis do not add up");
  BATON_KCHECK(DTypeSize(whole.dtype()) != 0, "unknown dtype");
  return Status::Ok();
}

int32_t AxisOf(const KernelCall& call) {
  const schema::AxisParams* p = call.node->params_as_AxisParams();
  return p ? p->axis() : -1;
}

struct CopyJob {
  const TensorArg* whole;
  const TensorArg* parts;
  uint32_t count;
  uint32_t axis;
  bool to_whole;
  size_t unit;  // bytes per index along the axis
};

// Concat (to_whole) or Split over the whole tensor's bytes [begin, end):
// per index of the dims before the axis, one chunk per part, in order; a
// chunk already in place is not copied.
void CopyRange(void* ctx, int64_t begin, int64_t end, int) {
  const CopyJob& j = *static_cast<const CopyJob*>(ctx);
  const size_t b = static_cast<size_t>(begin), e = static_cast<size_t>(end);
  const size_t row = static_cast<size_t>(j.whole->dim(j.axis)) * j.unit;
  uint8_t* w = static_cast<uint8_t*>(j.whole->data);
  size_t o = b / row;
  for (size_t at = o * row; at < e; ++o) {
    for (uint32_t i = 0; i < j.count; ++i) {
      const size_t chunk = static_cast<size_t>(j.parts[i].dim(j.axis)) * j.unit;
      const size_t lo = at > b ? at : b, hi = at + chunk < e ? at + chunk : e;
      if (lo < hi) {
        uint8_t* p = static_cast<uint8_t*>(j.parts[i].data) + o * chunk + (lo - at);
        if (p != w + lo) memcpy(j.to_whole ? w + lo : p, j.to_whole ? p : w + lo, hi - lo);
      }
      at += chunk;
    }
  }
}

// Copies of at least this many bytes are split (in multiples of 4 KiB).
constexpr int64_t kParallelMinCopyBytes = 128 * 1024;

void CopyParts(const TensorArg& whole, const TensorArg* parts, uint32_t count, int32_t axis_param,
               bool to_whole) {
  const uint32_t axis = static_cast<uint32_t>(axis_param);
  const size_t unit =
      static_cast<size_t>(DimProduct(whole, axis + 1, whole.rank())) * DTypeSize(whole.dtype());
  const int64_t bytes =
      DimProduct(whole, 0, whole.rank()) * static_cast<int64_t>(DTypeSize(whole.dtype()));
  CopyJob job{&whole, parts, count, axis, to_whole, unit};
  if (bytes <= 0 || unit == 0) return;
  if (BATON_PARALLEL_KERNELS && bytes >= kParallelMinCopyBytes) {
    ParallelFor(bytes, 4096, ParallelThreads(), CopyRange, &job);
  } else {
    CopyRange(&job, 0, bytes, 0);
  }
}

Status ConcatPrepare(const KernelCall& call) {
  BATON_KCHECK(call.num_inputs >= 1 && call.num_outputs == 1, "Concat needs inputs, one output");
  BATON_KCHECK(call.outputs[0].present(), "output missing");
  BATON_KCHECK(call.node->params_as_AxisParams() != nullptr, "Concat needs AxisParams");
  return CheckParts(call.outputs[0], call.inputs, call.num_inputs, AxisOf(call));
}

Status ConcatEval(const KernelCall& call) {
  CopyParts(call.outputs[0], call.inputs, call.num_inputs, AxisOf(call), true);
  return Status::Ok();
}

Status SplitPrepare(const KernelCall& call) {
  BATON_KCHECK(call.num_inputs >= 1 && call.num_inputs <= 2 && call.num_outputs >= 1,
               "Split needs one input and outputs");
  BATON_KCHECK(call.inputs[0].present(), "required input missing");
  BATON_KCHECK(call.node->params_as_AxisParams() != nullptr, "Split needs AxisParams");
  return CheckParts(call.inputs[0], call.outputs, call.num_outputs, AxisOf(call));
}

Status SplitEval(const KernelCall& call) {
  CopyParts(call.inputs[0], call.outputs, call.num_outputs, AxisOf(call), false);
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kConcatSplitEntries[] = {
    {Op::Concat, kAllDeviceKinds, ConcatPrepare, ConcatEval, nullptr},
    {Op::Split, kAllDeviceKinds, SplitPrepare, SplitEval, nullptr},
};
BATON_KERNEL_FAMILY(ConcatSplit, kConcatSplitEntries);

}  // namespace kernels
}  // namespace baton
