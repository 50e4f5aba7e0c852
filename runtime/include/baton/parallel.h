#pragma once
// Intra-node parallelism for the CPU kernels (issue 17: a CPU queue with
// `threads` > 1, Queue.threads in the plan).
//
// The kernels split their GEMMs, convolutions and depthwise filters into
// disjoint parts and hand them to the runner the *calling thread* has
// installed. Without one (every bare-metal build, the cooperative mode, and
// any thread that never called SetThreadParallelRunner) they run serially.
// Each output element is computed by exactly one part, in the same order as
// the serial kernel, so results are bitwise identical whatever the thread
// count.
//
// A port owns the threads (the Linux port: LinuxPort, one pool per queue
// whose plan Queue.threads > 1). The runtime only stores a pointer.
//
// Per-thread scratch: a kernel that needs workspace runs as many parts at
// once as its workspace tensor holds slices (ParallelWorkspaceSlices); the
// planner reserves `threads` slices for a node of a splitting op
// (OpSplitsAcrossThreads) on a CPU queue with threads > 1, and one (the
// exact serial size) otherwise.

#include <stddef.h>
#include <stdint.h>

#include "baton/plan_generated.h"

namespace baton {

struct ParallelRunner {
  // Threads that run parts, the calling thread included (>= 1).
  int threads = 1;
  // Runs task(ctx, slot) once for every slot in [0, parts), parts <=
  // threads, concurrently on the calling thread and the runner's others, in
  // any assignment (a slot names a part and its workspace slice, not a
  // thread). Returns when all have returned. Not reentrant: ParallelFor uninstalls the runner on the
  // calling thread while it runs, so a nested split runs serially.
  void (*run)(void* self, int parts, void (*task)(void* ctx, int slot), void* ctx) = nullptr;
  void* self = nullptr;
};

// Installs `runner` (or none: nullptr) for the calling thread; the runner
// must outlive its installation. Host builds only: on bare-metal builds
// (BATON_PARALLEL_KERNELS 0) it does nothing and kernels stay serial.
void SetThreadParallelRunner(const ParallelRunner* runner);

// The calling thread's runner, or nullptr.
const ParallelRunner* ThreadParallelRunner();

// Workspace bytes a node needs to run `threads` parts at once when one part
// needs `serial_bytes`: serial_bytes itself when threads <= 1 (plans without
// threads stay byte-identical), else threads slices of serial_bytes rounded
// up to 64 bytes. The planner sizes workspace tensors with this.
size_t ParallelWorkspaceBytes(size_t serial_bytes, uint32_t threads);

// Whether the CPU kernels of `op` split a node across a runner's threads
// (float Conv, Gemm and MatMul). Every other op runs on the queue's thread
// alone: the planner gives it one workspace slice and no parallel speed-up.
bool OpSplitsAcrossThreads(schema::Op op);

}  // namespace baton
