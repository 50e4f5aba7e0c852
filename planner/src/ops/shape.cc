// Planner-only ops: the simplifier folds or removes them before emission.

#include <algorithm>

#include "ops/families.h"
#include "ops/infer_context.h"

namespace baton::planner {
namespace {

Check InferShape(InferContext& c) {
  const int64_t rank = static_cast<int64_t>(c.Rank(0));
  int64_t start = c.node().GetInt("start", 0), end = c.node().GetInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  c.Output(DType::Int64, {end - start});
  return Check();
}

// Reads only input 0's shape (eval_reads_shapes_only): shape arithmetic on
// a tensor whose value is unknown still folds.
Check EvalShape(const Node& node, const std::vector<const Tensor*>& inputs,
                const std::vector<Tensor*>& outputs) {
  const Tensor& x = *inputs[0];
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  int64_t start = node.GetInt("start", 0), end = node.GetInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  internal::Store(std::vector<int64_t>(x.shape.begin() + start, x.shape.begin() + end), outputs[0]);
  return Check();
}

Check InferDropout(InferContext& c) {
  c.SameAsInput(0);
  // The optional mask is boolean, as in ONNX.
  if (c.NumOutputs() > 1) c.Output(DType::Bool, c.S(0));
  return Check();
}

// Inference-mode Dropout passes its input through.
Check EvalDropout(const Node&, const std::vector<const Tensor*>& inputs,
                  const std::vector<Tensor*>& outputs) {
  outputs[0]->data = inputs[0]->data;
  // The optional mask output is all ones in inference.
  if (outputs.size() > 1 && outputs[1] != nullptr) {
    outputs[1]->data.assign(outputs[1]->bytes(), 1);
  }
  return Check();
}

// The value of a Constant node from its value_* attribute.
Check InferConstantValueImpl(InferContext& c, Tensor* out_value) {
  const Node& node = c.node();
  const Attr* a = nullptr;
  for (const char* key : {"value_float", "value_floats", "value_int", "value_ints"}) {
    if (const Attr* found = node.FindAttr(key)) {
      if (a != nullptr) return c.Err("has more than one value attribute");
      a = found;
    }
  }
  if (a == nullptr) {
    if (out_value->is_constant && out_value->shape_known) {
      c.Output(out_value->dtype, out_value->shape);  // filled by the importer
      return Check();
    }
    return c.Err("Constant needs value_float, value_floats, value_int or value_ints");
  }
  out_value->data.clear();
  auto put = [&](const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    out_value->data.insert(out_value->data.end(), b, b + n);
  };
  switch (a->kind) {
    case Attr::Kind::kFloat:
      c.Output(DType::Float32, {});
      put(&a->f, sizeof(float));
      break;
    case Attr::Kind::kFloats:
      c.Output(DType::Float32, {static_cast<int64_t>(a->floats.size())});
      put(a->floats.data(), a->floats.size() * sizeof(float));
      break;
    case Attr::Kind::kInt:
      c.Output(DType::Int64, {});
      put(&a->i, sizeof(int64_t));
      break;
    case Attr::Kind::kInts:
      c.Output(DType::Int64, {static_cast<int64_t>(a->ints.size())});
      put(a->ints.data(), a->ints.size() * sizeof(int64_t));
      break;
    case Attr::Kind::kString:
    case Attr::Kind::kStrings:
      return c.Err("string constants are not supported");
    case Attr::Kind::kTensor:
      return c.Err("tensor constants are read by the importer, not here");
  }
  out_value->is_constant = true;
  return Check();
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {"Shape", 1, 1, 1, 1, InferShape, false, schema::Op::Copy, 1, nullptr, nullptr, EvalShape, true},
    {"Constant", 0, 0, 1, 1, nullptr, false, schema::Op::Copy, 1, nullptr, nullptr, nullptr, false},
    {"Dropout", 1, 3, 1, 2, InferDropout, false, schema::Op::Copy, 1, nullptr, nullptr, EvalDropout, false},
};
// clang-format on

}  // namespace

Check InferConstantValue(InferContext& c, Tensor* out_value) {
  return InferConstantValueImpl(c, out_value);
}

const OpFamily kShapeOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

}  // namespace baton::planner
