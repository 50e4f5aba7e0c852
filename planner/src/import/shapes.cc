#include "baton/planner/import/shapes.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>

#include "baton/planner/ops/op_def.h"
#include "baton/planner/ops/postprocess.h"
#include "ops/eval_host.h"
#include "ops/families.h"
#include "ops/infer_context.h"

namespace baton::planner {
namespace {

using internal::HasInput;
using internal::Shape;
using internal::ShapeString;

// Small tensors computed from constants (shape arithmetic, masks) are
// evaluated while inferring so that Reshape/Slice/Expand/... can read shapes
// computed by Shape -> Gather -> Equal -> Where ... chains, like ONNX's data
// propagation. Larger values are left to the simplifier's constant folding.
constexpr int64_t kMaxPropagatedElements = 1 << 16;

std::string Count(int n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

Check CheckArity(const Node& node, const OpDef& rule) {
  const int n_in = static_cast<int>(node.inputs.size());
  const int n_out = static_cast<int>(node.outputs.size());
  auto fail = [&](int n, const char* what, int lo, int hi) {
    std::string expected = hi < 0     ? "at least " + std::to_string(lo)
                           : lo == hi ? std::to_string(lo)
                                      : std::to_string(lo) + " to " + std::to_string(hi);
    return Fail("node '" + node.name + "': " + node.op + " has " + Count(n, what) + ", expected " +
                expected);
  };
  if (n_in < rule.min_inputs || (rule.max_inputs >= 0 && n_in > rule.max_inputs)) {
    return fail(n_in, "input", rule.min_inputs, rule.max_inputs);
  }
  if (n_out < rule.min_outputs || (rule.max_outputs >= 0 && n_out > rule.max_outputs)) {
    return fail(n_out, "output", rule.min_outputs, rule.max_outputs);
  }
  for (int i = 0; i < rule.min_inputs; ++i) {
    if (node.inputs[i] < 0) {
      return Fail("node '" + node.name + "': required input " + std::to_string(i) + " is absent");
    }
  }
  return Check();
}

// Known values: constants, and small integer values propagated from them.
struct Values {
  std::vector<std::unique_ptr<Tensor>> propagated;
  std::vector<const Tensor*> known;
};

// Checks graph inputs and constants and seeds the known values.
Result<Values> SeedValues(const Graph& graph) {
  const std::vector<Tensor>& tensors = graph.tensors;
  for (int t : graph.inputs) {
    if (t < 0 || static_cast<size_t>(t) >= tensors.size()) return Fail("bad graph input index");
    if (!tensors[t].shape_known) return Fail("graph input '" + tensors[t].name + "' has no shape");
  }
  Values values;
  values.propagated.resize(tensors.size());
  values.known.assign(tensors.size(), nullptr);
  const std::vector<int> producer = graph.Producers();
  for (size_t t = 0; t < tensors.size(); ++t) {
    const Tensor& tensor = tensors[t];
    for (int64_t d : tensor.shape) {
      if (tensor.shape_known && d < 0) {
        return Fail("tensor '" + tensor.name + "' has a negative dim in " +
                    ShapeString(tensor.shape));
      }
    }
    if (!tensor.is_constant || producer[t] >= 0) continue;
    if (!tensor.shape_known) return Fail("constant '" + tensor.name + "' has no shape");
    if (tensor.data.size() != tensor.bytes()) {
      return Fail("constant '" + tensor.name + "' has " + std::to_string(tensor.data.size()) +
                  " bytes of data but " + DTypeName(tensor.dtype) + " " +
                  ShapeString(tensor.shape) + " needs " + std::to_string(tensor.bytes()));
    }
    values.known[t] = &tensor;
  }
  return values;
}

// Constant: the value lands in the output tensor itself.
Check InferConstantNode(Graph* graph, const Node& node, Values* values) {
  InferContext c(*graph, node, values->known);
  Tensor& out = graph->tensors[node.outputs[0]];
  BATON_TRY(InferConstantValue(c, &out));
  if (out.shape_known && out.shape != c.out[0].shape) {
    return Fail("node '" + node.name + "': value shape " + ShapeString(c.out[0].shape) +
                " disagrees with declared shape " + ShapeString(out.shape) + " of '" + out.name +
                "'");
  }
  out.shape = c.out[0].shape;
  out.dtype = c.out[0].dtype;
  out.shape_known = true;
  values->known[node.outputs[0]] = &out;
  return Check();
}

// Runs the op's inference and records the output shapes and dtypes.
Check InferNode(Graph* graph, const Node& node, const OpDef& def, const Values& values) {
  InferContext c(*graph, node, values.known);
  BATON_TRY(def.infer(c));
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    Tensor& out = graph->tensors[node.outputs[i]];
    const OutSpec& spec = c.out[i];
    if (out.shape_known && (out.shape != spec.shape || out.dtype != spec.dtype)) {
      return Fail("node '" + node.name + "': inferred " + DTypeName(spec.dtype) + " " +
                  ShapeString(spec.shape) + " for '" + out.name + "' but it is declared " +
                  DTypeName(out.dtype) + " " + ShapeString(out.shape));
    }
    out.shape = spec.shape;
    out.dtype = spec.dtype;
    out.shape_known = true;
  }
  return Check();
}

// Propagates small integer values (shape arithmetic) through `node` when all
// the inputs it reads are known.
Check PropagateValues(const Graph& graph, const Node& node, const OpDef& def, Values* values) {
  if (def.eval == nullptr) return Check();
  const std::vector<Tensor>& tensors = graph.tensors;
  std::vector<const Tensor*> in_values;
  for (int t : node.inputs) {
    const Tensor* v = t < 0 ? nullptr : values->known[t];
    if (t >= 0 && v == nullptr) {
      if (!def.eval_reads_shapes_only) return Check();
      v = &tensors[t];
    }
    in_values.push_back(v);
  }
  bool integer = true;
  for (int t : node.outputs) {
    const Tensor& out = tensors[t];
    if (out.elements() > kMaxPropagatedElements) return Check();
    integer = integer && (out.dtype == DType::Int64 || out.dtype == DType::Int32);
  }
  std::vector<Tensor*> out_values;
  for (int t : node.outputs) {
    values->propagated[t] = std::make_unique<Tensor>();
    Tensor& v = *values->propagated[t];
    v.name = tensors[t].name;
    v.dtype = tensors[t].dtype;
    v.shape = tensors[t].shape;
    v.shape_known = true;
    v.is_constant = true;
    out_values.push_back(&v);
  }
  Check evaluated = internal::EvaluateNode(node, in_values, out_values);
  if (!evaluated.ok()) {
    // Integer shape arithmetic must evaluate; other values of an op with a
    // kernel may stay unknown (the node then runs at inference).
    if (integer || !def.has_kernel) {
      return Fail("node '" + node.name + "': " + evaluated.error());
    }
    return Check();
  }
  for (int t : node.outputs) values->known[t] = values->propagated[t].get();
  return Check();
}

// A custom op's outputs keep the types the importer gave them from the
// model; its inputs must be known.
Check CheckCustomNode(const Graph& graph, const Node& node) {
  for (int t : node.inputs) {
    if (t >= 0 && !graph.tensors[t].shape_known) {
      return Fail("node '" + node.name + "': input '" + graph.tensors[t].name +
                  "' has unknown shape");
    }
  }
  for (int t : node.outputs) {
    if (!graph.tensors[t].shape_known) {
      return Fail("node '" + node.name + "' (custom op '" + node.op + "'): output '" +
                  graph.tensors[t].name + "' has no declared shape; annotate it in the model");
    }
  }
  return Check();
}

// Baton's own post-processing ops: outputs from InferPostprocessOutputs (the
// kernels' rule); a type the model declares must agree with it.
Check InferPostprocessNode(Graph* graph, const Node& node) {
  std::vector<TensorSpec> inputs;
  for (int t : node.inputs) {
    if (t < 0 || !graph->tensors[t].shape_known) {
      return Fail("node '" + node.name + "' (" + node.op + "): input " +
                  (t < 0 ? std::string("missing") : "'" + graph->tensors[t].name + "' has unknown shape"));
    }
    inputs.push_back({graph->tensors[t].dtype, graph->tensors[t].shape});
  }
  BATON_ASSIGN_OR_RETURN(std::vector<TensorSpec> outputs,
                         InferPostprocessOutputs(node.name, node.op, inputs, node.attrs));
  if (outputs.size() != node.outputs.size()) {
    return Fail("node '" + node.name + "' (" + node.op + "): has " +
                std::to_string(node.outputs.size()) + " outputs, the op has " +
                std::to_string(outputs.size()));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    Tensor& tensor = graph->tensors[node.outputs[i]];
    if (tensor.shape_known &&
        (tensor.dtype != outputs[i].dtype || tensor.shape != outputs[i].shape)) {
      return Fail("node '" + node.name + "' (" + node.op + "): output '" + tensor.name +
                  "' is declared " + DTypeName(tensor.dtype) + " " + ShapeString(tensor.shape) +
                  " in the model, but the op gives " + DTypeName(outputs[i].dtype) + " " +
                  ShapeString(outputs[i].shape));
    }
    tensor.dtype = outputs[i].dtype;
    tensor.shape = outputs[i].shape;
    tensor.shape_known = true;
  }
  return Check();
}

}  // namespace

Check CheckImportedArity(const Graph& graph) {
  for (const Node& node : graph.nodes) {
    if (node.op == "Conv" && node.inputs.size() > 3) {
      return Fail("node '" + node.name + "': Conv has " +
                  Count(static_cast<int>(node.inputs.size()), "input") +
                  ", expected 2 to 3 (ONNX Conv: X, W, optional B)");
    }
  }
  return Check();
}

Check InferShapes(Graph* graph) {
  BATON_ASSIGN_OR_RETURN(std::vector<int> order, graph->TopologicalOrder());
  BATON_ASSIGN_OR_RETURN(Values values, SeedValues(*graph));
  for (int n : order) {
    const Node& node = graph->nodes[n];
    if (IsPostprocessOp(node.op)) {
      BATON_TRY(InferPostprocessNode(graph, node));
      continue;
    }
    if (IsCustomOp(node.op)) {
      BATON_TRY(CheckCustomNode(*graph, node));
      continue;
    }
    const OpDef* def = FindOp(node.op);
    if (def == nullptr) return Fail("node '" + node.name + "': unsupported op '" + node.op + "'");
    BATON_TRY(CheckArity(node, *def));
    for (int t : node.inputs) {
      if (t >= 0 && !graph->tensors[t].shape_known) {
        return Fail("node '" + node.name + "': input '" + graph->tensors[t].name +
                    "' has unknown shape");
      }
    }
    if (def->infer == nullptr) {
      BATON_TRY(InferConstantNode(graph, node, &values));
      continue;
    }
    BATON_TRY(InferNode(graph, node, *def, values));
    BATON_TRY(PropagateValues(*graph, node, *def, &values));
  }
  return Check();
}

}  // namespace baton::planner
