#include "baton/planner/planner.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "baton/custom_op.h"
#include "baton/executor.h"
#include "baton/postprocess.h"
#include "baton/planner/analysis/cost.h"
#include "baton/planner/passes/copies.h"
#include "baton/planner/passes/regions.h"
#include "baton/planner/analysis/inspect.h"
#include "baton/planner/analysis/sim.h"
#include "baton/planner/emit/emit.h"
#include "baton/planner/import/simplify.h"
#include "baton/planner/ops/postprocess.h"
#include "baton/planner/memory/memory.h"
#include "baton/planner/passes/copies.h"
#include "baton/planner/passes/schedule.h"
#include "baton/planner/passes/winograd_weights.h"
#include "planner_internal.h"

namespace baton::planner {
namespace internal {

Result<SimResult> SimulateProgram(const Program& p, uint32_t inferences) {
  BATON_ASSIGN_OR_RETURN(std::string bytes, EmitPlan(p));
  BATON_ASSIGN_OR_RETURN(LoadedPlan plan,
                         LoadedPlan::FromBytes(bytes.data(), bytes.size(), "internal: emitted plan"));
  return Simulate(plan.view(), p.target, inferences);
}

Result<Program> FinishProgram(const Program& p, const std::vector<int>* order,
                              double pack_time_limit_s, bool with_bounds,
                              const std::vector<uint64_t>* workspace_bytes, bool estimate_memory) {
  Program q = p;
  BATON_TRY(Schedule(&q, order));
  BATON_TRY(PlanWorkspace(&q, workspace_bytes));
  BATON_TRY(PlanMemory(&q, pack_time_limit_s, with_bounds, estimate_memory));
  PruneWaits(&q);
  return q;
}

}  // namespace internal

namespace {

using internal::FinishProgram;
using internal::SimulateProgram;

constexpr uint32_t kProfileInferences = 48;

Result<double> SimulatedThroughput(const Program& p) {
  BATON_ASSIGN_OR_RETURN(SimResult r, SimulateProgram(p, kProfileInferences));
  return r.throughput_per_s;
}

// Mean time, relative to its inference's iteration slot, at which each plan
// node (by position in p.order) became ready in the simulated steady state
// (second half of the run): inference admitted, producers and waited nodes
// finished.
std::vector<double> MeanReadyTimes(const Program& p, const SimResult& r) {
  const double period = 1.0 / r.throughput_per_s;
  const size_t nodes = p.order.size();
  std::vector<int> plan_index(nodes);
  for (size_t k = 0; k < nodes; ++k) plan_index[p.order[k]] = static_cast<int>(k);
  // end[plan node][inference]
  std::vector<std::vector<double>> end(nodes, std::vector<double>(r.inferences, -1));
  for (const SimInstance& inst : r.instances) end[inst.node][inst.inference] = inst.end_s;
  std::vector<int> producer = p.graph.Producers();
  std::vector<double> sum(nodes, 0);
  std::vector<int> count(nodes, 0);
  for (uint32_t i = r.inferences / 2; i < r.inferences; ++i) {
    for (size_t k = 0; k < nodes; ++k) {
      const int n = p.order[k];
      double ready = r.admitted_s[i];
      for (int t : p.graph.nodes[n].inputs) {
        if (t >= 0 && producer[t] >= 0) ready = std::max(ready, end[plan_index[producer[t]]][i]);
      }
      for (const WaitEdge& w : p.waits[n]) {
        if (static_cast<int64_t>(i) - w.lag >= 0) {
          ready = std::max(ready, end[plan_index[w.node]][i - static_cast<uint32_t>(w.lag)]);
        }
      }
      sum[k] += ready - (static_cast<double>(i) + p.node_stage[n]) * period;
      ++count[k];
    }
  }
  std::vector<double> mean(nodes);
  for (size_t k = 0; k < nodes; ++k) mean[k] = count[k] ? sum[k] / count[k] : 0;
  return mean;
}

// Moves each node's same-stage producers before it, keeping the order
// otherwise (a stable topological repair).
void KeepProducersFirst(const Program& p, std::vector<int>* order) {
  const std::vector<int> producer = p.graph.Producers();
  const size_t nodes = order->size();
  std::vector<int> pos(nodes);
  for (size_t k = 0; k < nodes; ++k) pos[(*order)[k]] = static_cast<int>(k);
  bool moved = true;
  while (moved) {
    moved = false;
    for (size_t k = 0; k < nodes && !moved; ++k) {
      const int n = (*order)[k];
      for (int t : p.graph.nodes[n].inputs) {
        if (t < 0 || producer[t] < 0) continue;
        const int m = producer[t];
        if (p.node_stage[m] == p.node_stage[n] && pos[m] > pos[n]) {
          order->erase(order->begin() + pos[m]);
          order->insert(order->begin() + static_cast<std::ptrdiff_t>(k), m);
          for (size_t j = 0; j < nodes; ++j) pos[(*order)[j]] = static_cast<int>(j);
          moved = true;
          break;
        }
      }
    }
  }
}

// Nodes sorted by the mean time within an iteration at which they became
// ready in the simulation, ties by current order. Start times would only
// replay the current order; ready times show what a queue should run first.
Result<std::vector<int>> ProfiledOrder(const Program& p) {
  BATON_ASSIGN_OR_RETURN(SimResult r, SimulateProgram(p, kProfileInferences));
  if (r.throughput_per_s <= 0) return p.order;
  const std::vector<double> ready = MeanReadyTimes(p, r);
  std::vector<int> index(ready.size());
  for (size_t k = 0; k < index.size(); ++k) index[k] = static_cast<int>(k);
  std::stable_sort(index.begin(), index.end(), [&](int a, int b) { return ready[a] < ready[b]; });
  std::vector<int> order;
  for (int k : index) order.push_back(p.order[k]);
  // Same-stage producers must stay first (a consumer can only look ready
  // after its producer ends, but keep the guarantee explicit).
  KeepProducersFirst(p, &order);
  return order;
}

}  // namespace

Result<Program> internal::RefineOrder(const Program& staged, Program best,
                                      double pack_time_limit_s, bool with_bounds,
                                      const std::vector<uint64_t>* workspace_bytes,
                                      bool estimate_memory) {
  // Profile-guided program order: replay the plan on the target's cost
  // model, then order every queue by when its nodes actually start within
  // an iteration, so a queue does not hold back work another device waits
  // for (e.g. a DMA engine prefetching the next input behind a copy that
  // waits on the current one). Kept only when the simulation improves.
  BATON_ASSIGN_OR_RETURN(double throughput, SimulatedThroughput(best));
  for (int round = 0; round < 3; ++round) {
    BATON_ASSIGN_OR_RETURN(std::vector<int> order, ProfiledOrder(best));
    if (order == best.order) break;
    Result<Program> candidate =
        FinishProgram(staged, &order, pack_time_limit_s, with_bounds, workspace_bytes,
                      estimate_memory);
    if (!candidate.ok()) break;
    BATON_ASSIGN_OR_RETURN(double t, SimulatedThroughput(candidate.value()));
    if (!(t > throughput * 1.005)) break;
    best = std::move(candidate).value();
    throughput = t;
  }
  return best;
}

namespace {

Result<Program> PlanRules(Program p, const PlanOptions& options);

bool HasRuntimeDevice(const Target& t) {
  for (const TargetDevice& d : t.devices) {
    if (!d.runtime.empty()) return true;
  }
  return false;
}

// Merges the nodes on runtime devices into `__subgraph` regions
// (passes/regions.h), each costed by its nodes' work.
Check FormRuntimeRegions(Program* p) {
  bool any = false;
  for (int d : p->node_device) any = any || (d >= 0 && !p->target.devices[d].runtime.empty());
  if (!any) return Check();
  // A runtime's Conv has no use for Winograd weights (input 4): the region
  // carries the ONNX node, and the plan leaves U out.
  for (size_t n = 0; n < p->graph.nodes.size(); ++n) {
    Node& node = p->graph.nodes[n];
    const int d = p->node_device[n];
    if (d < 0 || p->target.devices[d].runtime.empty() || node.op != "Conv") continue;
    if (node.inputs.size() > 4) node.inputs.resize(4);
    while (node.inputs.size() > 2 && node.inputs.back() < 0) node.inputs.pop_back();
  }
  BATON_ASSIGN_OR_RETURN(internal::NodeWork work, internal::BaseWork(internal::WithoutWeights(*p)));
  BATON_TRY(FormRegions(work.macs, work.bytes, p));
  for (const Node& n : p->graph.nodes) {
    if (n.op != kSubgraphOp || n.inputs.size() + n.outputs.size() <= kMaxNodeTensors) continue;
    return Fail("region '" + n.name + "' (runtime " + n.GetString("runtime", "") + ") has " +
                std::to_string(n.inputs.size()) + " inputs and " +
                std::to_string(n.outputs.size()) + " outputs; the runtime supports at most " +
                std::to_string(kMaxNodeTensors) +
                " per node (BATON_MAX_NODE_TENSORS): place fewer of its nodes on the device");
  }
  return Check();
}

// Simulates the finished plan and records what PlanSummary holds: the
// prediction, each queue's load, and where every node's cost came from.
Check Summarize(Program* p) {
  BATON_ASSIGN_OR_RETURN(std::string bytes, EmitPlan(*p));
  BATON_ASSIGN_OR_RETURN(LoadedPlan plan,
                         LoadedPlan::FromBytes(bytes.data(), bytes.size(), "internal: emitted plan"));
  BATON_ASSIGN_OR_RETURN(SimResult sim, Simulate(plan.view(), p->target, kProfileInferences));
  BATON_ASSIGN_OR_RETURN(NodeCosts costs, NodeCostsOf(*plan.view().plan(), p->target));
  PlanSummary& s = p->summary;
  s = PlanSummary();
  s.present = true;
  s.simulated_inferences = sim.inferences;
  s.throughput_per_s = sim.throughput_per_s;
  s.latency_s = sim.latency_mean_s;
  s.bound_throughput_per_s = sim.bound_throughput_per_s;
  for (size_t q = 0; q < sim.queue_busy_s.size(); ++q) {
    s.queue_busy_s.push_back(sim.inferences > 0 ? sim.queue_busy_s[q] / sim.inferences : 0.0);
    s.utilization.push_back(sim.utilization[q]);
    if (s.bottleneck_queue < 0 || sim.queue_busy_s[q] > sim.queue_busy_s[s.bottleneck_queue]) {
      s.bottleneck_queue = static_cast<int>(q);
    }
  }
  const size_t n_nodes = p->graph.nodes.size();
  s.node_cost_source.assign(n_nodes, "target");
  s.node_seconds.assign(n_nodes, 0.0);
  std::vector<std::string> signature(n_nodes);
  for (size_t k = 0; k < p->order.size(); ++k) {
    const int n = p->order[k];
    s.node_cost_source[n] = CostSourceName(costs.source[k]);
    s.node_seconds[n] = costs.seconds[k];
    if (p->target.profile != nullptr) signature[n] = NodeSignature(*plan.view().plan(), k);
  }
  if (p->target.profile != nullptr) {
    const Profile& profile = *p->target.profile;
    s.profile_entries = static_cast<int>(profile.entries.size());
    for (const ProfileEntry& e : profile.entries) {
      for (size_t n = 0; n < n_nodes; ++n) {
        if (p->graph.nodes[n].op == kCopyOp) continue;
        if (Profile::Matches(e, signature[n], p->queues[p->node_queue[n]].kind)) {
          ++s.profile_entries_matched;
          break;
        }
      }
    }
  }
  return {};
}

// What every plan needs and the runtime's fixed limits on a graph, checked
// before planning so that the error says what is wrong with the model.
Check CheckPlannable(const Graph& graph, const char* what) {
  if (graph.outputs.empty()) return Fail(std::string(what) + " has no outputs; nothing to compute");
  if (graph.nodes.empty()) {
    return Fail(std::string(what) + " has no nodes; every output is a graph input or a constant");
  }
  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (graph.outputs[i] == graph.outputs[j]) {
        return Fail("graph output '" + graph.tensors[graph.outputs[i]].name + "' is listed twice");
      }
    }
  }
  for (const Tensor& t : graph.tensors) {
    if (!t.shape_known) continue;
    if (t.shape.size() > kMaxRank) {
      return Fail("tensor '" + t.name + "' has rank " + std::to_string(t.shape.size()) +
                  "; the runtime supports at most " + std::to_string(kMaxRank) + " (BATON_MAX_RANK)");
    }
    if (!ShapeFits(t.shape)) return Fail("tensor '" + t.name + "' is too large (2^63 bytes or more)");
  }
  for (const Node& n : graph.nodes) {
    // Workspace tensors come on top; the runtime's loader has the last word.
    if (n.inputs.size() + n.outputs.size() > kMaxNodeTensors) {
      return Fail("node '" + n.name + "' has " + std::to_string(n.inputs.size() + n.outputs.size()) +
                  " inputs and outputs; the runtime supports at most " +
                  std::to_string(kMaxNodeTensors) + " per node (BATON_MAX_NODE_TENSORS)");
    }
  }
  if (graph.inputs.size() > kMaxGraphInputs) {
    return Fail(std::string(what) + " has " + std::to_string(graph.inputs.size()) +
                " inputs; the runtime supports at most " + std::to_string(kMaxGraphInputs) +
                " (kMaxGraphInputs in runtime/include/baton/config.h)");
  }
  return Check();
}

}  // namespace

Result<Program> PlanGraph(Graph graph, Target target, const PlanOptions& options) {
  if (options.in_flight < 1 || options.in_flight > static_cast<int>(kMaxInFlight)) {
    return Fail("--in-flight must be between 1 and " + std::to_string(kMaxInFlight));
  }
  if (options.max_in_flight < 1 || options.max_in_flight > static_cast<int>(kMaxInFlight)) {
    return Fail("--max-in-flight must be between 1 and " + std::to_string(kMaxInFlight));
  }
  if (options.objective != "throughput" && options.objective != "latency") {
    return Fail("--objective must be throughput or latency, not '" + options.objective + "'");
  }
  if (options.auto_partition && !options.split.empty()) {
    return Fail("--auto chooses the stages itself; drop --split");
  }
  if (target.domains.size() > kMaxDomains) {
    return Fail("target has " + std::to_string(target.domains.size()) +
                " domains; the runtime supports " + std::to_string(kMaxDomains) +
                " (BATON_MAX_DOMAINS)");
  }
  BATON_TRY(CheckPlannable(graph, "the graph"));
  BATON_TRY(Simplify(&graph));
  BATON_TRY(CheckPlannable(graph, "the simplified graph"));
  if (options.winograd_weights) BATON_TRY(AddWinogradWeights(&graph));
  Program p;
  p.graph = std::move(graph);
  p.target = std::move(target);
  p.in_flight = options.in_flight;
  BATON_TRY(AssignDevices(options.rules, &p));
  Result<Program> planned = Fail("internal: not planned");
  if (!options.auto_partition) {
    BATON_TRY(FormRuntimeRegions(&p));
    // A --split at a node inside a region splits at the region.
    PlanOptions rules = options;
    for (std::string& name : rules.split) {
      const std::string region = RegionHolding(p.graph, name);
      if (!region.empty()) name = region;
    }
    planned = PlanRules(std::move(p), rules);
  } else if (!HasRuntimeDevice(p.target)) {
    planned = internal::PlanAuto(std::move(p), options);
  } else {
    // --auto searches with the nodes of a runtime device costed one by one;
    // the devices it chooses are then planned with their regions merged
    // (stages chosen again by the rules path, which simulates them).
    Program assigned = p;
    planned = internal::PlanAuto(std::move(p), options);
    if (!planned.ok()) return planned;
    const size_t n_nodes = assigned.graph.nodes.size();
    assigned.node_device.assign(
        planned->node_device.begin(),
        planned->node_device.begin() + static_cast<std::ptrdiff_t>(n_nodes));
    bool on_runtime = false;
    for (int d : assigned.node_device) {
      on_runtime = on_runtime || (d >= 0 && !assigned.target.devices[d].runtime.empty());
    }
    if (on_runtime) {
      assigned.in_flight = planned->in_flight;
      AutoReport report = planned->auto_report;
      BATON_TRY(FormRuntimeRegions(&assigned));
      PlanOptions rules = options;
      rules.auto_partition = false;
      planned = PlanRules(std::move(assigned), rules);
      if (planned.ok()) planned->auto_report = std::move(report);
    }
  }
  if (!planned.ok()) return planned;
  BATON_TRY(Summarize(&planned.value()));
  return planned;
}

namespace {

Result<Program> PlanRules(Program p, const PlanOptions& options) {
  BATON_TRY(InsertCopies(&p));
  if (p.queues.size() > kMaxQueues) {
    return Fail("target has " + std::to_string(p.queues.size()) + " queues; the runtime supports " +
                std::to_string(kMaxQueues) + " (BATON_MAX_QUEUES)");
  }
  std::vector<int> order;
  if (options.split.empty() && p.in_flight > 1) {
    BATON_TRY(internal::ChooseStages(&p, &order));
  } else {
    BATON_TRY(AssignStages(options.split, &p));
  }
  BATON_ASSIGN_OR_RETURN(Program best, FinishProgram(p, order.empty() ? nullptr : &order,
                                                     options.pack_time_limit_s));
  if (p.num_stages > 1) {
    BATON_ASSIGN_OR_RETURN(best, internal::RefineOrder(p, std::move(best), options.pack_time_limit_s));
  }
  return best;
}

}  // namespace

namespace {

// Custom kernels come from the application; for the check, every custom op
// of the plan gets a stand-in whose prepare verifies the node's attribute
// buffer as a real kernel would (CustomAttributes::Load) and which never
// runs. Names point into the plan, which outlives the registry.
Check RegisterCustomStubs(const PlanView& view, KernelRegistry* registry) {
  Kernel stub;
  stub.prepare = [](const KernelCall& call) {
    CustomAttributes attrs;
    return CustomAttributes::Load(*call.node, &attrs);
  };
  stub.eval = [](const KernelCall&) {
    return BATON_ERROR(kUnimplemented, "planner stand-in for a custom kernel");
  };
  std::vector<std::pair<std::string, schema::DeviceKind>> done;
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    const schema::Node* node = view.node(n);
    const schema::CustomParams* custom = node->params_as_CustomParams();
    if (custom == nullptr) continue;
    // Baton's own post-processing ops: their real kernels are registered.
    if (IsPostprocessOp(custom->name()->str())) continue;
    const schema::DeviceKind kind = view.queue(node->queue())->kind();
    const std::pair<std::string, schema::DeviceKind> key(custom->name()->str(), kind);
    if (std::find(done.begin(), done.end(), key) != done.end()) continue;
    done.push_back(key);
    if (!registry->RegisterCustom(custom->name()->c_str(), kind, stub).ok()) {
      return Fail("the plan needs more than " + std::to_string(kMaxCustomKernels) +
                  " custom kernels (custom op, device kind), the runtime's "
                  "BATON_MAX_CUSTOM_KERNELS; at node '" +
                  node->name()->str() + "' (" + custom->name()->str() + ")");
    }
  }
  return {};
}

}  // namespace

Check VerifyWithRuntime(const std::string& plan_bytes) {
  BATON_ASSIGN_OR_RETURN(LoadedPlan plan,
                         LoadedPlan::FromBytes(plan_bytes.data(), plan_bytes.size(),
                                               "internal: the runtime rejects the plan"));
  const PlanView& view = plan.view();
  LoadError error;
  Status status;
  KernelRegistry registry;
  Status reg = RegisterReferenceKernels(&registry);
  if (!reg.ok()) return Fail(std::string("internal: ") + reg.message());
  // The post-processing kernels take custom-kernel slots: only when the plan
  // uses them, so the slot count below is the application's.
  bool postprocess = false;
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    const schema::CustomParams* custom = view.node(n)->params_as_CustomParams();
    postprocess = postprocess || (custom != nullptr && IsPostprocessOp(custom->name()->str()));
  }
  if (postprocess) {
    reg = RegisterPostprocessKernels(&registry);
    if (!reg.ok()) return Fail(std::string("internal: ") + reg.message());
  }
  BATON_TRY(RegisterCustomStubs(view, &registry));
  // Prepare every node against zero-sized dummy arenas: Init checks kernels
  // before touching memory only if arenas fit, so give it real-size views.
  std::vector<std::unique_ptr<uint8_t, decltype(&std::free)>> arenas;
  std::vector<Buffer> buffers;
  for (uint32_t d = 0; d < view.num_domains(); ++d) {
    size_t align = view.domain(d)->alignment() < 64 ? 64 : view.domain(d)->alignment();
    size_t bytes = (view.domain(d)->bytes() + align - 1) / align * align;
    arenas.emplace_back(static_cast<uint8_t*>(std::aligned_alloc(align, bytes ? bytes : align)), &std::free);
    buffers.push_back({arenas.back().get(), static_cast<size_t>(view.domain(d)->bytes())});
  }
  // A Subgraph node's kernel is a foreign runtime's plugin, which the port
  // registers (the planner does not link it): stand-ins that run nothing let
  // the loader check the rest of the plan.
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    const schema::Node* node = view.node(n);
    const schema::CustomParams* params = node->params_as_CustomParams();
    if (node->op() != schema::Op::Subgraph || params == nullptr) continue;
    const DeviceKind kind = view.queue(node->queue())->kind();
    if (registry.Find(*node, kind) != nullptr) continue;
    Kernel stand_in;
    stand_in.eval = [](const KernelCall&) {
      return Status(StatusCode::kUnimplemented, "foreign-runtime stand-in");
    };
    Status added = registry.RegisterCustom(params->name()->c_str(), kind, stand_in);
    if (!added.ok()) return Fail(std::string("internal: ") + added.message());
  }
  InlinePort port;
  auto executor = std::make_unique<Executor>();
  status = executor->Init(view, registry, &port, {buffers.data(), buffers.size()}, &error);
  if (!status.ok()) {
    return Fail(std::string("internal: the runtime rejects the plan: ") +
                (error.text[0] != '\0' ? error.text : status.message()));
  }
  return {};
}

}  // namespace baton::planner
