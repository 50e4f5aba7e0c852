// Gather along one axis.

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

Check InferGather(InferContext& c) {
  BATON_TRY(c.RequireMinRank(0, 1));
  if (c.In(1).dtype != DType::Int64 && c.In(1).dtype != DType::Int32) {
    return c.Err("indices " + c.Name(1) + " must be int64 or int32, got " +
                 DTypeName(c.In(1).dtype));
  }
  auto axis = c.Axis(c.node().GetInt("axis", 0), c.Rank(0), "axis");
  if (!axis.ok()) return Fail(axis.error());
  const int64_t dim = c.S(0)[*axis];
  if (const Tensor* v = c.Value(1)) {
    for (int64_t index : v->IntData()) {
      if (index < -dim || index >= dim) {
        return c.Err("index " + std::to_string(index) + " in " + c.Name(1) +
                     " is out of range for axis " + std::to_string(*axis) + " of " + c.Desc(0));
      }
    }
  }
  Shape out(c.S(0).begin(), c.S(0).begin() + *axis);
  out.insert(out.end(), c.S(1).begin(), c.S(1).end());
  out.insert(out.end(), c.S(0).begin() + *axis + 1, c.S(0).end());
  c.Output(c.In(0).dtype, out);
  return Check();
}

Result<LoweredParams> LowerGather(flatbuffers::FlatBufferBuilder* b, const Graph& g,
                                  const Node& n) {
  return internal::LowerAxis(b, g, n, /*default_axis=*/0, /*check_range=*/true);
}

Check EvalGather(const Node& node, const std::vector<const Tensor*>& inputs,
                 const std::vector<Tensor*>& outputs) {
  if (inputs.size() < 2 || inputs[1] == nullptr) return Fail("missing indices");
  const Tensor& x = *inputs[0];
  Tensor* y = outputs[0];
  const size_t esize = DTypeBytes(x.dtype);
  const int64_t axis = internal::NormalizeAxis(node.GetInt("axis", 0), x.shape.size());
  const std::vector<int64_t> indices = inputs[1]->IntData();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < x.shape.size(); ++d) inner *= x.shape[d];
  const int64_t dim = x.shape[axis];
  y->data.resize(y->bytes());
  int64_t o = 0;
  for (int64_t a = 0; a < outer; ++a) {
    for (int64_t index : indices) {
      int64_t k = index < 0 ? index + dim : index;
      if (k < 0 || k >= dim) {
        return Fail("index " + std::to_string(index) + " is out of range for dim " +
                    std::to_string(dim));
      }
      internal::CopyElems(x.data.data(), (a * dim + k) * inner, y->data.data(), o, inner, esize);
      o += inner;
    }
  }
  return Check();
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Gather", 2, 2, 1, 1, InferGather, true, schema::Op::Gather, 2, LowerGather, nullptr, EvalGather, false},
};
// clang-format on

}  // namespace

const OpFamily kGatherOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
