#include "baton/cortex_m/semihosting.h"

namespace baton::cortex_m {
namespace {

// Operation numbers and the exit reason from the Arm semihosting spec v2.
constexpr uint32_t kSysWriteC = 0x03;
constexpr uint32_t kSysWrite0 = 0x04;
constexpr uint32_t kSysExit = 0x18;
constexpr uint32_t kSysExitExtended = 0x20;
constexpr uint32_t kAdpStoppedApplicationExit = 0x20026;

uint32_t Call(uint32_t op, const void* arg) {
  register uint32_t r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  // The host reads memory at r1: make prior stores visible ("memory").
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

}  // namespace

void SemihostWrite(const char* text) { Call(kSysWrite0, text); }

void SemihostWriteChar(char c) { Call(kSysWriteC, &c); }

void SemihostExit(int code) {
  if (code == 0) {
    // On 32-bit Arm, SYS_EXIT takes the reason itself in r1 (not a block).
    Call(kSysExit, reinterpret_cast<const void*>(kAdpStoppedApplicationExit));
  } else {
    const uint32_t block[2] = {kAdpStoppedApplicationExit, static_cast<uint32_t>(code)};
    Call(kSysExitExtended, block);
    // A host without SYS_EXIT_EXTENDED: any other reason is a failure.
    Call(kSysExit, reinterpret_cast<const void*>(uintptr_t{0x20023}));  // RunTimeErrorUnknown
  }
  for (;;) {
    __asm__ volatile("wfi");
  }
}

}  // namespace baton::cortex_m
