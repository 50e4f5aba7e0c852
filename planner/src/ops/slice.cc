// Slice with constant starts, ends, axes and steps.

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

Check InferSlice(InferContext& c) {
  static const char* const kRoles[] = {"data", "starts", "ends", "axes", "steps"};
  auto spec = internal::ResolveSlice(c.node(), c.S(0),
                                     [&](int i) { return c.Ints(i, kRoles[std::min(i, 4)]); });
  if (!spec.ok()) {
    // Errors from Ints already carry the node prefix.
    if (spec.error().rfind("node '", 0) == 0) return Fail(spec.error());
    return c.Err(spec.error());
  }
  c.Output(c.In(0).dtype, spec->count);
  return Check();
}

// The plan carries one resolved (start, end, step) per input dim, so the
// kernel needs neither the parameter inputs nor ONNX's clamping rules.
Result<LoweredParams> LowerSlice(flatbuffers::FlatBufferBuilder* b, const Graph& g, const Node& n) {
  const Tensor& x = internal::InputTensor(g, n, 0);
  auto spec = internal::ResolveSlice(n, x.shape, [&](int k) -> Result<std::vector<int64_t>> {
    const Tensor* c = internal::ConstInput(g, n, k);
    if (c == nullptr) return Fail("starts/ends/axes/steps must be constant");
    return c->IntData();
  });
  if (!spec.ok()) return Fail(internal::NodeWhere(n) + ": " + spec.error());
  const size_t rank = x.shape.size();
  std::vector<int64_t> s(rank), e(rank), st(rank), ax(rank);
  for (size_t a = 0; a < rank; ++a) {
    ax[a] = static_cast<int64_t>(a);
    s[a] = spec->start[a];
    st[a] = spec->step[a];
    e[a] = spec->start[a] + spec->step[a] * spec->count[a];
  }
  const std::vector<int32_t> a32 = internal::I32(ax);
  LoweredParams out;
  out.type = schema::Params::SliceParams;
  out.offset = schema::CreateSliceParamsDirect(*b, &s, &e, &a32, &st).Union();
  return out;
}

Check EvalSlice(const Node& node, const std::vector<const Tensor*>& inputs,
                const std::vector<Tensor*>& outputs) {
  const Tensor& x = *inputs[0];
  auto spec = internal::ResolveSlice(node, x.shape, [&](int i) -> Result<std::vector<int64_t>> {
    if (static_cast<size_t>(i) >= inputs.size() || inputs[i] == nullptr) {
      return Fail("missing input " + std::to_string(i));
    }
    return inputs[i]->IntData();
  });
  if (!spec.ok()) return Fail(spec.error());
  const Shape in_strides = internal::Strides(x.shape);
  Shape strides(x.shape.size());
  int64_t base = 0;
  for (size_t d = 0; d < x.shape.size(); ++d) {
    strides[d] = spec->step[d] * in_strides[d];
    base += spec->start[d] * in_strides[d];
  }
  internal::CopyStrided(x, strides, base, outputs[0]);
  return Check();
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Slice", 1, 5, 1, 1, InferSlice, true, schema::Op::Slice, 1, LowerSlice, nullptr, EvalSlice, false},
};
// clang-format on

}  // namespace

const OpFamily kSliceOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
