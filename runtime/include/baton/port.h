#pragma once
// What a platform port supplies to the executor. See docs/porting.md.
//
// The executor calls Dispatch from the context that drives `queue` (its own
// thread on Linux, the cooperative loop on bare metal). A port that runs
// nodes inline (a CPU) returns the kernel's status. A port that hands a node
// to an accelerator returns kNotReady after submitting it; the executor then
// calls Poll(queue) until it returns anything but kNotReady. A queue has at
// most one node outstanding.
//
// Notify/EventCount/WaitEvent form an event count: the executor calls Notify
// after every change another context may wait for (a queue counter advanced,
// an inference was submitted or the stream was flushed). A threaded port
// wakes its sleepers; a cooperative port may ignore it. WaitEvent(seen)
// returns once EventCount() != seen (spurious returns are allowed).
//
// Ports must not use exceptions or the heap in these calls. No pure virtual
// functions (they would pull in __cxa_pure_virtual) and no virtual destructor
// (it would pull in operator delete).

#include <stdint.h>

#include "baton/kernels.h"
#include "baton/status.h"

namespace baton {

class Port {
 public:
  virtual Status Dispatch(uint32_t queue, const Kernel& kernel, const KernelCall& call) {
    (void)queue;
    return kernel.eval(call);
  }
  virtual Status Poll(uint32_t queue) {
    (void)queue;
    return Status::Ok();
  }
  // True when every queue is driven by its own thread (Executor::Step is
  // called by those threads); false for a cooperative loop driven by the
  // caller inside Executor::Wait.
  virtual bool threaded() const { return false; }
  virtual void Notify() {}
  virtual uint32_t EventCount() const { return 0; }
  virtual void WaitEvent(uint32_t seen) { (void)seen; }
  // Called by the cooperative loop when no queue could make progress but an
  // asynchronous node is outstanding: sleep until an interrupt, or return.
  virtual void Idle() {}
  virtual void Log(const char* message) { (void)message; }

 protected:
  ~Port() = default;
};

// A cooperative, CPU-only port: every queue's nodes run inline on the
// calling thread. Enough for a host test or a single-core MCU.
class InlinePort : public Port {};

}  // namespace baton
