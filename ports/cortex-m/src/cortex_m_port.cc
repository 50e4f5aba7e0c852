#include "baton/cortex_m/cortex_m_port.h"

#include "baton/cortex_m/semihosting.h"

namespace baton::cortex_m {
namespace {

// SysTick registers (Armv7-M / Armv8-M system control space).
volatile uint32_t* const kSysTickCtrl = reinterpret_cast<volatile uint32_t*>(0xE000E010u);
volatile uint32_t* const kSysTickLoad = reinterpret_cast<volatile uint32_t*>(0xE000E014u);
volatile uint32_t* const kSysTickVal = reinterpret_cast<volatile uint32_t*>(0xE000E018u);
constexpr uint32_t kSysTickEnable = 1u << 0;
constexpr uint32_t kSysTickInterrupt = 1u << 1;
constexpr uint32_t kSysTickCoreClock = 1u << 2;

CortexMPort* g_active_port = nullptr;
constexpr SimStats kNoStats{};

inline void CompilerBarrier() { __asm__ volatile("" ::: "memory"); }

}  // namespace

CortexMPort* ActivePort() { return g_active_port; }

Status CortexMPort::Init(const PlanView& plan, uint32_t latency_ticks) {
  if (!plan.loaded()) return BATON_ERROR(kInvalidArgument, "plan not loaded");
  if (plan.num_queues() > kMaxQueues) return BATON_ERROR(kResourceExhausted, "too many queues");
  num_sims_ = 0;
  for (uint32_t q = 0; q < kMaxQueues; ++q) sim_index_[q] = -1;
  for (uint32_t q = 0; q < plan.num_queues(); ++q) {
    if (plan.queue(q)->kind() == schema::DeviceKind::Cpu) continue;
    if (num_sims_ == kMaxSimQueues) {
      return BATON_ERROR(kResourceExhausted,
                         "more accelerator queues than BATON_CORTEX_M_MAX_SIM_QUEUES");
    }
    sims_[num_sims_].state = kFree;
    sims_[num_sims_].stats = SimStats();
    sim_index_[q] = static_cast<int8_t>(num_sims_++);
  }
  latency_ticks_ = latency_ticks == 0 ? 1 : latency_ticks;

  // Free-running SysTick on the core clock, one interrupt per period.
  g_active_port = this;
  ticks_ = 0;
  *kSysTickCtrl = 0;
  *kSysTickLoad = kSysTickReload - 1;
  *kSysTickVal = 0;
  *kSysTickCtrl = kSysTickEnable | kSysTickInterrupt | kSysTickCoreClock;
  return Status::Ok();
}

uint64_t CortexMPort::Cycles() const {
  uint32_t ticks;
  uint32_t val;
  do {  // retry if a tick lands between the two reads
    ticks = ticks_;
    val = *kSysTickVal;
    CompilerBarrier();
  } while (ticks != ticks_);
  return static_cast<uint64_t>(ticks) * kSysTickReload + (kSysTickReload - 1 - val);
}

const SimStats& CortexMPort::stats(uint32_t queue) const {
  return simulated(queue) ? sims_[sim_index_[queue]].stats : kNoStats;
}

Status CortexMPort::Dispatch(uint32_t queue, const Kernel& kernel, const KernelCall& call) {
  if (!simulated(queue)) return kernel.eval(call);  // CPU: inline
  SimQueue& sim = sims_[sim_index_[queue]];
  const uint32_t total = call.num_inputs + call.num_outputs + call.num_workspace;
  if (total > kMaxSimArgs) {
    return BATON_ERROR(kResourceExhausted,
                       "node has more tensors than BATON_CORTEX_M_MAX_SIM_ARGS");
  }
  if (sim.state != kFree) return BATON_ERROR(kInternal, "simulated device busy");
  // The executor's KernelCall lives only for this call: keep a copy, as a
  // driver would keep its command descriptor.
  uint32_t k = 0;
  for (uint32_t i = 0; i < call.num_inputs; ++i) sim.args[k++] = call.inputs[i];
  for (uint32_t i = 0; i < call.num_outputs; ++i) sim.args[k++] = call.outputs[i];
  for (uint32_t i = 0; i < call.num_workspace; ++i) sim.args[k++] = call.workspace[i];
  sim.call = call;
  sim.call.inputs = sim.args;
  sim.call.outputs = sim.args + call.num_inputs;
  sim.call.workspace = sim.args + call.num_inputs + call.num_outputs;
  sim.eval = kernel.eval;
  ++sim.stats.submitted;
  // "Start" the device: from here on OnTick (interrupt context) owns it.
  sim.ticks_left = latency_ticks_;
  CompilerBarrier();
  sim.state = kRunning;
  return BATON_ERROR(kNotReady, "submitted");
}

Status CortexMPort::Poll(uint32_t queue) {
  if (!simulated(queue)) return Status::Ok();
  SimQueue& sim = sims_[sim_index_[queue]];
  const uint8_t state = sim.state;
  CompilerBarrier();
  if (state == kRunning) {
    ++sim.stats.pending;
    return BATON_ERROR(kNotReady, "device busy");
  }
  if (state != kDone) return BATON_ERROR(kInternal, "poll without a job");
  // The device has "finished": materialize its results (a real driver would
  // only read back a status word here).
  Status status = sim.eval(sim.call);
  sim.state = kFree;
  return status;
}

void CortexMPort::Idle() {
  // Check-then-sleep with interrupts masked: a completion between the check
  // and WFI still wakes the core (WFI wakes on a pending interrupt even
  // when PRIMASK is set), so no wake-up is lost.
  __asm__ volatile("cpsid i" ::: "memory");
  ++idles_;
  bool done = false;
  for (uint32_t s = 0; s < num_sims_; ++s) done |= sims_[s].state == kDone;
  if (!done) __asm__ volatile("wfi" ::: "memory");
  __asm__ volatile("cpsie i" ::: "memory");
}

void CortexMPort::OnTick() {
  ticks_ = ticks_ + 1;
  for (uint32_t s = 0; s < num_sims_; ++s) {
    SimQueue& sim = sims_[s];
    if (sim.state == kRunning && --sim.ticks_left == 0) sim.state = kDone;
  }
}

void CortexMPort::Log(const char* message) {
  SemihostWrite("baton: ");
  SemihostWrite(message);
  SemihostWrite("\n");
}

}  // namespace baton::cortex_m

extern "C" void SysTick_Handler() {
  if (baton::cortex_m::g_active_port != nullptr) baton::cortex_m::g_active_port->OnTick();
}
