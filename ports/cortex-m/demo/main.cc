// baton-demo: one inference of an embedded plan on a Cortex-M board.
//
// plan.h (from `baton plan --header`) holds the plan; firmware_data.h (from
// make_firmware_data.py) holds the arenas, sized by plan.h's macros, the
// inputs and the output buffers. Prints, through semihosting:
//
//   output <name> <count> <v0> <v1> ...     (values as "%.9g")
//   # <diagnostics>                         (ignored by comparisons)
//
// and returns 0 (the exit status through semihosting), or prints
// "error: ..." and returns 1. Built with BATON_APPLICATION_KERNELS=1 (an
// image with kernel sources), it also registers the application's kernels
// (baton/cortex_m/application_kernels.h).

#include <stdint.h>
#include <string.h>

#include "baton/cortex_m/cortex_m_port.h"
#include "baton/cortex_m/format.h"
#include "baton/cortex_m/semihosting.h"
#include "baton/cortex_m/startup.h"
#include "baton/executor.h"
#include "baton/kernels.h"
#include "baton/plan_view.h"
#include "firmware_data.h"

#if BATON_APPLICATION_KERNELS
#include "baton/cortex_m/application_kernels.h"
#endif

namespace {

using baton::cortex_m::SemihostWrite;

// Batches characters into SYS_WRITE0 calls (each is a trap to the host).
class LineWriter {
 public:
  LineWriter& Text(const char* s) {
    while (*s) Put(*s++);
    return *this;
  }
  LineWriter& Uint(uint64_t v) {
    char text[baton::cortex_m::kNumberTextBytes];
    baton::cortex_m::FormatUint(v, text);
    return Text(text);
  }
  LineWriter& Int(int64_t v) {
    char text[baton::cortex_m::kNumberTextBytes];
    baton::cortex_m::FormatInt(v, text);
    return Text(text);
  }
  LineWriter& Float(float v) {
    char text[baton::cortex_m::kNumberTextBytes];
    baton::cortex_m::FormatFloat(v, text);
    return Text(text);
  }
  void Flush() {
    buffer_[length_] = '\0';
    if (length_ > 0) SemihostWrite(buffer_);
    length_ = 0;
  }

 private:
  void Put(char c) {
    if (length_ + 1 == sizeof(buffer_)) Flush();
    buffer_[length_++] = c;
  }
  char buffer_[256];
  size_t length_ = 0;
};

LineWriter out;

int Fail(const char* what, const baton::Status& status, const char* detail) {
  out.Text("error: ").Text(what).Text(": ").Text(baton::StatusCodeName(status.code()));
  if (status.message()[0] != '\0') out.Text(": ").Text(status.message());
  if (detail != nullptr && detail[0] != '\0') out.Text(" (").Text(detail).Text(")");
  out.Text("\n");
  out.Flush();
  return 1;
}

void PrintOutput(const baton::schema::Tensor* tensor, const void* data) {
  using baton::schema::DType;
  const size_t elem = baton::DTypeSize(tensor->dtype());
  const uint64_t count = elem ? tensor->bytes() / elem : 0;
  out.Text("output ").Text(tensor->name()->c_str()).Text(" ").Uint(count);
  const auto* bytes = static_cast<const uint8_t*>(data);
  for (uint64_t i = 0; i < count; ++i) {
    out.Text(" ");
    switch (tensor->dtype()) {
      case DType::Float32: {
        float v;
        memcpy(&v, bytes + i * 4, 4);
        out.Float(v);
        break;
      }
      case DType::Int32: {
        int32_t v;
        memcpy(&v, bytes + i * 4, 4);
        out.Int(v);
        break;
      }
      case DType::Int64: {
        int64_t v;
        memcpy(&v, bytes + i * 8, 8);
        out.Int(v);
        break;
      }
      case DType::UInt8:
      case DType::Bool:
        out.Uint(bytes[i]);
        break;
      case DType::Int8:
        out.Int(static_cast<int8_t>(bytes[i]));
        break;
    }
  }
  out.Text("\n");
  out.Flush();
}

// Long-lived objects are static: no heap, and off the stack.
baton::KernelRegistry registry;
baton::cortex_m::CortexMPort port;
baton::Executor executor;

}  // namespace

int main() {
  baton::LoadError error;
  baton::PlanView view;
  baton::Status status = baton::PlanView::Load(baton_plan_data, BATON_PLAN_BYTES, &view, &error);
  if (!status.ok()) return Fail("load", status, error.text);
  status = baton::RegisterReferenceKernels(&registry);
  if (!status.ok()) return Fail("kernels", status, nullptr);
#if BATON_APPLICATION_KERNELS
  // The image's own kernels (custom ops), after the reference ones.
  status = baton::cortex_m::RegisterApplicationKernels(&registry);
  if (!status.ok()) return Fail("application kernels", status, nullptr);
#endif
  status = port.Init(view);
  if (!status.ok()) return Fail("port", status, nullptr);
  status = executor.Init(view, registry, &port,
                         baton::Span<const baton::Buffer>(baton_demo_arenas, BATON_DEMO_NUM_ARENAS),
                         &error);
  if (!status.ok()) return Fail("init", status, error.text);

  const uint64_t start = port.Cycles();
  status = executor.Invoke(
      baton::Span<const baton::ConstBuffer>(baton_demo_inputs, BATON_DEMO_NUM_INPUTS),
      baton::Span<const baton::Buffer>(baton_demo_outputs, BATON_DEMO_NUM_OUTPUTS));
  const uint64_t cycles = port.Cycles() - start;
  if (!status.ok()) return Fail("invoke", status, nullptr);

  for (uint32_t o = 0; o < view.num_outputs(); ++o) {
    PrintOutput(view.output(o), baton_demo_outputs[o].data);
  }
  out.Text("# plan ")
      .Text(view.plan()->name() ? view.plan()->name()->c_str() : "?")
      .Text(": ")
      .Uint(view.num_nodes())
      .Text(" nodes, ")
      .Uint(view.num_queues())
      .Text(" queues, invoke ")
      .Uint(cycles)
      .Text(" cycles (SysTick)\n");
  for (uint32_t q = 0; q < view.num_queues(); ++q) {
    if (!port.simulated(q)) continue;
    const baton::cortex_m::SimStats& s = port.stats(q);
    out.Text("# queue ")
        .Text(view.queue(q)->name()->c_str())
        .Text(" (simulated accelerator): ")
        .Uint(s.submitted)
        .Text(" jobs submitted, ")
        .Uint(s.pending)
        .Text(" polls not ready\n");
  }
  out.Text("# idle waits (WFI): ").Uint(port.idles()).Text("\n");
  out.Text("# ram: executor ")
      .Uint(sizeof(executor))
      .Text(" B, registry ")
      .Uint(sizeof(registry))
      .Text(" B, port ")
      .Uint(sizeof(port))
      .Text(" B, plan view ")
      .Uint(sizeof(view))
      .Text(" B, stack used ")
      .Uint(baton::cortex_m::StackUsedBytes())
      .Text(" of ")
      .Uint(baton::cortex_m::StackSizeBytes())
      .Text(" B\n");
  out.Flush();
  return 0;
}
