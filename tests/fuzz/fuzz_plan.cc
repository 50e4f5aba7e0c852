// libFuzzer target: PlanView::Load, Executor::Init and one inference on any
// bytes (docs/fuzzing.md). Built twice: `fuzz_plan` from a copy of the
// runtime compiled with BATON_VERIFY_PLAN_CHECKSUM=0, so mutants reach the
// semantic checks and the kernels, and `fuzz_plan_checked` against the
// normal runtime, recomputing nothing (every mutant must be rejected or run
// cleanly with whatever integrity check the runtime makes).
//
// Inputs: all graph inputs zero-filled. Plans whose arenas, inputs or outputs
// exceed kMaxBytes are skipped (the host would need the memory, not a bug).

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <new>
#include <vector>

#include "baton/executor.h"
#include "baton/kernels.h"
#include "baton/plan_view.h"
#include "baton/port.h"

namespace {

constexpr size_t kMaxBytes = size_t{16} << 20;

const baton::KernelRegistry& Registry() {
  static baton::KernelRegistry* registry = [] {
    static baton::KernelRegistry r;
    if (!baton::RegisterReferenceKernels(&r).ok()) abort();
    return &r;
  }();
  return *registry;
}

// Memory aligned to `alignment` (a power of two, checked by Load).
struct AlignedBlock {
  std::vector<uint8_t> storage;
  uint8_t* data = nullptr;
  void Allocate(size_t bytes, size_t alignment) {
    storage.assign(bytes + alignment, 0);
    const uintptr_t base = reinterpret_cast<uintptr_t>(storage.data());
    data = storage.data() + ((alignment - base % alignment) % alignment);
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* bytes, size_t size) {
  using namespace baton;
  // The loader reads the plan in place and wants 16-byte alignment.
  AlignedBlock plan;
  plan.Allocate(size, kPlanAlignment);
  if (size > 0) memcpy(plan.data, bytes, size);

  PlanView view;
  LoadError error;
  if (!PlanView::Load(plan.data, size, &view, &error).ok()) return 0;

  size_t total = 0;
  std::vector<AlignedBlock> arenas(view.num_domains());
  std::vector<Buffer> buffers(view.num_domains());
  for (uint32_t d = 0; d < view.num_domains(); ++d) {
    const uint64_t bytes_d = view.domain(d)->bytes();
    const uint64_t align_d = view.domain(d)->alignment() == 0 ? 1 : view.domain(d)->alignment();
    if (bytes_d > kMaxBytes || align_d > 4096 || (total += bytes_d) > kMaxBytes) return 0;
    arenas[d].Allocate(bytes_d, align_d);
    buffers[d] = Buffer{arenas[d].data, bytes_d};
  }

  InlinePort port;
  static Executor executor;  // large: keep it off the stack
  executor.~Executor();
  new (&executor) Executor();
  if (!executor.Init(view, Registry(), &port, Span<const Buffer>(buffers.data(), buffers.size()),
                     &error)
           .ok()) {
    return 0;
  }

  std::vector<std::vector<uint8_t>> in(view.num_inputs()), out(view.num_outputs());
  std::vector<ConstBuffer> in_buffers;
  std::vector<Buffer> out_buffers;
  for (uint32_t i = 0; i < view.num_inputs(); ++i) {
    const uint64_t b = view.input(i)->bytes();
    if (b > kMaxBytes || (total += b) > kMaxBytes) return 0;
    in[i].assign(b, 0);
    in_buffers.push_back(ConstBuffer{in[i].data(), in[i].size()});
  }
  for (uint32_t i = 0; i < view.num_outputs(); ++i) {
    const uint64_t b = view.output(i)->bytes();
    if (b > kMaxBytes || (total += b) > kMaxBytes) return 0;
    out[i].assign(b, 0);
    out_buffers.push_back(Buffer{out[i].data(), out[i].size()});
  }
  (void)executor.Invoke(Span<const ConstBuffer>(in_buffers.data(), in_buffers.size()),
                        Span<const Buffer>(out_buffers.data(), out_buffers.size()));
  return 0;
}
