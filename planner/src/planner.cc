#include "baton/planner/planner.h"

#include <cstdlib>
#include <cstring>
#include <memory>

#include "baton/executor.h"
#include "baton/planner/copies.h"
#include "baton/planner/emit.h"
#include "baton/planner/memory.h"
#include "baton/planner/schedule.h"
#include "baton/planner/simplify.h"

namespace baton::planner {

Result<Program> PlanGraph(Graph graph, Target target, const PlanOptions& options) {
  if (options.in_flight < 1 || options.in_flight > static_cast<int>(kMaxInFlight)) {
    return Fail("--in-flight must be between 1 and " + std::to_string(kMaxInFlight));
  }
  BATON_TRY(Simplify(&graph));
  Program p;
  p.graph = std::move(graph);
  p.target = std::move(target);
  p.in_flight = options.in_flight;
  BATON_TRY(AssignDevices(options.rules, &p));
  BATON_TRY(InsertCopies(&p));
  if (p.queues.size() > kMaxQueues) {
    return Fail("target has " + std::to_string(p.queues.size()) + " queues; the runtime supports " +
                std::to_string(kMaxQueues) + " (BATON_MAX_QUEUES)");
  }
  BATON_TRY(AssignStages(options.split, &p));
  BATON_TRY(Schedule(&p));
  BATON_TRY(PlanWorkspace(&p));
  BATON_TRY(PlanMemory(&p, options.pack_time_limit_s));
  PruneWaits(&p);
  return p;
}

Check VerifyWithRuntime(const std::string& plan_bytes) {
  // The loader needs 16-byte aligned bytes.
  std::unique_ptr<uint8_t, decltype(&std::free)> copy(
      static_cast<uint8_t*>(std::aligned_alloc(64, (plan_bytes.size() + 63) / 64 * 64)), &std::free);
  std::memcpy(copy.get(), plan_bytes.data(), plan_bytes.size());
  PlanView view;
  LoadError error;
  Status status = PlanView::Load(copy.get(), plan_bytes.size(), &view, &error);
  if (!status.ok()) return Fail(std::string("internal: the runtime rejects the plan: ") + error.text);
  KernelRegistry registry;
  Status reg = RegisterReferenceKernels(&registry);
  if (!reg.ok()) return Fail(std::string("internal: ") + reg.message());
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
  InlinePort port;
  auto executor = std::make_unique<Executor>();
  status = executor->Init(view, registry, &port, {buffers.data(), buffers.size()}, &error);
  if (!status.ok()) return Fail(std::string("internal: the runtime rejects the plan: ") + error.text);
  return {};
}

}  // namespace baton::planner
