// run_custom_op PLAN INPUT.npy OUTPUT.npy
//
// What `baton run` does, plus one line: the application's own kernel for
// com.example::MyOp is registered next to Baton's reference kernels. A plan
// with one input and one output runs once on the Linux port (one thread per
// queue) and its output is written as .npy.

#include <cstdio>
#include <memory>
#include <string>

#include "baton/executor.h"
#include "baton/linux/linux_port.h"
#include "baton/planner/io/npy.h"
#include "my_op_kernel.h"

namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "run_custom_op: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace baton;
  if (argc != 4) return Fail("usage: run_custom_op PLAN INPUT.npy OUTPUT.npy");
  auto file = planner::ReadFile(argv[1]);
  if (!file.ok()) return Fail(file.error());
  linux_port::AlignedBytes bytes(file.value().data(), file.value().size());
  PlanView view;
  LoadError error;
  if (!PlanView::Load(bytes.data(), bytes.size(), &view, &error).ok()) return Fail(error.text);
  if (view.num_inputs() != 1 || view.num_outputs() != 1) {
    return Fail("expects a plan with one input and one output");
  }
  auto input = planner::ReadNpy(argv[2]);
  if (!input.ok()) return Fail(input.error());
  if (input.value().data.size() != view.input(0)->bytes()) {
    return Fail(std::string(argv[2]) + ": wrong size for the plan's input");
  }

  KernelRegistry registry;
  if (!RegisterReferenceKernels(&registry).ok()) return Fail("registering reference kernels");
  // The one line a custom op adds: its kernel, by name.
  if (!example::RegisterMyOp(&registry).ok()) return Fail("registering com.example::MyOp");

  linux_port::Arenas arenas(view);
  if (!arenas.ok()) return Fail("cannot allocate the plan's arenas");
  linux_port::LinuxPort port(view, arenas.buffers());
  auto executor = std::make_unique<Executor>();
  if (!executor->Init(view, registry, &port, arenas.buffers(), &error).ok()) {
    return Fail(error.text);
  }
  if (!port.Start(executor.get()).ok()) return Fail("cannot start the queue threads");
  planner::NpyArray output;
  output.dtype = view.output(0)->dtype();
  output.shape.assign(view.output(0)->shape()->begin(), view.output(0)->shape()->end());
  output.data.resize(view.output(0)->bytes());
  const ConstBuffer in[] = {{input.value().data.data(), input.value().data.size()}};
  const Buffer out[] = {{output.data.data(), output.data.size()}};
  const Status status = executor->Invoke(in, out);
  port.Stop();
  if (!status.ok()) return Fail(std::string("inference failed: ") + status.message());
  auto written = planner::WriteNpy(argv[3], output);
  if (!written.ok()) return Fail(written.error());
  std::printf("wrote %s\n", argv[3]);
  return 0;
}
