#pragma once
// The Cortex-M port: a cooperative, single-threaded Port for bare metal.
//
// Executor::Wait drives every queue from the caller's context (threaded() is
// false). CPU queues run their kernels inline in Dispatch. Every other queue
// (npu, gpu, dsp, dma) is a *simulated accelerator* that shows how a real
// driver maps onto the asynchronous half of the Port contract:
//
//   Dispatch(q)  copy the call into the device's job slot, "start" it, and
//                return kNotReady (a real driver writes its command stream
//                and rings a doorbell here).
//   OnTick()     the SysTick interrupt. The simulated device finishes a job
//                `latency_ticks` ticks after it started and raises its
//                done flag (a real device raises its completion interrupt).
//   Poll(q)      kNotReady until the done flag is up; then runs the kernel
//                (the simulation's stand-in for results the hardware wrote)
//                and returns its status.
//   Idle()       no queue could run: sleep with WFI until an interrupt.
//
//   time ──►   cpu0: | conv(i) ...........| relu(i) |
//              npu0:        |==== gemm (sim) ====|        Poll sees done
//              SysTick:  ^tick     ^tick     ^tick (OnTick marks done)
//
// Clock: SysTick counts core cycles (24-bit down counter, reload
// kSysTickReload); OnTick extends it to 64 bits. QEMU does not model the DWT
// cycle counter, so CYCCNT is not used.
//
// No heap, no exceptions, no RTTI. The port object is large only by the job
// slots (kMaxSimQueues * kMaxSimArgs TensorArgs); keep it static.

#include <stdint.h>

#include "baton/executor.h"
#include "baton/kernels.h"
#include "baton/plan_view.h"
#include "baton/port.h"
#include "baton/status.h"

#ifndef BATON_CORTEX_M_MAX_SIM_QUEUES
#define BATON_CORTEX_M_MAX_SIM_QUEUES 2
#endif
#ifndef BATON_CORTEX_M_MAX_SIM_ARGS
#define BATON_CORTEX_M_MAX_SIM_ARGS 16
#endif

namespace baton::cortex_m {

// Simulated accelerator queues per port (non-CPU queues of the plan).
inline constexpr uint32_t kMaxSimQueues = BATON_CORTEX_M_MAX_SIM_QUEUES;
// Inputs + outputs + workspace of one node on a simulated accelerator.
inline constexpr uint32_t kMaxSimArgs = BATON_CORTEX_M_MAX_SIM_ARGS;
// SysTick period in core cycles (must fit 24 bits).
inline constexpr uint32_t kSysTickReload = 25000;  // 1 ms at 25 MHz
static_assert(kSysTickReload > 0 && kSysTickReload <= 0x1000000, "SysTick reload is 24-bit");

// Counters that show the asynchronous path at work.
struct SimStats {
  uint32_t submitted = 0;  // jobs handed to simulated devices
  uint32_t pending = 0;    // Polls that returned kNotReady
};

class CortexMPort final : public Port {
 public:
  CortexMPort() = default;
  CortexMPort(const CortexMPort&) = delete;
  CortexMPort& operator=(const CortexMPort&) = delete;

  // Binds the port to a loaded plan: every non-CPU queue becomes a simulated
  // accelerator completing `latency_ticks` (>= 1) SysTick periods after
  // Dispatch. Starts SysTick. ResourceExhausted when the plan has more than
  // kMaxSimQueues accelerator queues.
  Status Init(const PlanView& plan, uint32_t latency_ticks = 1);

  Status Dispatch(uint32_t queue, const Kernel& kernel, const KernelCall& call) override;
  Status Poll(uint32_t queue) override;
  void Idle() override;
  void Log(const char* message) override;

  // SysTick interrupt body (called from SysTick_Handler).
  void OnTick();

  // Core cycles since Init (SysTick based; monotonic).
  uint64_t Cycles() const;
  const SimStats& stats(uint32_t queue) const;
  // Idle() calls: times the cooperative loop slept waiting for a device.
  uint32_t idles() const { return idles_; }
  bool simulated(uint32_t queue) const { return queue < kMaxQueues && sim_index_[queue] >= 0; }

 private:
  enum : uint8_t { kFree = 0, kRunning = 1, kDone = 2 };
  struct SimQueue {
    volatile uint8_t state = kFree;    // written by Dispatch/Poll and OnTick
    volatile uint32_t ticks_left = 0;  // OnTick counts down while kRunning
    KernelFn eval = nullptr;
    KernelCall call;
    TensorArg args[kMaxSimArgs];
    SimStats stats;
  };

  int8_t sim_index_[kMaxQueues] = {};
  SimQueue sims_[kMaxSimQueues];
  uint32_t num_sims_ = 0;
  uint32_t latency_ticks_ = 1;
  uint32_t idles_ = 0;
  volatile uint32_t ticks_ = 0;
};

// The port SysTick_Handler forwards to (set by CortexMPort::Init).
CortexMPort* ActivePort();

}  // namespace baton::cortex_m
