// The runtime allocates nothing: this binary interposes malloc, calloc,
// realloc, free and operator new/delete, and counts every call made while
// the runtime loads a plan, initializes the executor and runs inferences.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "common/test_util.h"

// Under AddressSanitizer or ThreadSanitizer the sanitizer owns malloc and
// operator new (defining them here would not link); the same counter is fed
// by the sanitizer's allocation hooks instead, which see every malloc,
// calloc, realloc, free, new and delete. UBSan alone replaces no allocator.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BATON_NOHEAP_HOOKS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define BATON_NOHEAP_HOOKS 1
#endif
#endif

#if BATON_NOHEAP_HOOKS
#include <sanitizer/allocator_interface.h>
#else
extern "C" void* __libc_malloc(size_t);
extern "C" void* __libc_calloc(size_t, size_t);
extern "C" void* __libc_realloc(void*, size_t);
extern "C" void __libc_free(void*);
#endif

namespace {
std::atomic<bool> g_counting{false};
std::atomic<int> g_calls{0};
inline void Count() {
  if (g_counting.load(std::memory_order_relaxed)) g_calls.fetch_add(1);
}
// Keeps the allocations of InterpositionWorks from being optimized away.
void* volatile g_sink = nullptr;
}  // namespace

#if BATON_NOHEAP_HOOKS
namespace {
void MallocHook(const volatile void*, size_t) { Count(); }
void FreeHook(const volatile void* p) {
  if (p != nullptr) Count();
}
const int g_hooks_installed = __sanitizer_install_malloc_and_free_hooks(MallocHook, FreeHook);
}  // namespace
#else
extern "C" void* malloc(size_t n) {
  Count();
  return __libc_malloc(n);
}
extern "C" void* calloc(size_t a, size_t b) {
  Count();
  return __libc_calloc(a, b);
}
extern "C" void* realloc(void* p, size_t n) {
  Count();
  return __libc_realloc(p, n);
}
extern "C" void free(void* p) {
  if (p != nullptr) Count();
  __libc_free(p);
}
void* operator new(size_t n) {
  Count();
  void* p = __libc_malloc(n ? n : 1);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n) { return operator new(n); }
void operator delete(void* p) noexcept {
  if (p != nullptr) Count();
  __libc_free(p);
}
void operator delete[](void* p) noexcept { operator delete(p); }
void operator delete(void* p, size_t) noexcept { operator delete(p); }
void operator delete[](void* p, size_t) noexcept { operator delete(p); }
#endif

namespace baton::test {
namespace {

TEST(NoHeap, InterpositionWorks) {
  g_calls = 0;
  g_counting = true;
  void* p = std::malloc(16);
  g_sink = p;
  std::free(p);
  auto* q = new int(3);
  g_sink = q;
  delete q;
  g_counting = false;
  EXPECT_EQ(g_calls.load(), 4);  // the counter can see allocations
#if BATON_NOHEAP_HOOKS
  EXPECT_NE(g_hooks_installed, 0);
#endif
}

TEST(NoHeap, LoadInitAndInvokeAllocateNothing) {
  for (const char* target : {"cpu", "soc4"}) {
    SCOPED_TRACE(target);
    std::vector<std::string> rules;
    if (std::string(target) == "soc4") rules = {"Conv=npu0", "Gemm=dsp0", "Sigmoid=gpu0"};
    const std::string bytes = PlanBytes(PlanSpec(GraphPath("tiny_cnn"), target, rules, {}, 2));
    ASSERT_FALSE(bytes.empty());
    linux_port::AlignedBytes aligned(bytes.data(), bytes.size());
    PlanView probe;
    ASSERT_TRUE(PlanView::Load(aligned.data(), aligned.size(), &probe).ok());
    linux_port::Arenas arenas(probe);
    ASSERT_TRUE(arenas.ok());
    static KernelRegistry registry;
    ASSERT_TRUE(RegisterReferenceKernels(&registry).ok());
    static InlinePort port;
    static Executor executor;
    std::vector<uint8_t> input = LoadNpyBytes(GraphDir() + "/tiny_cnn.x.npy");
    std::vector<uint8_t> output(probe.output(0)->bytes());
    const ConstBuffer in{input.data(), input.size()};
    const Buffer out{output.data(), output.size()};

    g_calls = 0;
    g_counting = true;
    PlanView view;
    Status load = PlanView::Load(aligned.data(), aligned.size(), &view);
    Status init = executor.Init(view, registry, &port, arenas.buffers());
    Status runs[3];
    for (Status& s : runs) s = executor.Invoke({&in, 1}, {&out, 1});
    // The async API too: two in flight, then drain.
    Status async = executor.SetInput(0, input.data(), input.size());
    if (async.ok()) async = executor.Run();
    if (async.ok()) async = executor.SetInput(0, input.data(), input.size());
    if (async.ok()) async = executor.Run();
    for (int k = 0; k < 2 && async.ok(); ++k) {
      async = executor.Wait();
      if (async.ok()) async = executor.GetOutputs({&out, 1});
    }
    g_counting = false;

    EXPECT_TRUE(load.ok());
    EXPECT_TRUE(init.ok());
    for (const Status& s : runs) EXPECT_TRUE(s.ok()) << s.message();
    EXPECT_TRUE(async.ok()) << async.message();
    EXPECT_EQ(g_calls.load(), 0) << "heap calls during load, init and invoke";
  }
}

}  // namespace
}  // namespace baton::test
