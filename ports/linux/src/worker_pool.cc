#include "baton/linux/worker_pool.h"

#include <pthread.h>
#include <sched.h>

#include <chrono>

namespace baton::linux_port {
namespace {

// How long an idle worker, or a caller waiting for its workers, spins before
// it sleeps: long enough to bridge the gap between a node's parallel loops
// and the nodes too small to split between them (50 us let the worker fall
// asleep there: shufflenet_v2_x0_5 on 2 threads ran 0.58-0.67 or 1.08 ms,
// with 1 ms 0.53-0.56), short enough that an idle pool does not hold a core
// for long after an inference.
constexpr auto kSpin = std::chrono::microseconds(1000);

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
  runner_.threads = threads < 1 ? 1 : (threads > 1024 ? 1024 : threads);
  runner_.run = &WorkerPool::Run;
  runner_.self = this;
  for (int slot = 1; slot < runner_.threads; ++slot) {
    workers_.emplace_back([this] { Worker(); });
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

namespace {

constexpr uint32_t Generation(uint64_t word) { return static_cast<uint32_t>(word >> 32); }
constexpr int Parts(uint64_t word) { return static_cast<int>((word >> 16) & 0xffff); }
constexpr int Next(uint64_t word) { return static_cast<int>(word & 0xffff); }

}  // namespace

void WorkerPool::RunParts(int parts, void (*task)(void* ctx, int slot), void* ctx) {
  if (workers_.empty() || parts <= 1 || parts > 0xffff) {
    for (int slot = 0; slot < parts; ++slot) task(ctx, slot);
    return;
  }
  uint32_t gen;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = task;
    ctx_ = ctx;
    done_.store(0, std::memory_order_relaxed);
    gen = Generation(word_.load(std::memory_order_relaxed)) + 1;
    word_.store((static_cast<uint64_t>(gen) << 32) | (static_cast<uint64_t>(parts) << 16),
                std::memory_order_release);
  }
  work_cv_.notify_all();
  RunClaimed(gen);
  auto all_done = [this, parts] { return done_.load(std::memory_order_acquire) == parts; };
  if (!SpinUntil(all_done)) {
    std::unique_lock<std::mutex> lock(mutex_);
    done_cv_.wait(lock, all_done);
  }
}

void WorkerPool::RunClaimed(uint32_t gen) {
  uint64_t word = word_.load(std::memory_order_acquire);
  for (;;) {
    if (Generation(word) != gen || Next(word) >= Parts(word)) return;
    if (!word_.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      continue;  // `word` now holds the current value
    }
    // Part Next(word) is ours; the caller waits for it before it rewrites
    // task_ and ctx_.
    task_(ctx_, Next(word));
    const int parts = Parts(word);
    if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == parts) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_cv_.notify_one();
    }
    word = word_.load(std::memory_order_acquire);
  }
}

void WorkerPool::Worker() {
  uint32_t seen = 0;
  for (;;) {
    auto fresh = [&] { return Generation(word_.load(std::memory_order_acquire)) != seen; };
    if (!SpinUntil(fresh)) {
      std::unique_lock<std::mutex> lock(mutex_);
      work_cv_.wait(lock, [&] { return stop_ || fresh(); });
      if (stop_) return;
    }
    seen = Generation(word_.load(std::memory_order_acquire));
    RunClaimed(seen);
  }
}

}  // namespace baton::linux_port
