// `__subgraph`: a region of nodes run by a foreign runtime (issue 16,
// ops/region.h). FormRegions (passes/regions.h) creates these nodes after
// shape inference, so they are never inferred, folded or imported.

#include "baton/planner/ops/region.h"

#include <map>

#include "baton/custom_op.h"
#include "baton/planner/ops/custom_params.h"
#include "ops/families.h"
#include "ops/infer_context.h"

namespace baton::planner {
namespace {

Check InferSubgraph(InferContext& c) {
  return c.Err("is a foreign-runtime region; regions are formed after shape inference");
}

// The region's multiply-accumulates: the sum over its nodes. (The cost
// model costs a region node by node, analysis/cost.cc.)
double SubgraphMacs(const schema::Plan&, const schema::Node& node, double) {
  std::optional<PlanRegion> region = ReadPlanRegion(node);
  double macs = 0;
  if (region) {
    for (float m : region->node_macs) macs += static_cast<double>(m);
  }
  return macs;
}

// name, inputs min..max, outputs min..max, infer, has_kernel, kernel op,
// kernel inputs, lower, macs, eval, eval_reads_shapes_only
// clang-format off
const OpDef kOps[] = {
    {kSubgraphOp, 0, kUnbounded, 1, kUnbounded, InferSubgraph, true, schema::Op::Subgraph, kAllInputs, LowerSubgraph, SubgraphMacs, nullptr, false},
};
// clang-format on

}  // namespace

const OpFamily kRegionOps = {kOps, sizeof(kOps) / sizeof(kOps[0])};

// CustomParams{name = the runtime, attributes = the node's other attributes}.
Result<LoweredParams> LowerSubgraph(flatbuffers::FlatBufferBuilder* b, const Graph& graph,
                                    const Node& node) {
  (void)graph;
  const Attr* runtime = node.FindAttr(kRegionRuntimeAttr);
  const Attr* model = node.FindAttr(kRegionModelAttr);
  const Attr* names = node.FindAttr(kRegionNodesAttr);
  const Attr* macs = node.FindAttr(kRegionMacsAttr);
  const Attr* bytes = node.FindAttr(kRegionBytesAttr);
  if (runtime == nullptr || runtime->kind != Attr::Kind::kString || model == nullptr ||
      model->kind != Attr::Kind::kTensor || names == nullptr ||
      names->kind != Attr::Kind::kStrings || macs == nullptr || bytes == nullptr) {
    return Fail("node '" + node.name + "': a __subgraph node without its region attributes");
  }
  std::map<std::string, Attr> attrs = node.attrs;
  attrs.erase(kRegionRuntimeAttr);
  return LowerCustomParams(b, runtime->s, attrs);
}

std::optional<PlanRegion> ReadPlanRegion(const schema::Node& node) {
  if (node.op() != schema::Op::Subgraph) return std::nullopt;
  CustomAttributes attrs;
  if (!CustomAttributes::Load(node, &attrs).ok()) return std::nullopt;
  PlanRegion r;
  r.runtime = attrs.op_name();
  CustomAttributes::TensorValue model;
  if (attrs.Tensor(kRegionModelAttr, &model)) r.model_bytes = model.bytes;
  if (const schema::Attribute* a = attrs.Find(kRegionNodesAttr)) {
    if (a->kind() == schema::AttributeKind::Strings && a->strings() != nullptr) {
      for (const auto* s : *a->strings()) r.nodes.push_back(s->str());
    }
  }
  for (const auto& [key, out] : {std::pair{kRegionMacsAttr, &r.node_macs},
                                 std::pair{kRegionBytesAttr, &r.node_bytes}}) {
    const int32_t count = attrs.Floats(key, nullptr, 0);
    if (count > 0) {
      out->resize(static_cast<size_t>(count));
      attrs.Floats(key, out->data(), static_cast<uint32_t>(count));
    }
  }
  return r;
}

}  // namespace baton::planner
