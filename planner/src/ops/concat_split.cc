// Concat and Split along one axis.

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

Check InferConcat(InferContext& c) {
  if (c.node().FindAttr("axis") == nullptr) return c.Err("attribute 'axis' is required");
  for (int i = 0; i < c.NumInputs(); ++i) {
    if (!c.Has(i)) return c.Err("input " + std::to_string(i) + " is absent");
  }
  auto axis = c.Axis(c.node().GetInt("axis", 0), c.Rank(0), "axis");
  if (!axis.ok()) return Fail(axis.error());
  Shape out = c.S(0);
  for (int i = 1; i < c.NumInputs(); ++i) {
    if (c.In(i).dtype != c.In(0).dtype) {
      return c.Err("dtypes of " + c.Name(0) + " and " + c.Name(i) + " differ");
    }
    bool ok = c.Rank(i) == out.size();
    for (size_t d = 0; ok && d < out.size(); ++d) {
      if (static_cast<int64_t>(d) != *axis && c.S(i)[d] != out[d]) ok = false;
    }
    if (!ok) {
      return c.Err("cannot concatenate " + c.Desc(0) + " and " + c.Desc(i) + " on axis " +
                   std::to_string(*axis));
    }
    out[*axis] += c.S(i)[*axis];
  }
  c.Output(c.In(0).dtype, out);
  return Check();
}

Check InferSplit(InferContext& c) {
  BATON_TRY(c.RequireMinRank(0, 1));
  auto axis = c.Axis(c.node().GetInt("axis", 0), c.Rank(0), "axis");
  if (!axis.ok()) return Fail(axis.error());
  const int64_t dim = c.S(0)[*axis];
  const int64_t n = c.NumOutputs();
  std::vector<int64_t> split = c.node().GetInts("split");
  if (c.Has(1)) {
    BATON_ASSIGN_OR_RETURN(split, c.Ints(1, "split"));
  }
  if (split.empty()) {
    if (c.node().FindAttr("num_outputs") != nullptr) {
      // Opset 18: equal chunks of ceil(dim / n), the last one smaller.
      const int64_t chunk = (dim + n - 1) / n;
      for (int64_t i = 0; i < n; ++i) split.push_back(std::min(chunk, dim - i * chunk));
    } else {
      if (dim % n != 0) {
        return c.Err("cannot split dim " + std::to_string(dim) + " of " + c.Desc(0) + " into " +
                     std::to_string(n) + " equal parts");
      }
      split.assign(n, dim / n);
    }
  }
  if (static_cast<int64_t>(split.size()) != n) {
    return c.Err("split has " + std::to_string(split.size()) + " sizes but the node has " +
                 std::to_string(n) + " outputs");
  }
  int64_t sum = 0;
  for (int64_t s : split) {
    if (s < 0) return c.Err("split sizes must not be negative");
    sum += s;
  }
  if (sum != dim) {
    return c.Err("split sizes " + ShapeString(split) + " do not add up to dim " +
                 std::to_string(dim) + " of " + c.Desc(0));
  }
  for (int64_t s : split) {
    Shape out = c.S(0);
    out[*axis] = s;
    c.Output(c.In(0).dtype, out);
  }
  return Check();
}

Result<LoweredParams> LowerConcatSplit(flatbuffers::FlatBufferBuilder* b, const Graph& g,
                                       const Node& n) {
  return internal::LowerAxis(b, g, n, /*default_axis=*/0, /*check_range=*/true);
}

// Concat and Split both walk the concatenated tensor in (outer, part) order;
// Concat copies the parts (inputs) into it, Split copies it into the parts
// (outputs).
Check EvalConcatOrSplit(bool concat, const Node& node, const std::vector<const Tensor*>& inputs,
                        const std::vector<Tensor*>& outputs) {
  const Tensor& x = *inputs[0];
  Tensor* y = outputs[0];
  const size_t esize = DTypeBytes(x.dtype);
  const Shape& whole = concat ? y->shape : x.shape;
  const int64_t axis = internal::NormalizeAxis(node.GetInt("axis", 0), whole.size());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= whole[d];
  for (size_t d = static_cast<size_t>(axis) + 1; d < whole.size(); ++d) inner *= whole[d];
  if (concat) {
    for (const Tensor* t : inputs) {
      if (t == nullptr) return Fail("missing Concat input");
      if (t->data.size() != t->bytes()) return Fail("value of '" + t->name + "' is incomplete");
    }
    y->data.resize(y->bytes());
  } else {
    for (Tensor* t : outputs) {
      if (t != nullptr) t->data.resize(t->bytes());
    }
  }
  const size_t n_parts = concat ? inputs.size() : outputs.size();
  int64_t pos = 0;
  for (int64_t a = 0; a < outer; ++a) {
    for (size_t p = 0; p < n_parts; ++p) {
      const Shape& part_shape = concat ? inputs[p]->shape : outputs[p]->shape;
      const int64_t n = part_shape[axis] * inner;
      if (concat) {
        internal::CopyElems(inputs[p]->data.data(), a * n, y->data.data(), pos, n, esize);
      } else if (outputs[p] != nullptr) {
        internal::CopyElems(x.data.data(), pos, outputs[p]->data.data(), a * n, n, esize);
      }
      pos += n;
    }
  }
  return Check();
}

Check EvalConcat(const Node& node, const std::vector<const Tensor*>& inputs,
                 const std::vector<Tensor*>& outputs) {
  return EvalConcatOrSplit(/*concat=*/true, node, inputs, outputs);
}

Check EvalSplit(const Node& node, const std::vector<const Tensor*>& inputs,
                const std::vector<Tensor*>& outputs) {
  return EvalConcatOrSplit(/*concat=*/false, node, inputs, outputs);
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Concat", 1, kUnbounded, 1, 1, InferConcat, true, schema::Op::Concat, kAllInputs, LowerConcatSplit, nullptr, EvalConcat, false},
    {"Split", 1, 2, 1, kUnbounded, InferSplit, true, schema::Op::Split, 1, LowerConcatSplit, nullptr, EvalSplit, false},
};
// clang-format on

}  // namespace

const OpFamily kConcatSplitOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
