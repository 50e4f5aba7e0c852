// baton profile PLAN --input NAME=FILE.npy... -o PROFILE.json [--runs N]
//               [--isa auto|portable|avx2|avx512|avx512vnni|neon_dotprod]
//
// Runs a plan on the Linux port and records each node's measured time on its
// queue: the port's before/after hooks time every Dispatch..completion, so
// the runtime core is untouched. One warm-up inference, then N synchronous
// inferences; each non-copy node gets the median and minimum of its N times
// (copies stay on the target's link model). Format: docs/formats.md,
// "Profiles".

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <unordered_map>

#include "baton/executor.h"
#include "baton/kernels.h"
#include "baton/linux/linux_port.h"
#include "baton/postprocess.h"
#include "baton/planner/analysis/cost.h"
#include "baton/planner/graph.h"
#include "baton/planner/io/npy.h"
#include "baton/planner/profile.h"
#include "baton/planner/target.h"
#include "commands.h"
#include "output_files.h"
#include "plan_inputs.h"

namespace baton::tool {
namespace {

struct ProfileArgs {
  std::string plan;
  std::vector<std::string> inputs;
  std::string output;
  int runs = 20;
  std::string isa = "auto";
};

using Clock = std::chrono::steady_clock;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2;
}

int RunProfile(const ProfileArgs& a) {
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "baton profile: %s\n", message.c_str());
    return 1;
  };
  OutputFiles files;
  files.Add(a.output, "", "-o");
  if (planner::Check paths = files.CheckPaths(); !paths.ok()) return fail(paths.error());
  if (planner::Check isa = SelectIsa(a.isa); !isa.ok()) return fail(isa.error());
  LoadedRunPlan plan;
  if (planner::Check loaded = LoadRunPlan(a.plan, &plan); !loaded.ok()) return fail(loaded.error());
  const PlanView& view = plan.view;
  planner::Result<InputData> inputs = ReadInputs(view, a.inputs, 1);
  if (!inputs.ok()) return fail(inputs.error());

  // Node pointer -> plan index; per queue, when its current node started;
  // per node, its times. Each queue's thread touches only its own entries.
  std::unordered_map<const schema::Node*, uint32_t> index;
  for (uint32_t n = 0; n < view.num_nodes(); ++n) index[view.node(n)] = n;
  std::vector<Clock::time_point> started(view.num_queues());
  std::vector<std::vector<double>> seconds(view.num_nodes());
  std::atomic<bool> recording{false};

  linux_port::Arenas arenas(view);
  if (!arenas.ok()) return fail(a.plan + ": cannot allocate the plan's arenas");
  linux_port::Options options;
  options.before_node = [&started](uint32_t queue, const schema::Node*) {
    started[queue] = Clock::now();
  };
  options.after_node = [&](uint32_t queue, const schema::Node* node, const Status&) {
    const double s = std::chrono::duration<double>(Clock::now() - started[queue]).count();
    if (recording) seconds[index.at(node)].push_back(s);
  };
  linux_port::LinuxPort port(view, arenas.buffers(), options);
  KernelRegistry registry;
  if (!RegisterReferenceKernels(&registry).ok() || !RegisterPostprocessKernels(&registry).ok()) {
    return fail("kernel registration failed");
  }
  auto executor = std::make_unique<Executor>();
  LoadError error;
  Status status = executor->Init(view, registry, &port, arenas.buffers(), &error);
  if (!status.ok()) return fail(a.plan + ": " + error.text);
  if (!port.Start(executor.get()).ok()) return fail("cannot start queue threads");

  std::vector<ConstBuffer> in;
  for (const std::vector<std::string>& d : *inputs) in.push_back({d[0].data(), d[0].size()});
  std::vector<std::vector<uint8_t>> out_bytes(view.num_outputs());
  std::vector<Buffer> out;
  for (uint32_t o = 0; o < view.num_outputs(); ++o) {
    out_bytes[o].resize(view.output(o)->bytes());
    out.push_back({out_bytes[o].data(), out_bytes[o].size()});
  }
  // Invoke returns after the inference is retrieved, when every queue
  // thread has finished its nodes, so `recording` changes between runs only.
  for (int r = 0; r <= a.runs && status.ok(); ++r) {
    recording = r > 0;  // run 0 warms caches and pages in the arenas
    status = executor->Invoke({in.data(), in.size()}, {out.data(), out.size()});
  }
  port.Stop();
  if (!status.ok()) {
    return fail(std::string("inference failed: ") + StatusCodeName(status.code()) + ": " +
                status.message());
  }

  planner::Profile profile;
  profile.plan = a.plan;
  profile.runs = a.runs;
  profile.kernels = KernelIsaName(ActiveKernelIsa());
  for (uint32_t n = 0; n < view.num_nodes(); ++n) {
    const schema::Node* node = view.node(n);
    if (node->op() == schema::Op::Copy) continue;  // copies stay on the link model
    if (seconds[n].empty()) return fail("internal: node '" + node->name()->str() + "' never ran");
    planner::ProfileEntry e;
    e.node = node->name()->str();
    e.op = schema::EnumNameOp(node->op());
    e.device = view.queue(node->queue())->name()->str();
    e.kind = view.queue(node->queue())->kind();
    planner::NodeOperandSignatures(*view.plan(), n, &e.inputs, &e.outputs);
    e.median_s = Median(seconds[n]);
    e.min_s = *std::min_element(seconds[n].begin(), seconds[n].end());
    e.runs = static_cast<int>(seconds[n].size());
    profile.entries.push_back(std::move(e));
  }
  files = OutputFiles();
  files.Add(a.output, planner::ProfileJson(profile), "-o");
  planner::Check written = files.Commit();
  if (!written.ok()) return fail(written.error());
  std::printf("profiled %zu node(s) over %d run(s) (kernels: %s); wrote %s\n",
              profile.entries.size(), a.runs, profile.kernels.c_str(), a.output.c_str());
  return 0;
}

}  // namespace

void AddProfileCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ProfileArgs>();
  CLI::App* cmd = app.add_subcommand(
      "profile", "Run a plan on this machine (Linux port) and record each node's measured time");
  cmd->add_option("plan", args->plan, "Plan file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--input", args->inputs, "NAME=FILE.npy for every graph input")->required();
  cmd->add_option("-o,--output", args->output, "Profile JSON to write")->required();
  cmd->add_option("--runs", args->runs, "Timed inferences (median and minimum per node; default 20)")
      ->check(CLI::Range(1, 100000));
  AddIsaOption(cmd, &args->isa);
  cmd->callback([args, exit_code] { *exit_code = RunProfile(*args); });
}

}  // namespace baton::tool
