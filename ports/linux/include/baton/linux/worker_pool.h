#pragma once
// A queue's intra-node worker pool (baton/parallel.h's ParallelRunner):
// `threads - 1` worker threads plus the thread that calls Run (the queue's
// own thread), so a CPU queue with Queue.threads = N runs each node on up
// to N threads.
//
// Idle workers spin briefly (a node's next parallel loop usually follows
// within microseconds) and then sleep on a condition variable, so an idle
// pool burns no CPU.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "baton/parallel.h"

namespace baton::linux_port {

class WorkerPool {
 public:
  // Starts threads - 1 workers (none when threads <= 1). Worker i (slot
  // i + 1) is pinned to cpus[(i + 1) % cpus.size()] when `cpus` is not
  // empty (slot 0 is the caller's thread; the caller pins it).
  WorkerPool(int threads, const std::vector<int>& cpus);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // The runner to install on the queue's thread (SetThreadParallelRunner).
  // Only one thread may use it at a time.
  const ParallelRunner* runner() const { return &runner_; }
  int threads() const { return runner_.threads; }

 private:
  static void Run(void* self, int parts, void (*task)(void* ctx, int slot), void* ctx);
  void RunParts(int parts, void (*task)(void* ctx, int slot), void* ctx);
  void Worker(int slot);

  ParallelRunner runner_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  // Bumped (under mutex_) once per Run; workers wait for a new value.
  std::atomic<uint64_t> generation_{0};
  // Workers that have not finished the current generation.
  std::atomic<int> remaining_{0};
  // The current generation's job, written before generation_ is bumped.
  void (*task_)(void* ctx, int slot) = nullptr;
  void* ctx_ = nullptr;
  int parts_ = 0;
  bool stop_ = false;  // guarded by mutex_
};

// Pins `thread` to the CPUs of `cpus` (ignored when empty). False when the
// OS refuses.
bool PinThread(std::thread& thread, const std::vector<int>& cpus);

}  // namespace baton::linux_port
