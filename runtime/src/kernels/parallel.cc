// Intra-node parallel loops (baton/parallel.h). The runner pointer is
// thread-local on hosted builds only: bare-metal images get no TLS and the
// loops below reduce to one serial call.

#include "parallel.h"

namespace baton {

#if BATON_PARALLEL_KERNELS
namespace {
thread_local const ParallelRunner* t_runner = nullptr;
}  // namespace

void SetThreadParallelRunner(const ParallelRunner* runner) { t_runner = runner; }
const ParallelRunner* ThreadParallelRunner() { return t_runner; }
#else
void SetThreadParallelRunner(const ParallelRunner*) {}
const ParallelRunner* ThreadParallelRunner() { return nullptr; }
#endif

size_t ParallelWorkspaceBytes(size_t serial_bytes, uint32_t threads) {
  if (threads <= 1 || serial_bytes == 0) return serial_bytes;
  return kernels::ParallelSliceStride(serial_bytes) * threads;
}

bool OpSplitsAcrossThreads(schema::Op op) {
  // The kernels that call ParallelFor: conv.cc (with conv_winograd.cc and
  // depthwise_conv.cc), gemm.cc and matmul.cc.
  return op == schema::Op::Conv || op == schema::Op::Gemm || op == schema::Op::MatMul;
}

namespace kernels {

int ParallelThreads() {
  const ParallelRunner* r = ThreadParallelRunner();
  return r != nullptr && r->run != nullptr && r->threads > 1 ? r->threads : 1;
}

int ParallelWorkspaceSlices(size_t have, size_t slice_bytes) {
  if (slice_bytes == 0) return 1;
  const size_t slices = have / ParallelSliceStride(slice_bytes);
  return slices < 1 ? 1 : (slices > 1024 ? 1024 : static_cast<int>(slices));
}

namespace {

struct Split {
  RangeFn fn;
  void* ctx;
  int64_t grain;
  int64_t n;
  int parts;
};

void RunPart(void* ctx, int slot) {
  const Split& s = *static_cast<const Split*>(ctx);
  int64_t begin = 0, end = 0;
  ParallelRange(s.n, s.grain, s.parts, slot, &begin, &end);
  if (begin < end) s.fn(s.ctx, begin, end, slot);
}

}  // namespace

void ParallelFor(int64_t n, int64_t grain, int max_parts, RangeFn fn, void* ctx) {
  if (n <= 0) return;
  if (grain < 1) grain = 1;
  // Whole grains only; the last range also takes the remainder, so every
  // range holds at least `grain` items when n >= grain.
  const int64_t units = n / grain > 0 ? n / grain : 1;
  int parts = ParallelThreads();
  if (parts > max_parts) parts = max_parts;
  if (parts > units) parts = static_cast<int>(units);
  if (parts <= 1) {
    fn(ctx, 0, n, 0);
    return;
  }
  Split s{fn, ctx, grain, n, parts};
  const ParallelRunner* r = ThreadParallelRunner();
  // The runner is not reentrant: a part that splits again (this thread runs
  // parts too) runs its inner loop serially.
  SetThreadParallelRunner(nullptr);
  r->run(r->self, parts, RunPart, &s);
  SetThreadParallelRunner(r);
}

}  // namespace kernels
}  // namespace baton
