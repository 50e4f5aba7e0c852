// baton run PLAN --input NAME=FILE.npy... --output-dir DIR [--inferences N] [--repeat N]
//           [--isa auto|portable|avx2|avx512|avx512vnni|neon_dotprod]

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>

#include "baton/executor.h"
#include "baton/linux/linux_port.h"
#include "baton/postprocess.h"
#ifdef BATON_HAVE_ARMNN
#include "baton/linux/armnn_plugin.h"
#endif
#include "baton/planner/graph.h"
#include "baton/planner/io/npy.h"
#include "commands.h"
#include "output_files.h"
#include "plan_inputs.h"

namespace baton::tool {
namespace {

using planner::NpyArray;

struct RunArgs {
  std::string plan;
  std::vector<std::string> inputs;
  std::string output_dir;
  int inferences = 0;
  int repeat = 0;
  bool cooperative = false;
  std::vector<int> affinity;
  // --cpu-set, in queue order: "C0+C1+..." per queue.
  std::vector<std::string> cpu_sets;
  std::string isa = "auto";
};

std::string FileName(const std::string& tensor) {
  std::string out = tensor;
  for (char& c : out) {
    if (c == '/' || c == '\\' || c == ':') c = '_';
  }
  return out;
}

// Per inference, the bytes of each output.
using OutputData = std::vector<std::vector<std::vector<uint8_t>>>;

// Host memory for one inference's outputs.
struct OutputBuffers {
  explicit OutputBuffers(const PlanView& view)
      : bytes(view.num_outputs()), buffers(view.num_outputs()) {
    for (uint32_t o = 0; o < view.num_outputs(); ++o) {
      bytes[o].resize(view.output(o)->bytes());
      buffers[o] = {bytes[o].data(), bytes[o].size()};
    }
  }
  OutputBuffers(const OutputBuffers&) = delete;
  OutputBuffers& operator=(const OutputBuffers&) = delete;
  Span<const Buffer> span() const { return {buffers.data(), buffers.size()}; }

  std::vector<std::vector<uint8_t>> bytes;
  std::vector<Buffer> buffers;
};

// Pushes `count` inferences through the asynchronous API, collecting each
// one's outputs when SetInput reports the pipeline full, then the rest.
planner::Result<OutputData> RunInferences(Executor* executor, const PlanView& view,
                                          const InputData& input_data, int count) {
  OutputBuffers out(view);
  OutputData results;
  auto collect = [&]() -> Status {
    BATON_RETURN_IF_ERROR(executor->Wait());
    BATON_RETURN_IF_ERROR(executor->GetOutputs(out.span()));
    results.push_back(out.bytes);
    return Status::Ok();
  };
  Status status;
  for (int k = 0; k < count; ++k) {
    for (uint32_t i = 0; i < view.num_inputs(); ++i) {
      for (;;) {
        status = executor->SetInput(i, input_data[i][k].data(), input_data[i][k].size());
        if (status.code() != StatusCode::kBusy) break;
        status = collect();
        if (!status.ok()) break;
      }
      if (!status.ok()) break;
    }
    if (status.ok()) status = executor->Run();
    if (!status.ok()) {
      return planner::Fail(std::string("inference ") + std::to_string(k) + ": " + status.message());
    }
  }
  executor->Flush();
  while (status.ok() && executor->in_flight() > 0) status = collect();
  if (!status.ok()) {
    return planner::Fail(std::string("inference failed: ") + StatusCodeName(status.code()) + ": " +
                         status.message());
  }
  return results;
}

// Times `repeat` synchronous runs on each input's first slice and prints the
// median and minimum latency.
planner::Check TimeRuns(Executor* executor, const PlanView& view, const InputData& input_data,
                        int repeat) {
  std::vector<ConstBuffer> in_buffers;
  for (uint32_t i = 0; i < view.num_inputs(); ++i) {
    in_buffers.push_back({input_data[i][0].data(), input_data[i][0].size()});
  }
  OutputBuffers out(view);
  std::vector<double> ms;
  for (int r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    Status status = executor->Invoke({in_buffers.data(), in_buffers.size()}, out.span());
    auto end = std::chrono::steady_clock::now();
    if (!status.ok()) return planner::Fail(std::string("repeat: ") + status.message());
    ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
  }
  std::sort(ms.begin(), ms.end());
  std::printf("latency over %d runs: median %.3f ms, min %.3f ms (kernels: %s)\n", repeat,
              ms[ms.size() / 2], ms[0], KernelIsaName(ActiveKernelIsa()));
  return {};
}

// DIR/<output>.npy, or DIR/<inference>/<output>.npy when `per_inference`,
// for `count` inferences; empty files when there are no results yet (to
// check the paths before running).
void AddRunOutputs(const PlanView& view, const OutputData* results, int count,
                   const std::string& output_dir, bool per_inference, OutputFiles* files) {
  files->AddDirectory(output_dir, "--output-dir");
  for (int k = 0; k < count; ++k) {
    std::string dir = output_dir;
    if (per_inference) {
      dir += "/" + std::to_string(k);
      files->AddDirectory(dir);
    }
    for (uint32_t o = 0; o < view.num_outputs(); ++o) {
      const schema::Tensor* t = view.output(o);
      std::string bytes;
      if (results != nullptr) {
        NpyArray array;
        array.dtype = t->dtype();
        if (t->shape() != nullptr) array.shape.assign(t->shape()->begin(), t->shape()->end());
        array.data = (*results)[k][o];
        bytes = planner::SerializeNpy(array);
      }
      files->Add(dir + "/" + FileName(t->name()->str()) + ".npy", std::move(bytes));
    }
  }
}

// --affinity: at most one CPU per queue, each one this process may run on.
planner::Check CheckAffinity(const std::vector<int>& affinity, uint32_t num_queues) {
  if (affinity.size() > num_queues) {
    return planner::Fail("--affinity lists " + std::to_string(affinity.size()) +
                         " CPUs but the plan has " + std::to_string(num_queues) + " queues");
  }
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    return planner::Fail("--affinity: cannot read this process's CPU set");
  }
  for (int cpu : affinity) {
    if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &allowed)) {
      return planner::Fail("--affinity " + std::to_string(cpu) +
                           ": not a CPU this process may run on (" +
                           std::to_string(CPU_COUNT(&allowed)) + " available)");
    }
  }
  return {};
}

// --cpu-set: per queue (in queue order) a '+'-separated list of CPUs; thread
// i of a queue (0: its own, then its intra-op workers) runs on the i-th
// (modulo the count). Every CPU must pass CheckAffinity's test.
planner::Result<std::vector<std::vector<int>>> ParseCpuSets(const std::vector<std::string>& sets,
                                                            uint32_t num_queues) {
  if (sets.size() > num_queues) {
    return planner::Fail("--cpu-set lists " + std::to_string(sets.size()) +
                         " CPU sets but the plan has " + std::to_string(num_queues) + " queues");
  }
  std::vector<std::vector<int>> out;
  for (const std::string& s : sets) {
    std::vector<int> cpus;
    size_t start = 0;
    while (start <= s.size()) {
      const size_t end = std::min(s.find('+', start), s.size());
      const std::string item = s.substr(start, end - start);
      if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos ||
          item.size() > 6) {
        return planner::Fail("--cpu-set '" + s + "': want CPU numbers joined by '+' (0+1)");
      }
      cpus.push_back(std::stoi(item));
      start = end + 1;
    }
    planner::Check allowed = CheckAffinity(cpus, static_cast<uint32_t>(cpus.size()));
    if (!allowed.ok()) return planner::Fail("--cpu-set '" + s + "': " + allowed.error());
    out.push_back(std::move(cpus));
  }
  return out;
}

int RunRun(const RunArgs& a) {
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "baton run: %s\n", message.c_str());
    return 1;
  };
  planner::Check isa = SelectIsa(a.isa);
  if (!isa.ok()) return fail(isa.error());
  LoadedRunPlan plan;
  if (planner::Check loaded = LoadRunPlan(a.plan, &plan); !loaded.ok()) return fail(loaded.error());
  const PlanView& view = plan.view;
  const int count = a.inferences > 0 ? a.inferences : 1;
  const bool per_inference = a.inferences > 0;
  OutputFiles files;
  AddRunOutputs(view, nullptr, count, a.output_dir, per_inference, &files);
  planner::Check paths = files.CheckPaths();
  if (!paths.ok()) return fail(paths.error());
  planner::Check affinity = CheckAffinity(a.affinity, view.num_queues());
  if (!affinity.ok()) return fail(affinity.error());
  planner::Result<std::vector<std::vector<int>>> cpu_sets =
      ParseCpuSets(a.cpu_sets, view.num_queues());
  if (!cpu_sets.ok()) return fail(cpu_sets.error());
  planner::Result<InputData> input_data = ReadInputs(view, a.inputs, count);
  if (!input_data.ok()) return fail(input_data.error());

  linux_port::Arenas arenas(view);
  if (!arenas.ok()) return fail(a.plan + ": cannot allocate the plan's arenas");
  linux_port::Options options;
  options.threaded = !a.cooperative;
  options.affinity = a.affinity;
  options.cpu_sets = std::move(cpu_sets).value();
  linux_port::LinuxPort port(view, arenas.buffers(), options);
  KernelRegistry registry;
  if (!RegisterReferenceKernels(&registry).ok() || !RegisterPostprocessKernels(&registry).ok()) {
    return fail("kernel registration failed");
  }
#ifdef BATON_HAVE_ARMNN
  // Arm NN regions (Subgraph nodes named "armnn") on the device kinds whose
  // queues hold them. Without Arm NN the loader names "armnn" as missing.
  bool armnn_kinds[kNumDeviceKinds] = {};
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    const auto* custom = view.node(n)->params_as_CustomParams();
    if (view.node(n)->op() == Op::Subgraph && custom && custom->name()->str() == "armnn") {
      armnn_kinds[static_cast<uint32_t>(view.queue(view.node(n)->queue())->kind())] = true;
    }
  }
  for (uint32_t k = 0; k < kNumDeviceKinds; ++k) {
    if (armnn_kinds[k] && !RegisterArmnnRuntime(&registry, static_cast<DeviceKind>(k)).ok()) {
      return fail("Arm NN registration failed");
    }
  }
#endif
  auto executor = std::make_unique<Executor>();
  LoadError error;
  const Status status = executor->Init(view, registry, &port, arenas.buffers(), &error);
  if (!status.ok()) return fail(a.plan + ": " + error.text);
  if (!port.Start(executor.get()).ok()) return fail("cannot start queue threads");

  planner::Result<OutputData> results = RunInferences(executor.get(), view, *input_data, count);
  planner::Check timed;
  if (results.ok() && a.repeat > 0) timed = TimeRuns(executor.get(), view, *input_data, a.repeat);
  port.Stop();
  if (!results.ok()) return fail(results.error());
  if (!timed.ok()) return fail(timed.error());

  files = OutputFiles();
  AddRunOutputs(view, &results.value(), static_cast<int>(results->size()), a.output_dir,
                per_inference, &files);
  planner::Check written = files.Commit();
  if (!written.ok()) return fail(written.error());
  if (a.repeat == 0) {
    std::printf("ran %zu inference(s); outputs in %s\n", results->size(), a.output_dir.c_str());
  }
  return 0;
}

}  // namespace

void AddRunCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "Run a plan on this machine (Linux port)");
  cmd->add_option("plan", args->plan, "Plan file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--input", args->inputs, "NAME=FILE.npy for every graph input")->required();
  cmd->add_option("--output-dir", args->output_dir, "Directory for <output>.npy files")->required();
  cmd->add_option("--inferences", args->inferences,
                  "Push N inferences through the async pipeline API; writes DIR/<i>/<output>.npy")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--repeat", args->repeat, "Time N synchronous runs; print median and minimum latency")
      ->check(CLI::Range(1, 1000000));
  cmd->add_flag("--cooperative", args->cooperative,
                "Single-thread cooperative executor (the bare-metal one) instead of a thread per queue");
  cmd->add_option("--affinity", args->affinity, "CPU to pin each queue's thread to, in queue order")
      ->delimiter(',');
  cmd->add_option("--cpu-set", args->cpu_sets,
                  "CPUs of each queue in queue order, '+'-joined (0+1,2): thread i of a queue "
                  "(0: its own, then the workers of a CPU queue with threads > 1) on the i-th")
      ->delimiter(',');
  AddIsaOption(cmd, &args->isa);
  cmd->callback([args, exit_code] { *exit_code = RunRun(*args); });
}

}  // namespace baton::tool
