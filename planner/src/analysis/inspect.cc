// LoadedPlan, the plan's names and InspectJson (inspect.h). InspectText is in
// inspect_text.cc.
#include "baton/planner/analysis/inspect.h"

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "analysis/inspect_internal.h"
#include "baton/planner/io/npy.h"
#include "baton/planner/ops/region.h"
#include "baton/planner/target.h"

namespace baton::planner {
namespace {

using inspect_detail::ChecksumHex;
using inspect_detail::DomainName;
using inspect_detail::QueueName;
using ojson = nlohmann::ordered_json;

// A JSON array of element(k) for k in [0, count).
template <typename Element>
ojson ArrayOf(uint32_t count, Element element) {
  ojson out = ojson::array();
  for (uint32_t k = 0; k < count; ++k) out.push_back(element(k));
  return out;
}

// A JSON array of element(x) for each x of a FlatBuffers vector; empty when
// the vector is absent.
template <typename T, typename Element>
ojson ListOf(const flatbuffers::Vector<T>* list, Element element) {
  ojson out = ojson::array();
  if (list == nullptr) return out;
  for (auto x : *list) out.push_back(element(x));
  return out;
}

ojson Index(uint32_t i) { return ojson(i); }

ojson DomainJson(const PlanView& view, uint32_t d) {
  const schema::Domain* domain = view.domain(d);
  ojson o;
  o["name"] = domain->name()->str();
  o["bytes"] = domain->bytes();
  o["alignment"] = domain->alignment();
  return o;
}

ojson QueueJson(const PlanView& view, uint32_t q) {
  const schema::Queue* queue = view.queue(q);
  ojson o;
  o["name"] = queue->name()->str();
  o["kind"] = DeviceKindName(queue->kind());
  o["domains"] = ListOf(queue->domains(), [&view](uint32_t d) { return DomainName(view, d); });
  if (queue->threads() > 1) o["threads"] = queue->threads();  // issue 17; absent when 1
  return o;
}

ojson TensorJson(const PlanView& view, uint32_t t) {
  const schema::Tensor* tensor = view.tensor(t);
  const bool arena = tensor->storage() == schema::Storage::Arena;
  ojson o;
  o["id"] = t;
  o["name"] = tensor->name()->str();
  o["dtype"] = PlanDTypeName(tensor->dtype());
  o["shape"] = ListOf(tensor->shape(), [](int64_t dim) { return ojson(dim); });
  o["bytes"] = tensor->bytes();
  o["storage"] = arena ? "arena" : "constant";
  o["domain"] = arena ? ojson(DomainName(view, tensor->domain())) : ojson(nullptr);
  o["offset"] = arena ? ojson(tensor->offset()) : ojson(nullptr);
  o["slots"] = tensor->slots();
  o["slot_stride"] = tensor->slot_stride();
  return o;
}

ojson NodeJson(const PlanView& view, uint32_t n) {
  const schema::Node* node = view.node(n);
  ojson o;
  o["id"] = n;
  o["name"] = node->name()->str();
  o["op"] = PlanNodeOpName(*node);
  o["queue"] = QueueName(view, node->queue());
  o["position"] = node->position();
  o["stage"] = node->stage();
  // An absent optional input stays in place as null (inspect.h).
  o["inputs"] = ListOf(node->inputs(), [](int32_t t) { return t < 0 ? ojson(nullptr) : ojson(t); });
  o["outputs"] = ListOf(node->outputs(), Index);
  o["workspace"] = ListOf(node->workspace(), Index);
  o["waits"] = ListOf(node->waits(), [](const schema::Wait* w) {
    ojson wait;
    wait["node"] = w->node();
    wait["lag"] = w->lag();
    return wait;
  });
  if (node->op() == schema::Op::Custom) {
    o["attributes"] = inspect_detail::CustomAttributesJson(*node);
  }
  // A foreign-runtime region (docs/cli.md).
  if (std::optional<PlanRegion> region = ReadPlanRegion(*node)) {
    ojson r;
    r["runtime"] = region->runtime;
    r["nodes"] = region->nodes;
    r["model_bytes"] = region->model_bytes;
    o["region"] = r;
  }
  return o;
}

}  // namespace

Result<LoadedPlan> LoadedPlan::FromBytes(const void* data, size_t size, const std::string& what) {
  LoadedPlan plan;
  plan.storage_.resize((size + sizeof(Block) - 1) / sizeof(Block));
  if (size > 0) std::memcpy(plan.storage_.data(), data, size);
  plan.size_ = size;
  LoadError error;
  const Status status = PlanView::Load(plan.storage_.data(), size, &plan.view_, &error);
  if (!status.ok()) return Fail(what + ": invalid plan: " + error.text);
  return plan;
}

Result<LoadedPlan> LoadedPlan::FromFile(const std::string& path) {
  BATON_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return FromBytes(bytes.data(), bytes.size(), path);
}

namespace inspect_detail {

std::string ChecksumHex(uint32_t checksum) {
  char text[11];
  std::snprintf(text, sizeof(text), "0x%08x", checksum);
  return text;
}

}  // namespace inspect_detail

const char* PlanOpName(schema::Op op) {
  if (op == schema::Op::Copy) return "__copy";
  if (op == schema::Op::Subgraph) return kSubgraphOp;
  return schema::EnumNameOp(op);
}

const char* PlanDTypeName(schema::DType dtype) {
  switch (dtype) {
    case schema::DType::Float32:
      return "float32";
    case schema::DType::Int32:
      return "int32";
    case schema::DType::Int64:
      return "int64";
    case schema::DType::UInt8:
      return "uint8";
    case schema::DType::Int8:
      return "int8";
    case schema::DType::Bool:
      return "bool";
  }
  return "?";
}

std::string InspectJson(const LoadedPlan& loaded) {
  const PlanView& view = loaded.view();
  ojson root;
  root["format"] = "baton-plan";
  root["version"] = 1;
  root["inferences_in_flight"] = view.in_flight();
  root["domains"] =
      ArrayOf(view.num_domains(), [&view](uint32_t d) { return DomainJson(view, d); });
  root["queues"] = ArrayOf(view.num_queues(), [&view](uint32_t q) { return QueueJson(view, q); });
  root["tensors"] =
      ArrayOf(view.num_tensors(), [&view](uint32_t t) { return TensorJson(view, t); });
  root["nodes"] = ArrayOf(view.num_nodes(), [&view](uint32_t n) { return NodeJson(view, n); });
  root["inputs"] = ListOf(view.plan()->inputs(), Index);
  root["outputs"] = ListOf(view.plan()->outputs(), Index);
  root["summary"] = ojson::parse(inspect_detail::SummaryJsonText(view, loaded.data(), loaded.size()));
  root["checksum"] = ChecksumHex(view.checksum());
  return root.dump(2) + "\n";
}

}  // namespace baton::planner
