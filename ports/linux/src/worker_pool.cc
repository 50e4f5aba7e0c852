#include "baton/linux/worker_pool.h"

#include <pthread.h>
#include <sched.h>

#include <chrono>

namespace baton::linux_port {
namespace {

// How long an idle worker, or a caller waiting for its workers, spins before
// it sleeps: long enough to bridge the gap between a node's parallel loops,
// short enough that an idle pool does not hold a core.
constexpr auto kSpin = std::chrono::microseconds(50);

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins until done() or kSpin has passed; returns done().
template <typename Done>
bool SpinUntil(Done done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (int i = 0;; ++i) {
    if (done()) return true;
    CpuRelax();
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) return done();
  }
}

}  // namespace

bool PinThread(std::thread& thread, const std::vector<int>& cpus) {
  if (cpus.empty()) return true;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int cpu : cpus) {
    if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &set);
  }
  return pthread_setaffinity_np(thread.native_handle(), sizeof(set), &set) == 0;
}

WorkerPool::WorkerPool(int threads, const std::vector<int>& cpus) {
  runner_.threads = threads < 1 ? 1 : threads;
  runner_.run = &WorkerPool::Run;
  runner_.self = this;
  for (int slot = 1; slot < runner_.threads; ++slot) {
    workers_.emplace_back([this, slot] { Worker(slot); });
    if (!cpus.empty()) {
      PinThread(workers_.back(), {cpus[static_cast<size_t>(slot) % cpus.size()]});
    }
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void WorkerPool::Run(void* self, int parts, void (*task)(void* ctx, int slot), void* ctx) {
  static_cast<WorkerPool*>(self)->RunParts(parts, task, ctx);
}

void WorkerPool::RunParts(int parts, void (*task)(void* ctx, int slot), void* ctx) {
  if (workers_.empty() || parts <= 1) {
    for (int slot = 0; slot < parts; ++slot) task(ctx, slot);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = task;
    ctx_ = ctx;
    parts_ = parts;
    // Every worker checks in, needed or not: none may still read task_
    // when the next Run rewrites it.
    remaining_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  work_cv_.notify_all();
  task(ctx, 0);
  auto done = [this] { return remaining_.load(std::memory_order_acquire) == 0; };
  if (!SpinUntil(done)) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, done);
  }
}

void WorkerPool::Worker(int slot) {
  uint64_t seen = 0;
  for (;;) {
    auto fresh = [&] { return generation_.load(std::memory_order_acquire) != seen; };
    if (!SpinUntil(fresh)) {
      std::unique_lock<std::mutex> lock(mutex_);
      work_cv_.wait(lock, [&] { return stop_ || fresh(); });
      if (stop_) return;
    }
    seen = generation_.load(std::memory_order_acquire);
    if (slot < parts_) task_(ctx_, slot);
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_cv_.notify_one();
    }
  }
}

}  // namespace baton::linux_port
