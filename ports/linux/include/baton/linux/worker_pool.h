#pragma once
// A queue's intra-node worker pool (baton/parallel.h's ParallelRunner):
// `threads - 1` worker threads plus the thread that calls Run (the queue's
// own thread), so a CPU queue with Queue.threads = N runs each node on up
// to N threads.
//
// Parts are claimed, not assigned: the caller and the workers take the next
// unclaimed part until none is left, so a worker that has lost its core (a
// loaded machine) delays nothing it has not started; the part number picks
// the workspace slice, whichever thread runs it. Idle workers spin briefly
// (a node's next parallel loop usually follows within microseconds) and then
// sleep on a condition variable, so an idle pool burns no CPU.

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
  // Starts threads - 1 workers (none when threads <= 1). Worker i (thread
  // i + 1 of the queue; thread 0 is the caller's, which the caller pins) is
  // pinned to cpus[(i + 1) % cpus.size()] when `cpus` is not empty.
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
  void Worker();
  // Runs parts of generation `gen` while unclaimed ones are left.
  void RunClaimed(uint32_t gen);

  ParallelRunner runner_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable done_cv_;
  // generation (bits 32..63, bumped once per Run) | parts (16..31) | next
  // unclaimed part (0..15). Published with release after task_ and ctx_.
  std::atomic<uint64_t> word_{0};
  // Parts of the current generation that have finished.
  std::atomic<int> done_{0};
  // The current generation's job; rewritten only after all its parts are done.
  void (*task_)(void* ctx, int slot) = nullptr;
  void* ctx_ = nullptr;
  bool stop_ = false;  // guarded by mutex_
};

// Pins `thread` to the CPUs of `cpus` (ignored when empty). False when the
// OS refuses.
bool PinThread(std::thread& thread, const std::vector<int>& cpus);

}  // namespace baton::linux_port
