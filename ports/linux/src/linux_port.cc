#include "baton/linux/linux_port.h"

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace baton::linux_port {

void AlignedBytes::Free::operator()(uint8_t* p) const { std::free(p); }

AlignedBytes::AlignedBytes(size_t size) : size_(size) {
  data_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, (size + 63) / 64 * 64 + 64)));
  if (!data_) size_ = 0;
}

AlignedBytes::AlignedBytes(const void* data, size_t size) : AlignedBytes(size) {
  if (!data_) std::abort();
  std::memcpy(data_.get(), data, size);
}

void Arenas::Free::operator()(uint8_t* p) const { std::free(p); }

Arenas::Arenas(const PlanView& plan) {
  for (uint32_t d = 0; d < plan.num_domains(); ++d) {
    const schema::Domain* domain = plan.domain(d);
    const size_t align = domain->alignment() < sizeof(void*) ? sizeof(void*) : domain->alignment();
    size_t bytes = static_cast<size_t>(domain->bytes());
    size_t rounded = (bytes + align - 1) / align * align;
    if (rounded == 0) rounded = align;
    auto* p = static_cast<uint8_t*>(std::aligned_alloc(align, rounded));
    if (p == nullptr) {
      storage_.clear();
      buffers_.clear();
      ok_ = false;
      return;
    }
    std::memset(p, 0, rounded);
    storage_.emplace_back(p);
    buffers_.push_back(Buffer{p, bytes});
  }
}

LinuxPort::LinuxPort(const PlanView& plan, Span<const Buffer> arenas, Options options)
    : plan_(plan), arenas_(arenas.begin(), arenas.end()), options_(std::move(options)) {}

LinuxPort::~LinuxPort() { Stop(); }

Status LinuxPort::Start(Executor* executor) {
  if (!options_.threaded) return Status::Ok();
  if (!threads_.empty()) return BATON_ERROR(kFailedPrecondition, "already started");
  executor_ = executor;
  pools_.clear();
  pools_.resize(plan_.num_queues());
  for (uint32_t q = 0; q < plan_.num_queues(); ++q) {
    const schema::Queue* queue = plan_.queue(q);
    const std::vector<int> no_cpus;
    const std::vector<int>& cpus = q < options_.cpu_sets.size() ? options_.cpu_sets[q] : no_cpus;
    if (options_.intra_op_threads && queue->kind() == schema::DeviceKind::Cpu &&
        queue->threads() > 1) {
      pools_[q] = std::make_unique<WorkerPool>(static_cast<int>(queue->threads()), cpus);
    }
  }
  for (uint32_t q = 0; q < plan_.num_queues(); ++q) {
    threads_.emplace_back([this, q] { QueueThread(q); });
    if (q < options_.cpu_sets.size() && !options_.cpu_sets[q].empty()) {
      PinThread(threads_.back(), {options_.cpu_sets[q][0]});
    } else if (q < options_.affinity.size() && options_.affinity[q] >= 0) {
      PinThread(threads_.back(), {options_.affinity[q]});
    }
  }
  return Status::Ok();
}

void LinuxPort::Stop() {
  if (threads_.empty()) return;
  executor_->RequestStop();
  for (auto& t : threads_) t.join();
  threads_.clear();
  pools_.clear();
}

namespace {

// Whether the calling thread is one of the port's queue threads.
thread_local bool tls_queue_thread = false;

// The safety net's period: a caller learns of a finished inference at most
// this late while every queue stays busy (with later inferences).
constexpr int64_t kCallerWakeNs = 1000 * 1000;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void LinuxPort::QueueThread(uint32_t queue) {
  tls_queue_thread = true;
  SetThreadParallelRunner(pools_[queue] ? pools_[queue]->runner() : nullptr);
  while (!executor_->stopping()) {
    const uint32_t seen = EventCount();
    const Executor::StepResult r = executor_->Step(queue);
    if (r == Executor::StepResult::kBlocked || r == Executor::StepResult::kIdle) WaitEvent(seen);
  }
  SetThreadParallelRunner(nullptr);
}

void LinuxPort::Notify() {
  events_.fetch_add(1, std::memory_order_acq_rel);
  const bool queues = sleepers_.load(std::memory_order_acquire) != 0;
  bool callers = false;
  if (callers_.load(std::memory_order_acquire) != 0) {
    callers = !tls_queue_thread;
    if (!callers) {
      const int64_t now = NowNs();
      int64_t last = last_caller_wake_ns_.load(std::memory_order_relaxed);
      callers = now - last >= kCallerWakeNs &&
                last_caller_wake_ns_.compare_exchange_strong(last, now, std::memory_order_relaxed);
    }
  }
  if (queues || callers) {
    // Taking and releasing the mutex orders this event before a sleeper's
    // check or after its wait has begun (no lost wake-up); notifying after
    // the release lets the woken thread take the mutex at once instead of
    // blocking on it again.
    { std::lock_guard<std::mutex> lock(mutex_); }
    if (queues) cv_.notify_all();
    if (callers) caller_cv_.notify_all();
  }
}

void LinuxPort::WaitEvent(uint32_t seen) {
  const auto ready = [&] {
    return events_.load(std::memory_order_acquire) != seen ||
           (executor_ != nullptr && executor_->stopping());
  };
  if (!tls_queue_thread) {
    std::unique_lock<std::mutex> lock(mutex_);
    callers_.fetch_add(1, std::memory_order_acq_rel);
    caller_cv_.wait(lock, ready);
    callers_.fetch_sub(1, std::memory_order_acq_rel);
    return;
  }
  // A queue thread about to sleep: the callers check for finished inferences
  // (their events since they slept may not have woken them).
  if (callers_.load(std::memory_order_acquire) != 0) {
    { std::lock_guard<std::mutex> lock(mutex_); }
    caller_cv_.notify_all();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  sleepers_.fetch_add(1, std::memory_order_acq_rel);
  cv_.wait(lock, ready);
  sleepers_.fetch_sub(1, std::memory_order_acq_rel);
}

void LinuxPort::Log(const char* message) { std::fprintf(stderr, "baton: %s\n", message); }

bool LinuxPort::Reachable(uint32_t queue, const TensorArg& arg) const {
  if (!arg.present()) return true;
  const auto* p = static_cast<const uint8_t*>(arg.data);
  const uint8_t* constants = plan_.constants();
  if (constants != nullptr && p >= constants &&
      p + arg.bytes() <= constants + plan_.plan()->constants()->size()) {
    return true;
  }
  const auto* domains = plan_.queue(queue)->domains();
  if (domains == nullptr) return false;
  for (uint32_t d : *domains) {
    const auto* base = static_cast<const uint8_t*>(arenas_[d].data);
    if (p >= base && p + arg.bytes() <= base + arenas_[d].bytes) return true;
  }
  return false;
}

Status LinuxPort::Dispatch(uint32_t queue, const Kernel& kernel, const KernelCall& call) {
  if (options_.before_node) options_.before_node(queue, call.node);
  if (options_.fail_node) {
    Status injected = options_.fail_node(queue, call.node);
    if (!injected.ok()) return injected;
  }
  if (options_.check_domains && plan_.queue(queue)->kind() != schema::DeviceKind::Cpu) {
    const struct {
      const TensorArg* args;
      uint32_t count;
    } lists[] = {{call.inputs, call.num_inputs},
                 {call.outputs, call.num_outputs},
                 {call.workspace, call.num_workspace}};
    for (const auto& list : lists) {
      for (uint32_t i = 0; i < list.count; ++i) {
        if (!Reachable(queue, list.args[i])) {
          return BATON_ERROR(kFailedPrecondition,
                             "simulated device touched memory outside its domains");
        }
      }
    }
  }
  Status status = kernel.eval(call);
  if (options_.after_node) options_.after_node(queue, call.node, status);
  return status;
}

}  // namespace baton::linux_port
