#pragma once
// The executor: runs a loaded plan with one queue per device and up to
// `inferences_in_flight` inferences in flight (DESIGN §4, docs/execution.md).
//
//   queue q, iteration k: for each node n in program order, run inference
//   i = k - stage(n) (skipped when i is before the stream or past its end),
//   after every wait (m, L) holds: node m has completed inference i - L.
//
// Each queue publishes one counter: node instances it has passed (run or
// skipped). Node m has completed inference j exactly when
//   counter(queue(m)) >= (j + stage(m)) * len(queue(m)) + position(m) + 1,
// so readiness is a handful of loads, with no locks and no lists.
//
// Threading: the async API (SetInput, Run, GetOutputs, Wait, Flush, Invoke)
// must be called from one thread. Step(q) is called only by the context that
// drives queue q (its thread on a threaded port; Wait itself on a
// cooperative port). The Executor owns no heap memory; it lives wherever the
// caller puts it (it is large: keep it static or in a long-lived object).
//
// Streams: inferences are numbered in submission order. Wait() and Invoke()
// flush the stream when the oldest inference cannot finish without inputs
// that were not given (a queue holding several stages needs the next
// inference to get past the current one); after a flush and once every
// inference was retrieved, the next SetInput starts a new stream, as if the
// executor had just been initialized. Results do not depend on flushes.

#include <atomic>
#include <stddef.h>
#include <stdint.h>

#include "baton/config.h"
#include "baton/kernels.h"
#include "baton/plan_view.h"
#include "baton/port.h"
#include "baton/span.h"
#include "baton/status.h"

namespace baton {

struct Buffer {
  void* data = nullptr;
  size_t bytes = 0;
};

struct ConstBuffer {
  const void* data = nullptr;
  size_t bytes = 0;
};

class Executor {
 public:
  enum class StepResult : uint8_t {
    kRan,      // ran, skipped or completed a node instance
    kPending,  // an asynchronous node is outstanding on the device
    kBlocked,  // waiting for another queue or for an input
    kIdle,     // nothing left to do until new inferences arrive
  };

  Executor() = default;
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Binds a loaded plan. `arenas[d]` is the caller's memory for domain d:
  // at least domain(d).bytes bytes, aligned to domain(d).alignment. Looks up
  // a kernel for every node and runs its prepare check. `registry` and `port`
  // must outlive the executor. On failure `out_error` (optional) names the
  // node or domain.
  Status Init(const PlanView& plan, const KernelRegistry& registry, Port* port,
              Span<const Buffer> arenas, LoadError* out_error = nullptr);

  // --- Async pipeline API (one caller thread) ------------------------------
  // Copies graph input `index` of the next inference into its slot. Busy when
  // `inferences_in_flight` inferences are in flight (or a flushed stream has
  // not been retrieved yet).
  Status SetInput(uint32_t index, const void* data, size_t bytes);
  // Launches the next inference once all its inputs are set. Non-blocking.
  Status Run();
  // Copies the outputs of the oldest inference into `outputs` (one buffer per
  // graph output, in order) and retires it. NotReady when it has not finished.
  // Returns the inference's own error when one of its nodes failed (outputs
  // are then not copied); the inference is retired either way.
  Status GetOutputs(Span<const Buffer> outputs);
  // Blocks until the oldest inference in flight has finished (driving the
  // queues on a cooperative port). FailedPrecondition when none is in flight.
  Status Wait();
  // Marks the end of the stream: queues will not wait for further inputs.
  void Flush();
  // SetInput for every input + Run + Wait + GetOutputs.
  Status Invoke(Span<const ConstBuffer> inputs, Span<const Buffer> outputs);

  // --- Driving ---------------------------------------------------------------
  StepResult Step(uint32_t queue);
  // True when the port's threads should exit (set by RequestStop()).
  bool stopping() const { return stop_.load(std::memory_order_acquire); }
  void RequestStop();

  const PlanView& plan() const { return view_; }
  uint32_t in_flight() const { return static_cast<uint32_t>(submitted_local_ - retired_); }
  // Inferences (absolute index) submitted and retired so far.
  uint64_t submitted() const { return submitted_local_; }
  uint64_t retired() const { return retired_; }
  // Resolved address of tensor t for inference i (tests and tools).
  void* TensorData(uint32_t tensor, uint64_t inference) const;

 private:
  struct QueueState {
    // Owned by the context that drives the queue.
    uint64_t iteration = 0;
    uint32_t position = 0;
    bool pending = false;
    uint64_t pending_inference = 0;
    // Derived at Init.
    uint32_t length = 0;
    uint32_t stage_max = 0;
    uint32_t last_key = 0;      // max over nodes of stage * length + position
    // Shared.
    std::atomic<uint32_t> counter{0};
  };

  bool Finished(uint64_t inference) const;
  bool NeedsFlush() const;
  void Advance(uint32_t q);
  void Complete(uint32_t q, uint64_t inference, Status status);
  Status Dispatch(uint32_t q, uint32_t node, uint64_t inference);
  // Resolves a node's tensors (addresses for `inference` when with_data).
  void FillCall(uint32_t node, uint64_t inference, bool with_data, TensorArg* args,
                KernelCall* call) const;
  static bool Reached(uint32_t counter, uint64_t target);
  uint64_t CounterTarget(uint32_t node, uint64_t inference) const;

  PlanView view_;
  const KernelRegistry* registry_ = nullptr;
  Port* port_ = nullptr;
  uint8_t* arenas_[kMaxDomains] = {};
  QueueState queues_[kMaxQueues];
  uint32_t num_queues_ = 0;
  uint32_t in_flight_limit_ = 1;
  uint32_t lookahead_ = 0;   // inferences beyond the oldest a queue may need
  uint32_t stage_span_ = 0;  // max over queues of stage_max - stage_min

  // Stream bookkeeping (absolute inference indices, low 32 bits shared).
  std::atomic<uint32_t> base_{0};       // first inference of the stream
  std::atomic<uint32_t> submitted_{0};  // one past the last submitted
  std::atomic<uint32_t> end_{0};        // one past the last, once flushed
  std::atomic<bool> flushed_{false};
  std::atomic<uint8_t> failed_[kMaxInFlight] = {};  // StatusCode per in-flight inference
  std::atomic<bool> stop_{false};
  uint64_t base_local_ = 0;
  uint64_t submitted_local_ = 0;
  uint64_t retired_ = 0;
  bool flushed_local_ = false;
  uint64_t inputs_set_ = 0;  // bit per graph input of the next inference
  bool initialized_ = false;
};

}  // namespace baton
