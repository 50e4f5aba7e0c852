// Transpose, any dtype: output dim d is input dim perm[d]. Output dims that
// stay adjacent in the input are merged, then the output is written in order
// with a strided read along the innermost merged dim.
// DepthToSpace and SpaceToDepth, any dtype: the same strided copy over a 6-d
// view of the NCHW input (ONNX's reshape-transpose-reshape definition).

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

// The blocksize, from the shapes: DepthToSpace out H / in H, SpaceToDepth
// in H / out H (0 for an empty H; Prepare checks the other dims against it).
int64_t BlockSize(const KernelCall& call) {
  const bool to_space = call.node->op() == Op::DepthToSpace;
  const int64_t small = to_space ? call.inputs[0].dim(2) : call.outputs[0].dim(2);
  const int64_t big = to_space ? call.outputs[0].dim(2) : call.inputs[0].dim(2);
  return small > 0 ? big / small : 0;
}

Status DepthSpacePrepare(const KernelCall& call) {
  const bool to_space = call.node->op() == Op::DepthToSpace;
  BATON_RETURN_IF_ERROR(CheckLayoutPrepare(call, 1, BATON_MSG("DepthToSpace dtype mismatch"),
                                           BATON_MSG("DepthToSpace output rank != input rank")));
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  // AxisParams.axis: 1 = DepthToSpace CRD, 0 = DCR (SpaceToDepth: always 0).
  const schema::AxisParams* p = call.node->params_as_AxisParams();
  BATON_KCHECK(p != nullptr && (p->axis() == 0 || (to_space && p->axis() == 1)),
               "DepthToSpace / SpaceToDepth need AxisParams (0 DCR, 1 CRD)");
  BATON_KCHECK(x.rank() == 4, "DepthToSpace and SpaceToDepth need NCHW");
  const int64_t b = BlockSize(call);
  BATON_KCHECK(b >= 1, "DepthToSpace needs a positive blocksize");
  const TensorArg& deep = to_space ? x : y;  // the [N, C*b*b, H, W] side
  const TensorArg& wide = to_space ? y : x;  // the [N, C, H*b, W*b] side
  BATON_KCHECK(deep.dim(0) == wide.dim(0) && deep.dim(1) == wide.dim(1) * b * b &&
                   wide.dim(2) == deep.dim(2) * b && wide.dim(3) == deep.dim(3) * b,
               "DepthToSpace / SpaceToDepth shapes do not match the blocksize");
  return Status::Ok();
}

Status DepthSpaceEval(const KernelCall& call) {
  const TensorArg& x = call.inputs[0];
  const TensorArg& y = call.outputs[0];
  if (y.elements() == 0) return Status::Ok();
  const bool crd = call.node->params_as_AxisParams()->axis() == 1;
  const int64_t b = BlockSize(call);
  int64_t size[6];
  int64_t step[6];
  if (call.node->op() == Op::DepthToSpace) {
    // y[n][c][h*b + i][w*b + j] = x[n][(i*b + j)*C + c][h][w] (DCR) or
    // x[n][(c*b + i)*b + j][h][w] (CRD); y is walked as [N, C, H, b, W, b].
    const int64_t C = y.dim(1), H = x.dim(2), W = x.dim(3);
    const int64_t hw = H * W;
    const int64_t s_i = crd ? b * hw : b * C * hw;
    const int64_t s_j = crd ? hw : C * hw;
    const int64_t s_c = crd ? b * b * hw : hw;
    const int64_t sz[6] = {y.dim(0), C, H, b, W, b};
    const int64_t st[6] = {x.dim(1) * hw, s_c, W, s_i, 1, s_j};
    for (int d = 0; d < 6; ++d) size[d] = sz[d], step[d] = st[d];
  } else {
    // y[n][(i*b + j)*C + c][h][w] = x[n][c][h*b + i][w*b + j]; y is walked as
    // [N, b, b, C, H, W].
    const int64_t C = x.dim(1), H = y.dim(2), W = y.dim(3);
    const int64_t xw = x.dim(3), xhw = x.dim(2) * xw;
    const int64_t sz[6] = {y.dim(0), b, b, C, H, W};
    const int64_t st[6] = {C * xhw, xw, 1, xhw, b * xw, b};
    for (int d = 0; d < 6; ++d) size[d] = sz[d], step[d] = st[d];
  }
  CopyStridedView(y.data, x.data, 0, size, step, 6, DTypeSize(x.dtype()));
  return Status::Ok();
}

}  // namespace

constexpr KernelEntry kTransposeEntries[] = {
    {Op::Transpose, kAllDeviceKinds, TransposePrepare, TransposeEval, nullptr},
    {Op::DepthToSpace, kAllDeviceKinds, DepthSpacePrepare, DepthSpaceEval, nullptr},
    {Op::SpaceToDepth, kAllDeviceKinds, DepthSpacePrepare, DepthSpaceEval, nullptr},
};
BATON_KERNEL_FAMILY(Transpose, kTransposeEntries);

}  // namespace kernels
}  // namespace baton
