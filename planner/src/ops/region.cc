// `__subgraph`: a region of nodes run by a foreign runtime (issue 16,
// passes/regions.h). FormRegions creates these nodes after shape inference,
// so they are never inferred, folded or imported.

#include "baton/planner/passes/regions.h"
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

}  // namespace baton::planner
