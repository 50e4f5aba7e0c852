// baton plan MODEL [--target T.json] [--assign PATTERN=DEVICE]... [--split A,B,...]
//            [--in-flight D] [--profile P.json]... -o PLAN [--header H] [--report R.json]
//            [--dot G.dot] [--custom-op DOMAIN::NAME]...

#include <cstdio>
#include <iostream>
#include <memory>

#include "baton/planner/emit/emit.h"
#include "baton/planner/import/import_json.h"
#include "baton/planner/io/npy.h"
#include "baton/planner/planner.h"
#include "commands.h"
#include "output_files.h"

namespace baton::tool {
namespace {

struct PlanArgs {
  std::string model;
  std::string target;
  std::vector<std::string> assign;
  std::vector<std::string> custom_ops;
  std::vector<std::string> split;
  int in_flight = 1;
  double pack_time = 2.0;
  std::string output;
  std::string header;
  std::string report;
  std::string dot;
  bool quiet = false;
  bool auto_partition = false;
  std::string objective = "throughput";
  int max_in_flight = 4;
  std::vector<std::string> profiles;
  double auto_time_limit = 60.0;
  int auto_threads = 2;
  bool winograd_weights = false;
};

// The plan and the optional header, report and dot graph; with no program
// yet, empty files at the same paths (to check the paths before planning).
void AddPlanOutputs(const PlanArgs& a, const planner::Program* program, OutputFiles* files,
                    const std::string& bytes = "") {
  using namespace baton::planner;
  files->Add(a.output, bytes, "-o");
  if (!a.header.empty()) {
    files->Add(a.header, program ? EmitHeader(*program, bytes, a.model) : "", "--header");
  }
  if (!a.report.empty()) files->Add(a.report, program ? EmitReport(*program, a.model) : "", "--report");
  if (!a.dot.empty()) files->Add(a.dot, program ? EmitDot(*program) : "", "--dot");
}

int RunPlan(const PlanArgs& a) {
  using namespace baton::planner;
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "baton plan: %s\n", message.c_str());
    return 1;
  };
  OutputFiles files;
  AddPlanOutputs(a, {}, &files);
  Check paths = files.CheckPaths();
  if (!paths.ok()) return fail(paths.error());
  Target target = DefaultCpuTarget();
  if (!a.target.empty()) {
    Result<Target> loaded = LoadTarget(a.target);
    if (!loaded.ok()) return fail(loaded.error());
    target = std::move(loaded).value();
  }
  // Custom ops: those --custom-op declares (the fallback device runs them)
  // and those a device of the target lists.
  for (const std::string& op : a.custom_ops) {
    Check declared = DeclareCustomOp(op, &target);
    if (!declared.ok()) return fail(declared.error());
  }
  ImportOptions import_options;
  import_options.custom_ops = ListedCustomOps(target);
  Result<Graph> graph = ImportModel(a.model, import_options);
  if (!graph.ok()) return fail(graph.error());
  if (!a.profiles.empty()) {
    Profile merged;
    for (const std::string& path : a.profiles) {
      Result<Profile> loaded = LoadProfile(path);
      if (!loaded.ok()) return fail(loaded.error());
      merged.Merge(loaded.value());
    }
    target.profile = std::make_shared<const Profile>(std::move(merged));
  }
  PlanOptions options;
  options.in_flight = a.in_flight;
  // Each --split value is a comma-separated list; empty names stay in, so
  // that the planner reports them.
  for (const std::string& list : a.split) {
    size_t start = 0;
    for (size_t comma; (comma = list.find(',', start)) != std::string::npos; start = comma + 1) {
      options.split.push_back(list.substr(start, comma - start));
    }
    options.split.push_back(list.substr(start));
  }
  options.pack_time_limit_s = a.pack_time;
  options.auto_partition = a.auto_partition;
  options.objective = a.objective;
  options.max_in_flight = a.max_in_flight;
  options.auto_time_limit_s = a.auto_time_limit;
  options.auto_threads = a.auto_threads;
  options.winograd_weights = a.winograd_weights;
  for (const std::string& rule : a.assign) {
    Result<AssignRule> parsed = ParseAssignRule(rule);
    if (!parsed.ok()) return fail(parsed.error());
    options.rules.push_back(parsed.value());
  }
  Result<Program> program = PlanGraph(std::move(graph).value(), std::move(target), options);
  if (!program.ok()) return fail(program.error());
  Result<std::string> bytes = EmitPlan(program.value());
  if (!bytes.ok()) return fail(bytes.error());
  Check verified = VerifyWithRuntime(bytes.value());
  if (!verified.ok()) return fail(verified.error());

  files = OutputFiles();
  AddPlanOutputs(a, &program.value(), &files, bytes.value());
  Check written = files.Commit();
  if (!written.ok()) return fail(written.error());

  if (!a.quiet) {
    const Program& p = program.value();
    std::printf("planned %s for %s: %zu nodes (%d copies), %zu queues, %d stage(s), %d in flight\n",
                a.model.c_str(), p.target.name.c_str(), p.graph.nodes.size(), p.NumCopies(),
                p.queues.size(), p.num_stages, p.in_flight);
    for (size_t d = 0; d < p.target.domains.size(); ++d) {
      const DomainReport& r = p.domain_report[d];
      if (r.arena_bytes == 0) continue;
      std::printf("  arena %-10s %10llu bytes (lower bound %llu, capacity %llu)\n",
                  p.target.domains[d].name.c_str(), static_cast<unsigned long long>(r.arena_bytes),
                  static_cast<unsigned long long>(r.lower_bound_bytes),
                  static_cast<unsigned long long>(p.target.domains[d].bytes));
    }
    for (const Fallback& f : p.fallbacks) {
      std::printf("  fallback: %s (%s) requested %s, placed on %s: %s\n", f.node.c_str(),
                  f.op.c_str(), f.requested.c_str(), f.placed.c_str(), f.reason.c_str());
    }
    for (const std::string& w : p.warnings) std::printf("  warning: %s\n", w.c_str());
    if (p.target.profile != nullptr) {
      int measured = 0;
      for (const std::string& source : p.summary.node_cost_source) measured += source == "profile";
      std::printf("  profile: %d node(s) costed from measurements; %d of %d entries matched\n",
                  measured, p.summary.profile_entries_matched, p.summary.profile_entries);
    }
    if (!p.auto_report.ran && p.summary.present && p.summary.bottleneck_queue >= 0) {
      std::printf("  predicted: %.1f inferences/s (bound %.1f/s), latency %.3f ms, bottleneck %s\n",
                  p.summary.throughput_per_s, p.summary.bound_throughput_per_s,
                  p.summary.latency_s * 1e3, p.queues[p.summary.bottleneck_queue].name.c_str());
    }
    if (p.auto_report.ran) {
      const AutoReport& r = p.auto_report;
      std::printf("  auto (%s): %.1f inferences/s predicted (bound %.1f/s), latency %.3f ms, "
                  "bottleneck %s\n",
                  r.objective.c_str(), r.throughput_per_s, r.bound_throughput_per_s,
                  r.latency_s * 1e3, r.bottleneck_queue.c_str());
      if (r.time_limit_hit) {
        std::printf("  --auto-time-limit reached: the best plan found so far was kept\n");
      }
      if (r.best_single_throughput_per_s > 0) {
        std::printf("  best single device: %s at %.1f inferences/s (D=%d); speed-up %.2fx\n",
                    r.best_single_device.c_str(), r.best_single_throughput_per_s,
                    r.best_single_in_flight, r.throughput_per_s / r.best_single_throughput_per_s);
      }
      for (size_t q = 0; q < r.queues.size(); ++q) {
        std::printf("    %-10s busy %8.3f ms per inference, utilization %5.1f%%\n",
                    r.queues[q].c_str(), r.queue_busy_s[q] * 1e3, r.utilization[q] * 100);
      }
    }
    std::printf("wrote %s (%zu bytes)\n", a.output.c_str(), bytes.value().size());
  }
  return 0;
}

}  // namespace

void AddPlanCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand("plan", "Plan a model (ONNX or graph JSON) for a target");
  cmd->add_option("model", args->model, "Model: .onnx or graph .json")->required()->check(CLI::ExistingFile);
  cmd->add_option("--target", args->target, "Target description JSON (default: one CPU)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--assign", args->assign,
                  "PATTERN=DEVICE: op type (Conv), node (@conv1) or k-th node of an op (Conv#0); "
                  "later rules win");
  // One value per --split, a comma-separated list split above: CLI11's own
  // delimiter drops empty names and then takes the next option as a value.
  cmd->add_option("--split", args->split, "Node names at which new pipeline stages begin (A,B,...)")
      ->allow_extra_args(false);
  cmd->add_option("--in-flight", args->in_flight, "Inferences in flight (pipeline depth)")
      ->check(CLI::Range(1, 16));
  cmd->add_flag("--auto", args->auto_partition,
                "Choose devices, stages and the in-flight depth automatically (rules become pins)");
  cmd->add_option("--objective", args->objective, "--auto objective: throughput or latency")
      ->check(CLI::IsMember({"throughput", "latency"}));
  cmd->add_option("--max-in-flight", args->max_in_flight,
                  "--auto: largest in-flight depth to consider (default 4)")
      ->check(CLI::Range(1, 16));
  cmd->add_option("--auto-time-limit", args->auto_time_limit,
                  "--auto: wall seconds after which the search keeps the best plan so far "
                  "(default 60)")
      ->check(CLI::Range(0.0, 86400.0));
  cmd->add_option("--auto-threads", args->auto_threads,
                  "--auto: threads planning candidates, 1 or 2 (default 2; same plan either way)")
      ->check(CLI::Range(1, 2));
  cmd->add_flag("--winograd-weights", args->winograd_weights,
                "Store each Winograd-eligible 3x3 Conv's weights transformed too (the plan grows "
                "by 16/9 of them; those layers run faster on the CPU kernels)");
  cmd->add_option("--pack-time-limit", args->pack_time, "Seconds the arena packer may search per domain")
      ->check(CLI::Range(0.0, 3600.0));
  cmd->add_option("--profile", args->profiles,
                  "Measured node times from `baton profile` (repeatable): used where op, shapes, "
                  "dtypes and device kind match; the target's cost model elsewhere")
      ->check(CLI::ExistingFile);
  cmd->add_option("--custom-op", args->custom_ops,
                  "DOMAIN::NAME (repeatable): plan this op (e.g. com.example::MyOp; default "
                  "domain: ai.onnx::Name) as a custom op whose kernel the application registers; "
                  "the fallback device runs it")
      ->allow_extra_args(false);
  cmd->add_option("-o,--output", args->output, "Plan file to write")->required();
  cmd->add_option("--header", args->header, "C header to write (plan bytes + arena sizes)");
  cmd->add_option("--report", args->report, "JSON report to write");
  cmd->add_option("--dot", args->dot, "Graphviz file of the partitioned graph");
  cmd->add_flag("-q,--quiet", args->quiet, "Print nothing on success");
  cmd->callback([args, exit_code] { *exit_code = RunPlan(*args); });
}

}  // namespace baton::tool
