#pragma once
// The Linux port: one thread per queue (optionally pinned to a CPU), or a
// cooperative single-thread mode (the executor bare metal uses), and
// simulated accelerators that run the reference kernels but may touch only
// their own domains: every domain is a separate allocation, and a node on a
// non-CPU queue handed a pointer outside its queue's domains fails with
// kFailedPrecondition instead of running.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "baton/executor.h"
#include "baton/linux/worker_pool.h"
#include "baton/port.h"

namespace baton::linux_port {

// Plan bytes in 64-byte aligned memory (the loader reads them in place).
class AlignedBytes {
 public:
  AlignedBytes() = default;
  // A copy of `size` bytes at `data` (aborts when the memory cannot be had).
  explicit AlignedBytes(const void* data, size_t size);
  // `size` bytes of unspecified contents, to be filled through mutable_data()
  // (a file read straight into aligned memory); data() is null when the
  // allocation failed, which the caller reports.
  explicit AlignedBytes(size_t size);
  const uint8_t* data() const { return data_.get(); }
  uint8_t* mutable_data() { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t size_ = 0;
};

// Owns one separately allocated, aligned buffer per domain of a plan.
class Arenas {
 public:
  // Allocation failure (a plan asking for more memory than the host has)
  // leaves ok() false and no buffers.
  explicit Arenas(const PlanView& plan);
  bool ok() const { return ok_; }
  Span<const Buffer> buffers() const { return {buffers_.data(), buffers_.size()}; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::vector<std::unique_ptr<uint8_t, Free>> storage_;
  std::vector<Buffer> buffers_;
  bool ok_ = true;
};

struct Options {
  bool threaded = true;
  // CPU to pin each queue's thread to (by queue index); -1 or absent: no pin.
  std::vector<int> affinity;
  // CPU set per queue (by queue index; empty or absent: none), for queues
  // that run nodes on several threads (Queue.threads = N > 1): thread i of
  // the queue (0: the queue's own thread, 1..N-1: its workers) is pinned to
  // cpu_sets[q][i % size]. Takes precedence over `affinity` for that queue.
  std::vector<std::vector<int>> cpu_sets;
  // Run each CPU queue's nodes on up to Queue.threads threads (threaded
  // mode only; the cooperative mode always runs nodes on one thread).
  // False: one thread per queue whatever the plan says.
  bool intra_op_threads = true;
  // Check that simulated accelerators touch only their domains.
  bool check_domains = true;
  // Test hook: called before every node runs (e.g. to inject random delays).
  std::function<void(uint32_t queue, const schema::Node* node)> before_node;
  // Called after every node's kernel returns, with its status (e.g. to time
  // Dispatch..completion per node: `baton profile`).
  std::function<void(uint32_t queue, const schema::Node* node, const Status& status)> after_node;
  // Test hook: returns a non-Ok status to make a node fail.
  std::function<Status(uint32_t queue, const schema::Node* node)> fail_node;
};

class LinuxPort final : public Port {
 public:
  LinuxPort(const PlanView& plan, Span<const Buffer> arenas, Options options = Options());
  ~LinuxPort();

  // Starts one thread per queue driving `executor` (threaded mode only),
  // and for each CPU queue whose plan Queue.threads = N > 1, a pool of N - 1
  // workers that the queue's kernels split their loops over
  // (baton/parallel.h).
  Status Start(Executor* executor);
  // Stops and joins the threads. Safe to call twice.
  void Stop();

  Status Dispatch(uint32_t queue, const Kernel& kernel, const KernelCall& call) override;
  bool threaded() const override { return options_.threaded; }
  void Notify() override;
  uint32_t EventCount() const override { return events_.load(std::memory_order_acquire); }
  void WaitEvent(uint32_t seen) override;
  void Log(const char* message) override;

 private:
  bool Reachable(uint32_t queue, const TensorArg& arg) const;
  void QueueThread(uint32_t queue);

  PlanView plan_;
  std::vector<Buffer> arenas_;
  Options options_;
  Executor* executor_ = nullptr;
  std::vector<std::thread> threads_;
  // Per queue: its worker pool (null: nodes run on the queue's thread).
  std::vector<std::unique_ptr<WorkerPool>> pools_;
  std::atomic<uint32_t> events_{0};
  // Queue threads asleep in WaitEvent (woken by every event).
  std::atomic<uint32_t> sleepers_{0};
  // Other threads asleep in WaitEvent (the caller's Executor::Wait): woken by
  // events from outside the queue threads, when a queue thread is about to
  // sleep (every inference ends with its queues idle or blocked), and at
  // most once per kCallerWakeNs while the queues keep running, not at every
  // node: each wake cost the queue thread a futex call and the caller a
  // context switch on a core the kernels use (efficientnet_b0, 1 thread,
  // threaded: 6.99-7.13 ms with a wake per node, 6.35-6.48 without;
  // cooperative 6.08-6.31).
  std::atomic<uint32_t> callers_{0};
  std::atomic<int64_t> last_caller_wake_ns_{0};
  std::mutex mutex_;
  std::condition_variable cv_;
  std::condition_variable caller_cv_;
};

}  // namespace baton::linux_port
