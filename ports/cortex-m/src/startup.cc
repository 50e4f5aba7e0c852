// Vector table and reset for Armv7-M / Armv8-M (Cortex-M3, Cortex-M55).
//
// Reset: enable the FPU/MVE when the build uses it (CPACR), set the stack
// limit on Armv8-M (MSPLIM: a stack overflow faults instead of corrupting
// .bss), copy .data, zero .bss, run the C++ constructors (.init_array), call
// main() and leave through semihosting with its return value. Memory layout:
// boards/*.ld (symbols below).
//
// Faults print the exception number, stacked PC, CFSR and HFSR, then exit
// with status 3.

#include "baton/cortex_m/startup.h"

#include <stdint.h>
#include <string.h>

#include "baton/cortex_m/format.h"
#include "baton/cortex_m/semihosting.h"

namespace {
constexpr uint32_t kStackPaint = 0x5a7acc5au;
}  // namespace

extern "C" {
// Linker script symbols.
extern uint32_t __data_load[];
extern uint32_t __data_start[];
extern uint32_t __data_end[];
extern uint32_t __bss_start[];
extern uint32_t __bss_end[];
extern uint32_t __stack_limit[];
extern uint32_t __stack_top[];
extern void (*__init_array_start[])();
extern void (*__init_array_end[])();

int main();
[[noreturn]] void BatonStart();
void BatonFaultReport(const uint32_t* frame, uint32_t ipsr);

// Runs before .data/.bss exist and before the FPU is on: asm only.
__attribute__((naked, noreturn)) void Reset_Handler() {
  __asm__ volatile(
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
      "movw r0, #0xED88\n"  // CPACR: CP10 and CP11 full access
      "movt r0, #0xE000\n"
      "ldr r1, [r0]\n"
      "orr r1, r1, #0x00F00000\n"
      "str r1, [r0]\n"
      "dsb\n"
      "isb\n"
#endif
#if defined(__ARM_ARCH_8M_MAIN__) || defined(__ARM_ARCH_8_1M_MAIN__)
      "ldr r0, =__stack_limit\n"
      "msr msplim, r0\n"
#endif
      "b BatonStart\n"
      ".ltorg\n");
}

void BatonStart() {
  const size_t data_bytes =
      reinterpret_cast<uintptr_t>(__data_end) - reinterpret_cast<uintptr_t>(__data_start);
  if (data_bytes != 0 && +__data_load != +__data_start)
    memcpy(__data_start, __data_load, data_bytes);
  memset(__bss_start, 0,
         reinterpret_cast<uintptr_t>(__bss_end) - reinterpret_cast<uintptr_t>(__bss_start));
  // Paint the free stack below this frame (minus a margin for the calls
  // below) so StackUsedBytes() can find the high-water mark.
  uintptr_t sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  const uintptr_t painted_end = sp - 256;
  for (uint32_t* p = __stack_limit; reinterpret_cast<uintptr_t>(p) < painted_end; ++p) {
    *p = kStackPaint;
  }
  for (auto* f = __init_array_start; f != __init_array_end; ++f) (*f)();
  baton::cortex_m::SemihostExit(main());
}

// Every fault lands here: pass the exception frame and number on.
__attribute__((naked)) void Fault_Handler() {
  __asm__ volatile(
      "tst lr, #4\n"
      "ite eq\n"
      "mrseq r0, msp\n"
      "mrsne r0, psp\n"
      "mrs r1, ipsr\n"
      "b BatonFaultReport\n");
}

void BatonFaultReport(const uint32_t* frame, uint32_t ipsr) {
  using baton::cortex_m::SemihostWrite;
  const auto hex = [](uint32_t v) {
    char text[11] = "0x";
    for (int i = 0; i < 8; ++i) text[2 + i] = "0123456789abcdef"[(v >> (28 - 4 * i)) & 0xf];
    text[10] = '\0';
    SemihostWrite(text);
  };
  char number[baton::cortex_m::kNumberTextBytes];
  baton::cortex_m::FormatUint(ipsr & 0x1ff, number);
  SemihostWrite("fault: exception ");
  SemihostWrite(number);
  SemihostWrite(" pc=");
  hex(frame[6]);
  SemihostWrite(" lr=");
  hex(frame[5]);
  SemihostWrite(" cfsr=");
  hex(*reinterpret_cast<volatile uint32_t*>(0xE000ED28u));
  SemihostWrite(" hfsr=");
  hex(*reinterpret_cast<volatile uint32_t*>(0xE000ED2Cu));
  SemihostWrite("\n");
  baton::cortex_m::SemihostExit(3);
}

void NMI_Handler() noexcept __attribute__((weak, alias("Fault_Handler")));
void HardFault_Handler() noexcept __attribute__((weak, alias("Fault_Handler")));
void MemManage_Handler() noexcept __attribute__((weak, alias("Fault_Handler")));
void BusFault_Handler() noexcept __attribute__((weak, alias("Fault_Handler")));
void UsageFault_Handler() noexcept __attribute__((weak, alias("Fault_Handler")));
void SecureFault_Handler() noexcept __attribute__((weak, alias("Fault_Handler")));
void SVC_Handler() noexcept __attribute__((weak, alias("Fault_Handler")));
void DebugMon_Handler() noexcept __attribute__((weak, alias("Fault_Handler")));
void PendSV_Handler() noexcept __attribute__((weak, alias("Fault_Handler")));
void SysTick_Handler() noexcept __attribute__((weak, alias("Fault_Handler")));

using Handler = void (*)();
// The 16 system exceptions; device interrupts are not used by the demo.
__attribute__((section(".vectors"), used)) const Handler baton_vectors[16] = {
    reinterpret_cast<Handler>(__stack_top),
    Reset_Handler,
    NMI_Handler,
    HardFault_Handler,
    MemManage_Handler,
    BusFault_Handler,
    UsageFault_Handler,
    SecureFault_Handler,  // Armv8-M only; reserved on Armv7-M
    nullptr,
    nullptr,
    nullptr,
    SVC_Handler,
    DebugMon_Handler,
    nullptr,
    PendSV_Handler,
    SysTick_Handler,
};

}  // extern "C"

namespace baton::cortex_m {

size_t StackSizeBytes() {
  return reinterpret_cast<uintptr_t>(__stack_top) - reinterpret_cast<uintptr_t>(__stack_limit);
}

size_t StackUsedBytes() {
  const uint32_t* p = __stack_limit;
  while (p < __stack_top && *p == kStackPaint) ++p;
  return reinterpret_cast<uintptr_t>(__stack_top) - reinterpret_cast<uintptr_t>(p);
}

}  // namespace baton::cortex_m
