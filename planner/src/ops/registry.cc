// FindOp over every family table of families.h.

#include <map>
#include <string>

#include "baton/planner/ops/op_def.h"
#include "ops/families.h"

namespace baton::planner {
namespace {

#define BATON_LIST_OP_FAMILY(name) &k##name##Ops,
const OpFamily* const kFamilies[] = {BATON_OP_FAMILIES(BATON_LIST_OP_FAMILY)};
#undef BATON_LIST_OP_FAMILY

struct Index {
  std::vector<const OpDef*> all;
  std::map<std::string, const OpDef*> by_name;
  std::map<schema::Op, const OpDef*> by_kernel;
};

const Index& GetIndex() {
  static const Index index = [] {
    Index i;
    for (const OpFamily* family : kFamilies) {
      for (size_t k = 0; k < family->count; ++k) {
        const OpDef* def = &family->ops[k];
        i.all.push_back(def);
        i.by_name.emplace(def->name, def);
        if (def->has_kernel) i.by_kernel.emplace(def->kernel_op, def);
      }
    }
    return i;
  }();
  return index;
}

}  // namespace

const OpDef* FindOp(const std::string& op) {
  const auto& by_name = GetIndex().by_name;
  auto it = by_name.find(op);
  return it == by_name.end() ? nullptr : it->second;
}

const OpDef* FindOp(schema::Op op) {
  const auto& by_kernel = GetIndex().by_kernel;
  auto it = by_kernel.find(op);
  return it == by_kernel.end() ? nullptr : it->second;
}

std::vector<const OpDef*> AllOps() { return GetIndex().all; }

}  // namespace baton::planner
