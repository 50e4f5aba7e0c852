#include "baton/planner/emit/lower.h"

#include <algorithm>

namespace baton::planner {

Result<schema::Op> OpFromName(const std::string& op) {
  if (IsCustomOp(op)) return schema::Op::Custom;
  const OpDef* def = FindOp(op);
  if (def == nullptr || !def->has_kernel) {
    return Fail("op '" + op + "' has no runtime kernel (constant-fold it or remove it)");
  }
  return def->kernel_op;
}

std::vector<int> RuntimeInputs(const Graph& g, const Node& n) {
  (void)g;
  const OpDef* def = IsCustomOp(n.op) ? nullptr : FindOp(n.op);
  size_t keep = 1;
  if (IsCustomOp(n.op) || (def != nullptr && def->kernel_inputs == kAllInputs)) {
    keep = n.inputs.size();
  } else if (def != nullptr) {
    keep = static_cast<size_t>(def->kernel_inputs);
  }
  std::vector<int> out(n.inputs.begin(),
                       n.inputs.begin() + static_cast<std::ptrdiff_t>(std::min(keep, n.inputs.size())));
  while (!out.empty() && out.back() < 0) out.pop_back();
  return out;
}

Result<LoweredParams> LowerParams(flatbuffers::FlatBufferBuilder* b, const Graph& g,
                                  const Node& n) {
  if (IsCustomOp(n.op)) return LowerCustomParams(b, n.op, n.attrs);
  const OpDef* def = FindOp(n.op);
  if (def == nullptr || def->lower == nullptr) return LoweredParams();
  return def->lower(b, g, n);
}

}  // namespace baton::planner
