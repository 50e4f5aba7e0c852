// Transpose, any dtype: output dim d is input dim perm[d]. Output dims that
// stay adjacent in the input are merged, then the output is written in order
// with a strided read along the innermost merged dim.

#include "kernel_util.h"
#include "kernels_internal.h"
#include "strided_copy.h"

namespace baton {
namespace kernels {

Status TransposePrepare(const KernelCall& call) {
  BATON_RETURN_IF_ERROR(CheckArity(call, 1, 1, 1));
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  BATON_RETURN_IF_ERROR(CheckRank(x));
  BATON_KCHECK(x.dtype() == y.dtype() && DTypeSize(x.dtype()) != 0, "Transpose dtype mismatch");
  BATON_KCHECK(x.rank() == y.rank(), "Transpose output rank != input rank");
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
  const size_t esize = DTypeSize(x.dtype());
  if (y.elements() == 0) return Status::Ok();
  int64_t in_stride[kMaxRank];
  int64_t run = 1;
  for (int32_t d = static_cast<int32_t>(r) - 1; d >= 0; --d) {
    in_stride[d] = run;
    run *= x.dim(static_cast<uint32_t>(d));
  }
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
  if (n == 0) {
    size[0] = 1;
    step[0] = 1;
    n = 1;
  }
  const uint32_t inner = n - 1;
  const int64_t len = size[inner];
  int64_t rows = 1;
  for (uint32_t d = 0; d < inner; ++d) rows *= size[d];
  const uint8_t* src = static_cast<const uint8_t*>(x.data);
  uint8_t* dst = static_cast<uint8_t*>(y.data);
  int64_t index[kMaxRank] = {};
  int64_t off = 0;
  for (int64_t t = 0; t < rows; ++t) {
    CopyStrided(dst, src + off * static_cast<int64_t>(esize), len, step[inner], esize);
    dst += static_cast<size_t>(len) * esize;
    for (int32_t d = static_cast<int32_t>(inner) - 1; d >= 0; --d) {
      off += step[d];
      if (++index[d] < size[d]) break;
      off -= step[d] * size[d];
      index[d] = 0;
    }
  }
  return Status::Ok();
}

}  // namespace kernels
}  // namespace baton
