#pragma once
// What the Cortex-M startup code (src/startup.cc) offers the application.
//
// Before main() the reset handler fills the unused part of the main stack
// with a known pattern, so the high-water mark of stack use (thread code and
// interrupt handlers together; both run on MSP) can be measured afterwards.

#include <stddef.h>

namespace baton::cortex_m {

// Bytes reserved for the main stack (linker symbol __stack_size).
size_t StackSizeBytes();
// Most bytes of the main stack used so far (including the reset handler's
// own frame). Scans the stack: call it rarely.
size_t StackUsedBytes();

}  // namespace baton::cortex_m
