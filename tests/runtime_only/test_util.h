#pragma once
// Helpers for the runtime-only tests: running plans through the executor on
// the ports available without a planner, and an asynchronous test port.

#include <stdint.h>

#include <vector>

#include "baton/executor.h"
#include "baton/kernels.h"
#include "baton/linux/linux_port.h"
#include "baton/plan_view.h"
#include "baton/port.h"
#include "plan_builder.h"

namespace baton::testing {

// A cooperative port whose non-CPU queues complete asynchronously: Dispatch
// keeps a copy of the call and returns kNotReady; Poll returns kNotReady
// `delay` times, then runs the kernel. The same contract a bare-metal
// accelerator driver implements (see ports/cortex-m).
class AsyncPort final : public Port {
 public:
  AsyncPort(const PlanView& plan, uint32_t delay) : jobs_(plan.num_queues()), delay_(delay) {
    for (uint32_t q = 0; q < plan.num_queues(); ++q) {
      jobs_[q].async = plan.queue(q)->kind() != schema::DeviceKind::Cpu;
    }
  }

  Status Dispatch(uint32_t queue, const Kernel& kernel, const KernelCall& call) override {
    Job& job = jobs_[queue];
    if (!job.async) return kernel.eval(call);
    if (job.busy) return BATON_ERROR(kInternal, "two nodes outstanding on one queue");
    job.args.assign(call.inputs, call.inputs + call.num_inputs);
    job.args.insert(job.args.end(), call.outputs, call.outputs + call.num_outputs);
    job.args.insert(job.args.end(), call.workspace, call.workspace + call.num_workspace);
    job.call = call;
    job.call.inputs = job.args.data();
    job.call.outputs = job.args.data() + call.num_inputs;
    job.call.workspace = job.args.data() + call.num_inputs + call.num_outputs;
    job.eval = kernel.eval;
    job.polls_left = delay_;
    job.busy = true;
    ++submitted_;
    return BATON_ERROR(kNotReady, "submitted");
  }

  Status Poll(uint32_t queue) override {
    Job& job = jobs_[queue];
    if (!job.busy) return BATON_ERROR(kInternal, "poll without a job");
    if (job.polls_left > 0) {
      --job.polls_left;
      ++not_ready_;
      return BATON_ERROR(kNotReady, "busy");
    }
    job.busy = false;
    return job.eval(job.call);
  }

  void Idle() override { ++idles_; }

  uint32_t submitted() const { return submitted_; }
  uint32_t not_ready() const { return not_ready_; }
  uint32_t idles() const { return idles_; }

 private:
  struct Job {
    bool async = false;
    bool busy = false;
    uint32_t polls_left = 0;
    KernelFn eval = nullptr;
    KernelCall call;
    std::vector<TensorArg> args;
  };
  std::vector<Job> jobs_;
  uint32_t delay_;
  uint32_t submitted_ = 0;
  uint32_t not_ready_ = 0;
  uint32_t idles_ = 0;
};

inline const KernelRegistry& ReferenceRegistry() {
  static KernelRegistry registry;
  static const bool registered = RegisterReferenceKernels(&registry).ok();
  if (!registered) abort();
  return registry;
}

// Workspace bytes the reference kernel of node `n` wants (loads `plan`,
// which may lack the workspace tensor: only Executor::Init checks it).
inline size_t WorkspaceFor(const AlignedPlan& plan, uint32_t n) {
  PlanView view;
  if (!PlanView::Load(plan.data(), plan.size(), &view).ok()) return 0;
  const schema::Node* node = view.node(n);
  std::vector<TensorArg> args;
  KernelCall call;
  call.node = node;
  const auto add = [&](uint32_t t) {
    TensorArg a;
    a.tensor = view.tensor(t);
    args.push_back(a);
  };
  if (node->inputs()) {
    for (int32_t t : *node->inputs()) {
      if (t >= 0) {
        add(static_cast<uint32_t>(t));
      } else {
        args.emplace_back();
      }
    }
  }
  call.num_inputs = node->inputs() ? node->inputs()->size() : 0;
  for (uint32_t t : *node->outputs()) add(t);
  call.num_outputs = node->outputs()->size();
  call.inputs = args.data();
  call.outputs = args.data() + call.num_inputs;
  return WorkspaceBytes(call);
}

enum class Mode { kInline, kAsync, kLinuxCooperative, kLinuxThreaded };

inline const char* ModeName(Mode m) {
  switch (m) {
    case Mode::kInline:
      return "inline";
    case Mode::kAsync:
      return "async";
    case Mode::kLinuxCooperative:
      return "linux_cooperative";
    case Mode::kLinuxThreaded:
      return "linux_threaded";
  }
  return "?";
}

// Runs `inputs.size()` inferences of a single-input, single-output float
// plan through the async API, keeping up to the plan's in-flight limit in
// flight, and returns the outputs in order. Fails the test on any error.
std::vector<std::vector<float>> RunStream(const AlignedPlan& plan, Mode mode,
                                          const std::vector<std::vector<float>>& inputs);

}  // namespace baton::testing
