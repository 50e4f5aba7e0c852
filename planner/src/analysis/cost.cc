#include "baton/planner/analysis/cost.h"

#include <algorithm>

#include "baton/parallel.h"
#include "baton/planner/analysis/inspect.h"
#include "baton/postprocess.h"
#include "baton/planner/graph.h"
#include "baton/planner/ops/op_def.h"
#include "baton/planner/ops/region.h"
#include "ops/op_util.h"

namespace baton::planner {
namespace {

double Elements(const schema::Tensor* t) {
  double count = 1;
  if (t->shape() != nullptr) {
    for (int64_t d : *t->shape()) count *= static_cast<double>(d);
  }
  return count;
}

std::string Name(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

}  // namespace

double NodeMacs(const schema::Plan& plan, uint32_t index) {
  const schema::Node* node = plan.nodes()->Get(index);
  if (node->outputs() == nullptr || node->outputs()->size() == 0) return 0;
  const double out = Elements(plan.tensors()->Get(node->outputs()->Get(0)));
  // Baton's NonMaxSuppression scans every score once (docs/operators.md);
  // its other work (top-k heaps, NMS of the kept candidates) is smaller.
  const schema::CustomParams* custom = node->params_as_CustomParams();
  if (custom != nullptr && custom->name() != nullptr &&
      custom->name()->str() == kNonMaxSuppressionOp && node->inputs() != nullptr &&
      node->inputs()->size() == 2 && node->inputs()->Get(1) >= 0) {
    return Elements(plan.tensors()->Get(static_cast<uint32_t>(node->inputs()->Get(1))));
  }
  const OpDef* def = FindOp(node->op());
  if (def == nullptr || def->macs == nullptr) return out;
  return def->macs(plan, *node, out);
}

double NodeBytes(const schema::Plan& plan, uint32_t index) {
  const schema::Node* node = plan.nodes()->Get(index);
  double bytes = 0;
  if (node->inputs() != nullptr) {
    for (int32_t t : *node->inputs()) {
      if (t >= 0)
        bytes += static_cast<double>(plan.tensors()->Get(static_cast<uint32_t>(t))->bytes());
    }
  }
  if (node->outputs() != nullptr) {
    for (uint32_t t : *node->outputs())
      bytes += static_cast<double>(plan.tensors()->Get(t)->bytes());
  }
  return bytes;
}

double DeviceSeconds(const Cost& cost, double macs, double bytes, uint32_t threads) {
  return cost.launch_s +
         std::max(macs / cost.macs_per_s, bytes / cost.bytes_per_s) / ParallelSpeedup(threads);
}

const char* CostSourceName(CostSource source) {
  switch (source) {
    case CostSource::kProfile: return "profile";
    case CostSource::kLink: return "link";
    case CostSource::kTarget: break;
  }
  return "target";
}

namespace {

OperandSignature Operand(const schema::Plan& plan, int64_t t) {
  OperandSignature s;
  if (t < 0) {
    s.present = false;
    return s;
  }
  const schema::Tensor* tensor = plan.tensors()->Get(static_cast<uint32_t>(t));
  s.dtype = DTypeName(tensor->dtype());
  if (tensor->shape() != nullptr) s.shape.assign(tensor->shape()->begin(), tensor->shape()->end());
  return s;
}

}  // namespace

void NodeOperandSignatures(const schema::Plan& plan, uint32_t index,
                           std::vector<OperandSignature>* out_inputs,
                           std::vector<OperandSignature>* out_outputs) {
  const schema::Node* node = plan.nodes()->Get(index);
  out_inputs->clear();
  out_outputs->clear();
  if (node->inputs() != nullptr) {
    for (int32_t t : *node->inputs()) out_inputs->push_back(Operand(plan, t));
  }
  if (node->outputs() != nullptr) {
    for (uint32_t t : *node->outputs()) out_outputs->push_back(Operand(plan, t));
  }
}

std::string NodeSignature(const schema::Plan& plan, uint32_t index) {
  std::vector<OperandSignature> inputs, outputs;
  NodeOperandSignatures(plan, index, &inputs, &outputs);
  const schema::Node* node = plan.nodes()->Get(index);
  const std::string op = node->params_as_CustomParams() != nullptr
                             ? PlanNodeOpName(*node)
                             : std::string(schema::EnumNameOp(node->op()));
  return NodeSignatureText(op, inputs, outputs);
}

Result<std::vector<double>> NodeSeconds(const schema::Plan& plan, const Target& target) {
  BATON_ASSIGN_OR_RETURN(NodeCosts costs, NodeCostsOf(plan, target));
  return std::move(costs.seconds);
}

Result<NodeCosts> NodeCostsOf(const schema::Plan& plan, const Target& target) {
  const uint32_t num_queues = plan.queues() ? plan.queues()->size() : 0;
  const uint32_t num_nodes = plan.nodes() ? plan.nodes()->size() : 0;
  const std::string where = "target '" + target.name + "'";
  // Queue -> target device (-1 for a DMA engine).
  std::vector<int> device(num_queues, -1);
  for (uint32_t q = 0; q < num_queues; ++q) {
    const schema::Queue* queue = plan.queues()->Get(q);
    const std::string name = Name(queue->name());
    const int d = target.FindDevice(name);
    if (d >= 0) {
      if (target.devices[d].kind != queue->kind()) {
        return Fail("plan queue '" + name + "' is a " + DeviceKindName(queue->kind()) +
                    " queue, but device '" + name + "' of " + where + " is a " +
                    DeviceKindName(target.devices[d].kind));
      }
      device[q] = d;
      continue;
    }
    if (queue->kind() != schema::DeviceKind::Dma) {
      return Fail("plan queue '" + name + "' (" + DeviceKindName(queue->kind()) +
                  ") has no device of that name in " + where);
    }
    const bool named = std::any_of(target.links.begin(), target.links.end(),
                                   [&name](const TargetLink& l) { return l.queue == name; });
    if (!named) {
      return Fail("plan queue '" + name + "' (dma) is not the queue of any link in " + where);
    }
  }
  // Plan domain -> target domain (-1 when the target has no such domain).
  const uint32_t num_domains = plan.domains() ? plan.domains()->size() : 0;
  std::vector<int> domain(num_domains, -1);
  for (uint32_t d = 0; d < num_domains; ++d) {
    domain[d] = target.FindDomain(Name(plan.domains()->Get(d)->name()));
  }

  std::vector<double> seconds(num_nodes, 0);
  std::vector<CostSource> source(num_nodes, CostSource::kTarget);
  for (uint32_t n = 0; n < num_nodes; ++n) {
    const schema::Node* node = plan.nodes()->Get(n);
    const uint32_t q = node->queue();
    const std::string node_name = "node '" + Name(node->name()) + "'";
    if (node->op() == schema::Op::Copy) {
      const schema::Tensor* in = internal::PlanInput(plan, *node, 0);
      const schema::Tensor* out = node->outputs() && node->outputs()->size() > 0
                                      ? plan.tensors()->Get(node->outputs()->Get(0))
                                      : nullptr;
      if (in == nullptr || out == nullptr)
        return Fail(node_name + ": a copy needs an input and an output");
      if (in->storage() == schema::Storage::Arena && out->storage() == schema::Storage::Arena &&
          in->domain() != out->domain()) {
        const std::string from = Name(plan.domains()->Get(in->domain())->name());
        const std::string to = Name(plan.domains()->Get(out->domain())->name());
        if (domain[in->domain()] < 0 || domain[out->domain()] < 0) {
          return Fail(node_name + ": copies from domain '" + from + "' to '" + to + "', but " +
                      where + " lacks '" + (domain[in->domain()] < 0 ? from : to) + "'");
        }
        const TargetLink* link = target.FindLink(domain[in->domain()], domain[out->domain()]);
        if (link != nullptr) {
          seconds[n] = link->latency_s + static_cast<double>(out->bytes()) / link->bytes_per_s;
          source[n] = CostSource::kLink;
          continue;
        }
        if (device[q] < 0) {
          return Fail(node_name + ": " + where + " has no link from '" + from + "' to '" + to +
                      "' for DMA queue '" + Name(plan.queues()->Get(q)->name()) + "'");
        }
      } else if (device[q] < 0) {
        return Fail(node_name + ": a copy without a source domain cannot run on DMA queue '" +
                    Name(plan.queues()->Get(q)->name()) + "'");
      }
    } else if (device[q] < 0) {
      return Fail(node_name + ": op " + schema::EnumNameOp(node->op()) + " on DMA queue '" +
                  Name(plan.queues()->Get(q)->name()) + "'; a DMA engine only runs copies");
    }
    const TargetDevice& dev = target.devices[device[q]];
    if (target.profile != nullptr && node->op() != schema::Op::Copy) {
      std::optional<double> measured =
          target.profile->Seconds(NodeSignature(plan, n), dev.kind, dev.name);
      if (measured) {
        seconds[n] = *measured;
        source[n] = CostSource::kProfile;
        continue;
      }
    }
    auto op_cost = dev.op_costs.find(PlanNodeOpName(*node));
    if (op_cost != dev.op_costs.end()) {
      double elements = 0;
      if (node->outputs() != nullptr) {
        for (uint32_t t : *node->outputs()) elements += Elements(plan.tensors()->Get(t));
      }
      seconds[n] = op_cost->second.seconds + op_cost->second.per_element_s * elements;
      continue;
    }
    if (node->op() == schema::Op::Subgraph) {
      // A foreign-runtime region: its nodes' costs on the device, one launch.
      std::optional<PlanRegion> region = ReadPlanRegion(*node);
      if (region && !region->node_macs.empty() &&
          region->node_macs.size() == region->node_bytes.size()) {
        double s = dev.cost.launch_s;
        for (size_t i = 0; i < region->node_macs.size(); ++i) {
          s += DeviceSeconds(dev.cost, static_cast<double>(region->node_macs[i]),
                             static_cast<double>(region->node_bytes[i])) -
               dev.cost.launch_s;
        }
        seconds[n] = s;
        continue;
      }
    }
    seconds[n] = DeviceSeconds(dev.cost, NodeMacs(plan, n), NodeBytes(plan, n),
                               OpSplitsAcrossThreads(node->op()) ? dev.threads : 1);
  }
  return NodeCosts{std::move(seconds), std::move(source)};
}

}  // namespace baton::planner
