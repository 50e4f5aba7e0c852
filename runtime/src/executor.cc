#include "baton/executor.h"

#include <string.h>

#include "error_text.h"

namespace baton {
namespace {

constexpr auto kAcquire = std::memory_order_acquire;
constexpr auto kRelease = std::memory_order_release;
constexpr auto kRelaxed = std::memory_order_relaxed;

// The address of every zero-byte tensor that has no memory behind it (a
// domain of 0 bytes without an arena, a plan without constants): kernels and
// memcpy never see a null pointer, and nothing is ever read or written here.
alignas(16) uint8_t zero_byte_tensors[16];

// Signed distance a - b between an exact index and a shared low-32-bit one.
inline int32_t Diff(uint64_t a, uint32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) - b);
}

// Describes the failure in `out` ("<what><index> '<name>': <message>") and
// returns it.
Status Fail(LoadError* out, Status status, const char* what, uint32_t index,
            const char* name = nullptr) {
  internal::Describe(out, what, index, name, status.message());
  return status;
}

}  // namespace

bool Executor::Reached(uint32_t counter, uint64_t target) {
  return static_cast<int32_t>(counter - static_cast<uint32_t>(target)) >= 0;
}

uint64_t Executor::CounterTarget(uint32_t node, uint64_t inference) const {
  const schema::Node* m = view_.node(node);
  const QueueState& s = queues_[m->queue()];
  return (inference + m->stage()) * s.length + m->position() + 1;
}

Status Executor::Init(const PlanView& plan, const KernelRegistry& registry, Port* port,
                      Span<const Buffer> arenas, LoadError* out_error) {
  initialized_ = false;
  if (!plan.loaded() || port == nullptr) {
    return Fail(out_error, BATON_ERROR(kInvalidArgument, "no plan or port"), "executor", 0);
  }
  view_ = plan;
  registry_ = &registry;
  port_ = port;
  if (arenas.size() != view_.num_domains()) {
    return Fail(out_error, BATON_ERROR(kInvalidArgument, "arena count != domains"), "arenas ",
                static_cast<uint32_t>(arenas.size()));
  }
  for (uint32_t d = 0; d < view_.num_domains(); ++d) {
    const schema::Domain* domain = view_.domain(d);
    Status bad;
    if (domain->bytes() > 0 && (arenas[d].data == nullptr || arenas[d].bytes < domain->bytes())) {
      bad = BATON_ERROR(kResourceExhausted, "arena too small");
    } else if (reinterpret_cast<uintptr_t>(arenas[d].data) % domain->alignment() != 0) {
      bad = BATON_ERROR(kFailedPrecondition, "arena misaligned");
    }
    if (!bad.ok()) return Fail(out_error, bad, "domain ", d, domain->name()->c_str());
    // A domain of 0 bytes may come without memory: never hand a kernel null.
    arenas_[d] = arenas[d].data != nullptr ? static_cast<uint8_t*>(arenas[d].data) : zero_byte_tensors;
  }
  num_queues_ = view_.num_queues();
  in_flight_limit_ = view_.in_flight();
  lookahead_ = 0;
  stage_span_ = 0;
  for (uint32_t q = 0; q < num_queues_; ++q) {
    QueueState& s = queues_[q];
    s.iteration = 0;
    s.position = 0;
    s.pending = false;
    s.counter.store(0, kRelaxed);
    const auto* program = view_.queue(q)->nodes();
    s.length = program ? program->size() : 0;
    s.stage_max = 0;
    s.last_key = 0;
    uint32_t stage_min = UINT32_MAX;
    for (uint32_t p = 0; p < s.length; ++p) {
      const uint32_t stage = view_.node(program->Get(p))->stage();
      if (stage > s.stage_max) s.stage_max = stage;
      if (stage < stage_min) stage_min = stage;
      const uint32_t key = stage * s.length + p;
      if (key > s.last_key) s.last_key = key;
    }
    if (s.length > 0 && s.stage_max - stage_min > stage_span_) stage_span_ = s.stage_max - stage_min;
    // Finishing inference i on this queue needs every instance up to key
    // i * length + last_key; the newest inference among them is lookahead.
    for (uint32_t p = 0; p < s.length; ++p) {
      const uint32_t stage = view_.node(program->Get(p))->stage();
      const int64_t ahead = static_cast<int64_t>((s.last_key - p) / s.length) - stage;
      if (ahead > static_cast<int64_t>(lookahead_)) lookahead_ = static_cast<uint32_t>(ahead);
    }
  }
  // Every node needs a kernel for its queue's device kind that accepts it.
  TensorArg args[kMaxNodeTensors];
  for (uint32_t n = 0; n < view_.num_nodes(); ++n) {
    const schema::Node* node = view_.node(n);
    const Kernel* kernel = registry_->Find(*node, view_.queue(node->queue())->kind());
    if (kernel == nullptr) {
      // Custom and Subgraph nodes are named by the kernel they need.
      const auto* custom = node->params_as_CustomParams();
      return Fail(out_error, BATON_ERROR(kUnimplemented, "no kernel for op and device kind"),
                  custom ? "custom op of node " : "node ", n,
                  (custom ? custom->name() : node->name())->c_str());
    }
    if (kernel->prepare == nullptr) continue;
    KernelCall call;
    FillCall(n, /*inference=*/0, /*with_data=*/false, args, &call);
    Status status = kernel->prepare(call);
    if (!status.ok()) return Fail(out_error, status, "node ", n, node->name()->c_str());
  }
  base_.store(0, kRelaxed);
  submitted_.store(0, kRelaxed);
  end_.store(0, kRelaxed);
  flushed_.store(false, kRelaxed);
  stop_.store(false, kRelaxed);
  for (auto& f : failed_) f.store(0, kRelaxed);
  base_local_ = submitted_local_ = retired_ = 0;
  flushed_local_ = false;
  inputs_set_ = 0;
  initialized_ = true;
  return Status::Ok();
}

void* Executor::TensorData(uint32_t t, uint64_t inference) const {
  const schema::Tensor* tensor = view_.tensor(t);
  if (tensor->storage() == schema::Storage::Constant) {
    // Constants are read-only; kernels take them through a non-const pointer
    // only because TensorArg is shared by inputs and outputs.
    const uint8_t* section = view_.constants();
    return section != nullptr ? const_cast<uint8_t*>(section + tensor->offset()) : zero_byte_tensors;
  }
  const uint64_t slot = tensor->slots() > 1 ? inference % tensor->slots() : 0;
  return arenas_[tensor->domain()] + tensor->offset() + slot * tensor->slot_stride();
}

Status Executor::SetInput(uint32_t index, const void* data, size_t bytes) {
  if (!initialized_) return BATON_ERROR(kFailedPrecondition, "not initialized");
  if (index >= view_.num_inputs()) return BATON_ERROR(kOutOfRange, "bad input index");
  if (flushed_local_) {
    if (retired_ != submitted_local_) return BATON_ERROR(kBusy, "flushed stream not retrieved");
    // Start a new stream past every instance a queue may have skipped.
    const uint64_t base = submitted_local_ + stage_span_;
    base_local_ = submitted_local_ = retired_ = base;
    base_.store(static_cast<uint32_t>(base), kRelaxed);
    flushed_local_ = false;
    flushed_.store(false, kRelease);
  }
  if (submitted_local_ - retired_ >= in_flight_limit_) {
    return BATON_ERROR(kBusy, "in-flight limit reached");
  }
  const uint32_t t = view_.plan()->inputs()->Get(index);
  const schema::Tensor* tensor = view_.tensor(t);
  if (bytes != tensor->bytes()) return BATON_ERROR(kInvalidArgument, "input size mismatch");
  if (bytes != 0) memcpy(TensorData(t, submitted_local_), data, bytes);
  inputs_set_ |= uint64_t{1} << index;
  return Status::Ok();
}

Status Executor::Run() {
  if (!initialized_) return BATON_ERROR(kFailedPrecondition, "not initialized");
  const uint32_t n = view_.num_inputs();
  const uint64_t all = n == 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1;
  if (inputs_set_ != all) return BATON_ERROR(kFailedPrecondition, "inputs not set");
  inputs_set_ = 0;
  failed_[submitted_local_ % in_flight_limit_].store(0, kRelaxed);
  ++submitted_local_;
  // Release: the inputs written by SetInput become visible to the queues.
  submitted_.store(static_cast<uint32_t>(submitted_local_), kRelease);
  port_->Notify();
  return Status::Ok();
}

bool Executor::Finished(uint64_t inference) const {
  for (uint32_t q = 0; q < num_queues_; ++q) {
    const QueueState& s = queues_[q];
    if (s.length == 0) continue;
    const uint64_t target = inference * s.length + s.last_key + 1;
    if (!Reached(s.counter.load(kAcquire), target)) return false;
  }
  return true;
}

bool Executor::NeedsFlush() const {
  return !flushed_local_ && retired_ + lookahead_ >= submitted_local_;
}

void Executor::Flush() {
  if (!initialized_ || flushed_local_) return;
  flushed_local_ = true;
  end_.store(static_cast<uint32_t>(submitted_local_), kRelaxed);
  flushed_.store(true, kRelease);
  port_->Notify();
}

Status Executor::GetOutputs(Span<const Buffer> outputs) {
  if (retired_ == submitted_local_) return BATON_ERROR(kFailedPrecondition, "nothing in flight");
  if (!Finished(retired_)) return BATON_ERROR(kNotReady, "not finished");
  const uint8_t failed = failed_[retired_ % in_flight_limit_].load(kAcquire);
  Status status;
  if (failed != 0) {
    status = Status(static_cast<StatusCode>(failed), BATON_MSG("inference failed"));
  } else {
    const auto* list = view_.plan()->outputs();
    if (outputs.size() != list->size()) return BATON_ERROR(kInvalidArgument, "need one buffer per output");
    for (uint32_t o = 0; o < outputs.size(); ++o) {
      if (outputs[o].bytes != view_.tensor(list->Get(o))->bytes()) {
        return BATON_ERROR(kInvalidArgument, "output size mismatch");
      }
    }
    for (uint32_t o = 0; o < outputs.size(); ++o) {
      if (outputs[o].bytes != 0) {
        memcpy(outputs[o].data, TensorData(list->Get(o), retired_), outputs[o].bytes);
      }
    }
  }
  ++retired_;
  return status;
}

Status Executor::Wait() {
  if (retired_ == submitted_local_) return BATON_ERROR(kFailedPrecondition, "nothing in flight");
  for (;;) {
    const uint32_t seen = port_->EventCount();
    if (Finished(retired_)) return Status::Ok();
    if (NeedsFlush()) Flush();
    if (port_->threaded()) {
      port_->WaitEvent(seen);
      continue;
    }
    bool pending = false;
    bool ran = false;
    for (uint32_t q = 0; q < num_queues_; ++q) {
      const StepResult r = Step(q);
      ran |= r == StepResult::kRan;
      pending |= r == StepResult::kPending;
    }
    if (!ran) {
      if (!pending) return BATON_ERROR(kInternal, "no queue can progress");
      port_->Idle();
    }
  }
}

Status Executor::Invoke(Span<const ConstBuffer> inputs, Span<const Buffer> outputs) {
  // A missing input makes Run fail ("inputs not set"), an extra one SetInput.
  for (uint32_t i = 0; i < inputs.size(); ++i) {
    BATON_RETURN_IF_ERROR(SetInput(i, inputs[i].data, inputs[i].bytes));
  }
  BATON_RETURN_IF_ERROR(Run());
  Flush();
  BATON_RETURN_IF_ERROR(Wait());
  return GetOutputs(outputs);
}

void Executor::RequestStop() {
  stop_.store(true, kRelease);
  if (port_ != nullptr) port_->Notify();
}

void Executor::Advance(uint32_t q) {
  QueueState& s = queues_[q];
  if (++s.position == s.length) {
    s.position = 0;
    ++s.iteration;
  }
  // Release: this instance's writes happen-before any wait that sees it.
  s.counter.store(s.counter.load(kRelaxed) + 1, kRelease);
  port_->Notify();
}

void Executor::Complete(uint32_t q, uint64_t inference, Status status) {
  if (!status.ok()) {
    uint8_t code = static_cast<uint8_t>(status.code());
    failed_[inference % in_flight_limit_].store(code, kRelease);
    port_->Log(status.message());
  }
  Advance(q);
}

void Executor::FillCall(uint32_t n, uint64_t inference, bool with_data, TensorArg* args,
                        KernelCall* call) const {
  const schema::Node* node = view_.node(n);
  call->node = node;
  // One loop for the three lists (one copy saves code size): output and
  // workspace indices are uint32, but the loader checked them against the
  // tensor count (far below 2^31 in a FlatBuffer of at most 2 GB), so they
  // read the same as int32; -1 marks an absent optional input.
  using Indices = flatbuffers::Vector<int32_t>;
  const Indices* const lists[] = {node->inputs(), reinterpret_cast<const Indices*>(node->outputs()),
                                  reinterpret_cast<const Indices*>(node->workspace())};
  uint32_t ends[3];  // one past the last arg of each list
  uint32_t used = 0;
  for (uint32_t l = 0; l < 3; ++l) {
    if (lists[l] != nullptr) {
      for (int32_t t : *lists[l]) {
        TensorArg& arg = args[used++];
        arg = TensorArg();
        if (t >= 0) {
          const uint32_t index = static_cast<uint32_t>(t);
          arg.tensor = view_.tensor(index);
          if (with_data) arg.data = TensorData(index, inference);
        }
      }
    }
    ends[l] = used;
  }
  call->inputs = args;
  call->num_inputs = ends[0];
  call->outputs = args + ends[0];
  call->num_outputs = ends[1] - ends[0];
  call->workspace = args + ends[1];
  call->num_workspace = ends[2] - ends[1];
}

Status Executor::Dispatch(uint32_t q, uint32_t n, uint64_t inference) {
  const Kernel* kernel = registry_->Find(*view_.node(n), view_.queue(q)->kind());
  TensorArg args[kMaxNodeTensors];
  KernelCall call;
  FillCall(n, inference, /*with_data=*/true, args, &call);
  return port_->Dispatch(q, *kernel, call);
}

Executor::StepResult Executor::Step(uint32_t q) {
  QueueState& s = queues_[q];
  if (s.length == 0) return StepResult::kIdle;  // also before Init: no programs
  if (s.pending) {
    Status status = port_->Poll(q);
    if (status.code() == StatusCode::kNotReady) return StepResult::kPending;
    s.pending = false;
    Complete(q, s.pending_inference, status);
    return StepResult::kRan;
  }
  // Load order matters: submitted_ (acquire) first, so base_/flushed_ are at
  // least as new as the stream that value belongs to.
  const uint32_t submitted = submitted_.load(kAcquire);
  const uint32_t base = base_.load(kRelaxed);
  const bool flushed = flushed_.load(kAcquire);
  const uint32_t end = end_.load(kRelaxed);
  const uint32_t n = view_.queue(q)->nodes()->Get(s.position);
  const schema::Node* node = view_.node(n);
  if (flushed && s.iteration >= s.stage_max && Diff(s.iteration - s.stage_max, end) >= 0) {
    return StepResult::kIdle;
  }
  if (s.iteration < node->stage()) {
    Advance(q);  // before the first inference
    return StepResult::kRan;
  }
  const uint64_t i = s.iteration - node->stage();
  if (Diff(i, base) < 0 || (flushed && Diff(i, end) >= 0)) {
    Advance(q);  // outside the stream
    return StepResult::kRan;
  }
  if (Diff(i, submitted) >= 0) return StepResult::kBlocked;
  if (node->waits() != nullptr) {
    for (const schema::Wait* w : *node->waits()) {
      if (w->lag() > i) continue;
      const uint64_t j = i - w->lag();
      const QueueState& other = queues_[view_.node(w->node())->queue()];
      if (!Reached(other.counter.load(kAcquire), CounterTarget(w->node(), j))) {
        return StepResult::kBlocked;
      }
    }
  }
  if (failed_[i % in_flight_limit_].load(kAcquire) != 0) {
    Advance(q);  // the inference already failed: skip its remaining nodes
    return StepResult::kRan;
  }
  Status status = Dispatch(q, n, i);
  if (status.code() == StatusCode::kNotReady) {
    s.pending = true;
    s.pending_inference = i;
    return StepResult::kPending;
  }
  Complete(q, i, status);
  return StepResult::kRan;
}

}  // namespace baton
