// Transpose, any dtype: output dim d is input dim perm[d]. Output dims that
// stay adjacent in the input are merged, then the output is written in order
// with a strided read along the innermost merged dim.

#include "kernel_family.h"
#include "kernel_util.h"
#include "layout.h"

namespace baton {
namespace kernels {
namespace {

Status TransposePrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckLayoutPrepare(call, 1, BATON_MSG("Transpose dtype mismatch"),
                                           BATON_MSG("Transpose output rank != input rank")));
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  const schema::TransposeParams* p = call.node->params_as_TransposeParams();
  BATON_KCHECK(p != nullptr && p->perm() != nullptr && p->perm()->size() == x.rank(),
               "Transpose needs a full perm");
  uint32_t seen = 0;
  for (uint32_t d = 0; d < x.rank(); ++d) {
    const int32_t s = p->perm()->Get(d);
    BATON_KCHECK(s >= 0 && static_cast<uint32_t>(s) < x.rank() && !((seen >> s) & 1u),
                 "Transpose perm is not a permutation");
    seen |= 1u << s;
    BATON_KCHECK(y.dim(d) == x.dim(static_cast<uint32_t>(s)), "Transpose output shape mismatch");
  }
  return Status::Ok();
}

Status TransposeEval(const KernelCall& call) {
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  const auto* perm = call.node->params_as_TransposeParams()->perm();
  const uint32_t r = x.rank();
  if (y.elements() == 0) return Status::Ok();
  int64_t in_stride[kMaxRank];
  ContiguousStrides(x, in_stride);
  // Merged output dims: size and input stride.
  int64_t size[kMaxRank];
  int64_t step[kMaxRank];
  uint32_t n = 0;
  for (uint32_t d = 0; d < r; ++d) {
    const uint32_t s = static_cast<uint32_t>(perm->Get(d));
    const int64_t dim = x.dim(s);
    if (dim == 1) continue;
    if (n > 0 && step[n - 1] == in_stride[s] * dim) {
      size[n - 1] *= dim;
      step[n - 1] = in_stride[s];
    } else {
      size[n] = dim;
      step[n] = in_stride[s];
      ++n;
    }
  }
  CopyStridedView(y.data, x.data, 0, size, step, n, DTypeSize(x.dtype()));
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kTransposeEntries[] = {
    {Op::Transpose, kAllDeviceKinds, TransposePrepare, TransposeEval, nullptr},
};
BATON_KERNEL_FAMILY(Transpose, kTransposeEntries);

}  // namespace kernels
}  // namespace baton
