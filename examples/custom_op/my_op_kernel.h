#pragma once
// The kernel of com.example::MyOp (export_model.py), as an application
// provides it: Baton's runtime cannot know the op, so the application
// registers it by name before Executor::Init (docs/porting.md, "Custom ops").
//
//   y[n, c, ...] = alpha * x[n, c, ...] + bias + lut[c]      (float32)
//
// Attributes (read with baton/custom_op.h): alpha (float), bias (int), lut
// (float32 tensor, one value per channel of x), and mode ("affine"), taps
// (ints), gains (floats), tags (strings), which the prepare step checks but
// the computation ignores. No heap; the runtime's rules for kernels apply.

#include "baton/kernels.h"

namespace example {

// The name the plan's CustomParams carries.
inline constexpr const char kMyOpName[] = "com.example::MyOp";

// Registers MyOp for queues of `kind` (CPU: the fallback device of `baton
// plan --custom-op`). ResourceExhausted when the registry's custom table is
// full.
baton::Status RegisterMyOp(baton::KernelRegistry* registry,
                           baton::DeviceKind kind = baton::DeviceKind::Cpu);

}  // namespace example
