#pragma once
// Arm semihosting: console output and exit through the debugger or QEMU
// (`-semihosting-config enable=on,target=native`). Every call traps with
// `bkpt 0xab`; without a debugger attached it faults (HardFault), so a
// production image replaces these with a UART. No heap, no printf.

#include <stdint.h>

namespace baton::cortex_m {

// Writes a NUL-terminated string (SYS_WRITE0).
void SemihostWrite(const char* text);
// Writes one character (SYS_WRITEC).
void SemihostWriteChar(char c);
// Ends the program with `code` as the exit status (SYS_EXIT_EXTENDED with
// ADP_Stopped_ApplicationExit; plain SYS_EXIT for code 0). Never returns.
[[noreturn]] void SemihostExit(int code);

}  // namespace baton::cortex_m
