#include "ops/op_util.h"

#include <algorithm>

#include "ops/eval_host.h"

namespace baton::planner::internal {

std::string NodeWhere(const Node& node) { return "node '" + node.name + "' (" + node.op + ")"; }

std::vector<int32_t> I32(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

const Tensor& InputTensor(const Graph& graph, const Node& node, int k) {
  return graph.tensors[node.inputs[k]];
}

const Tensor* ConstInput(const Graph& graph, const Node& node, int k) {
  if (!HasInput(node, k)) return nullptr;
  const Tensor& t = InputTensor(graph, node, k);
  return t.is_constant ? &t : nullptr;
}

std::unique_ptr<schema::Clamp> FusedClamp(const Node& node) {
  if (!node.clamp) return nullptr;
  return std::make_unique<schema::Clamp>(node.clamp->first, node.clamp->second);
}

schema::FusedActivation FusedActivationOf(const Node& node) {
  if (node.activation == "HardSwish") return schema::FusedActivation::HardSwish;
  if (node.activation == "Swish") return schema::FusedActivation::Swish;
  if (node.activation == "HardSigmoid") return schema::FusedActivation::HardSigmoid;
  if (node.activation == "Sigmoid") return schema::FusedActivation::Sigmoid;
  return schema::FusedActivation::None;
}

Result<Window> LowerWindow(const Graph& graph, const Node& node,
                           const std::vector<int64_t>& kernel) {
  const std::string where = NodeWhere(node);
  const Tensor& x = InputTensor(graph, node, 0);
  const size_t r = x.shape.size() - 2;
  if (kernel.size() != r) return Fail(where + ": kernel rank does not match the input");
  // An empty list means the ONNX default of ones, as when absent.
  std::vector<int64_t> strides = node.GetInts("strides");
  if (strides.empty()) strides.assign(r, 1);
  std::vector<int64_t> dilations = node.GetInts("dilations");
  if (dilations.empty()) dilations.assign(r, 1);
  if (strides.size() != r || dilations.size() != r) {
    return Fail(where + ": strides/dilations rank does not match the input");
  }
  const std::vector<int64_t> spatial(x.shape.begin() + 2, x.shape.end());
  auto pads = ResolvePads(node, spatial, kernel, strides, dilations);
  if (!pads.ok()) return Fail(where + ": " + pads.error());
  return Window{I32(kernel), I32(strides), I32(*pads), I32(dilations)};
}

Result<LoweredParams> LowerAxis(flatbuffers::FlatBufferBuilder* builder, const Graph& graph,
                                const Node& node, int64_t default_axis, bool check_range) {
  const size_t rank = InputTensor(graph, node, 0).shape.size();
  const int64_t axis = NormalizeAxis(node.GetInt("axis", default_axis), rank);
  if (check_range && (axis < 0 || axis >= static_cast<int64_t>(std::max<size_t>(rank, 1)))) {
    return Fail(NodeWhere(node) + ": axis out of range");
  }
  LoweredParams out;
  out.type = schema::Params::AxisParams;
  out.offset = schema::CreateAxisParams(*builder, static_cast<int32_t>(axis)).Union();
  return out;
}

const schema::Tensor* PlanInput(const schema::Plan& plan, const schema::Node& node,
                                uint32_t index) {
  if (node.inputs() == nullptr || index >= node.inputs()->size()) return nullptr;
  const int32_t t = node.inputs()->Get(index);
  return t < 0 ? nullptr : plan.tensors()->Get(static_cast<uint32_t>(t));
}

double PlanDim(const schema::Tensor* t, int index) {
  if (t == nullptr || t->shape() == nullptr) return 0;
  const int rank = static_cast<int>(t->shape()->size());
  if (index < 0) index += rank;
  if (index < 0 || index >= rank) return 0;
  return static_cast<double>(t->shape()->Get(static_cast<uint32_t>(index)));
}

}  // namespace baton::planner::internal
