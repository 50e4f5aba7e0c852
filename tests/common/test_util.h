#pragma once
// Shared helpers for Baton's host tests: generated graphs, planning in
// process, running a plan on the Linux port, and comparing outputs.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "baton/executor.h"
#include "baton/linux/linux_port.h"
#include "baton/planner/emit/emit.h"
#include "baton/planner/import/import_json.h"
#include "baton/planner/io/npy.h"
#include "baton/planner/planner.h"
#include "baton/planner/analysis/validate_plan.h"

namespace baton::test {

inline std::string TargetPath(const std::string& name) {
  return std::string(BATON_SOURCE_DIR) + "/ports/linux/targets/" + name + ".json";
}

// Runs the shell `command` that writes the generated cases of `dir` once per
// build directory: under flock(1) on dir.lock, unless dir/done exists, which
// it creates when the command succeeds. ctest runs each gtest case as its
// own process, several at once; without the lock two of them wrote the same
// folder and one read a half-written file (FoldModels.Arange: "not a .npy
// file (bad magic)"). False when the command failed.
inline bool GenerateOnce(const std::string& dir, const std::string& command) {
  const std::string cmd = "mkdir -p " + dir + " && flock " + dir + ".lock -c '[ -f " + dir +
                          "/done ] || { " + command + " && touch " + dir + "/done; }'";
  return std::system(cmd.c_str()) == 0;
}

// The folder tests/e2e/make_graphs.py writes (CTest runs it once as a
// fixture; a test binary run by hand generates it, under a lock, if absent).
inline const std::string& GraphDir() {
  static const std::string dir = [] {
    std::string d = std::string(BATON_BINARY_DIR) + "/test_graphs";
    std::string cmd = std::string(BATON_PYTHON) + " " + BATON_SOURCE_DIR +
                      "/tests/e2e/make_graphs.py " + d;
    if (!GenerateOnce(d, cmd)) ADD_FAILURE() << "failed: " << cmd;
    return d;
  }();
  return dir;
}

inline std::string GraphPath(const std::string& graph) { return GraphDir() + "/" + graph + ".json"; }

// Runs tests/conformance/<script> OUT_DIR once per test process, with
// OUT_DIR = BATON_BINARY_DIR/conformance/<name> (output in OUT_DIR.log), and
// returns OUT_DIR. The scripts skip work when their cases are current and
// lock against the other tests of the binary running them at the same time.
inline std::string ConformanceCases(const std::string& script, const std::string& name) {
  const std::string d = std::string(BATON_BINARY_DIR) + "/conformance/" + name;
  const std::string cmd = std::string(BATON_PYTHON) + " " + BATON_SOURCE_DIR +
                          "/tests/conformance/" + script + " " + d + " > " + d + ".log 2>&1";
  std::system(("mkdir -p " + std::string(BATON_BINARY_DIR) + "/conformance").c_str());
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return d;
}

struct PlanSpec {
  PlanSpec(std::string model_path, std::string target_name = "cpu",
           std::vector<std::string> rules = {}, std::vector<std::string> splits = {},
           int depth = 1)
      : model(std::move(model_path)), target(std::move(target_name)), assign(std::move(rules)),
        split(std::move(splits)), in_flight(depth) {}
  std::string model;
  std::string target;
  std::vector<std::string> assign;
  std::vector<std::string> split;
  int in_flight;
  bool auto_partition = false;  // baton plan --auto (rules become pins)
  // No wall-clock limit by default: --auto then stops on its deterministic
  // work budget alone, so a slow (sanitized, loaded) run plans the same.
  double auto_time_limit_s = 1e7;
};

// Plans in process; fails the test (and returns "") on error. Every plan is
// also checked by the independent validator (races, deadlock, read-before-
// write over several unrolled inferences) and by the runtime's loader.
inline std::string PlanBytes(const PlanSpec& spec, planner::Program* out_program = nullptr) {
  auto graph = planner::ImportModel(spec.model);
  EXPECT_TRUE(graph.ok()) << graph.error();
  if (!graph.ok()) return "";
  auto target = planner::LoadTarget(TargetPath(spec.target));
  EXPECT_TRUE(target.ok()) << target.error();
  if (!target.ok()) return "";
  planner::PlanOptions options;
  options.in_flight = spec.in_flight;
  options.split = spec.split;
  options.auto_partition = spec.auto_partition;
  options.auto_time_limit_s = spec.auto_time_limit_s;
  for (const auto& r : spec.assign) options.rules.push_back(planner::ParseAssignRule(r).value());
  auto program = planner::PlanGraph(std::move(graph).value(), std::move(target).value(), options);
  EXPECT_TRUE(program.ok()) << program.error();
  if (!program.ok()) return "";
  auto bytes = planner::EmitPlan(program.value());
  EXPECT_TRUE(bytes.ok()) << bytes.error();
  if (!bytes.ok()) return "";
  auto verified = planner::VerifyWithRuntime(bytes.value());
  EXPECT_TRUE(verified.ok()) << verified.error();
  auto valid = planner::ValidatePlanSchedule(bytes.value().data(), bytes.value().size());
  EXPECT_TRUE(valid.ok()) << spec.model << " on " << spec.target << ": " << valid.error();
  if (out_program) *out_program = program.value();
  return bytes.value();
}

using Tensors = std::vector<std::vector<uint8_t>>;

// A loaded plan bound to fresh arenas on the Linux port.
class Runner {
 public:
  // `register_more` adds kernels (custom ops) after the reference kernels.
  explicit Runner(const std::string& bytes, linux_port::Options options = {},
                  Status (*register_more)(KernelRegistry*) = nullptr)
      : bytes_(bytes.data(), bytes.size()) {
    LoadError error;
    status_ = PlanView::Load(bytes_.data(), bytes_.size(), &view_, &error);
    EXPECT_TRUE(status_.ok()) << error.text;
    if (!status_.ok()) return;
    arenas_ = std::make_unique<linux_port::Arenas>(view_);
    EXPECT_TRUE(arenas_->ok());
    port_ = std::make_unique<linux_port::LinuxPort>(view_, arenas_->buffers(), std::move(options));
    EXPECT_TRUE(RegisterReferenceKernels(&registry_).ok());
    if (register_more != nullptr) {
      EXPECT_TRUE(register_more(&registry_).ok());
    }
    executor_ = std::make_unique<Executor>();
    status_ = executor_->Init(view_, registry_, port_.get(), arenas_->buffers(), &error);
    EXPECT_TRUE(status_.ok()) << error.text;
    if (status_.ok()) status_ = port_->Start(executor_.get());
  }
  ~Runner() {
    if (port_) port_->Stop();
  }
  bool ok() const { return status_.ok(); }
  Executor& executor() { return *executor_; }
  const PlanView& view() const { return view_; }

  Tensors OutputBuffers() const {
    Tensors out(view_.num_outputs());
    for (uint32_t o = 0; o < view_.num_outputs(); ++o) out[o].resize(view_.output(o)->bytes());
    return out;
  }

  // One synchronous inference.
  Status Invoke(const Tensors& inputs, Tensors* outputs) {
    *outputs = OutputBuffers();
    std::vector<ConstBuffer> in;
    for (const auto& t : inputs) in.push_back({t.data(), t.size()});
    std::vector<Buffer> out;
    for (auto& t : *outputs) out.push_back({t.data(), t.size()});
    return executor_->Invoke({in.data(), in.size()}, {out.data(), out.size()});
  }

  // N inferences through the async API; results[i] are inference i's outputs
  // (empty when it failed, with the failure's status in statuses[i]).
  void Stream(const std::vector<Tensors>& inputs, std::vector<Tensors>* results,
              std::vector<StatusCode>* statuses) {
    results->clear();
    statuses->clear();
    Tensors outputs = OutputBuffers();
    std::vector<Buffer> out;
    for (auto& t : outputs) out.push_back({t.data(), t.size()});
    auto collect = [&] {
      Status s = executor_->Wait();
      ASSERT_TRUE(s.ok()) << s.message();
      s = executor_->GetOutputs({out.data(), out.size()});
      statuses->push_back(s.code());
      results->push_back(s.ok() ? outputs : Tensors());
    };
    for (const Tensors& in : inputs) {
      for (uint32_t i = 0; i < in.size(); ++i) {
        Status s;
        while ((s = executor_->SetInput(i, in[i].data(), in[i].size())).code() == StatusCode::kBusy) {
          collect();
        }
        ASSERT_TRUE(s.ok()) << s.message();
      }
      ASSERT_TRUE(executor_->Run().ok());
    }
    executor_->Flush();
    while (executor_->in_flight() > 0) collect();
  }

 private:
  linux_port::AlignedBytes bytes_;
  PlanView view_;
  KernelRegistry registry_;
  std::unique_ptr<linux_port::Arenas> arenas_;
  std::unique_ptr<linux_port::LinuxPort> port_;
  std::unique_ptr<Executor> executor_;
  Status status_;
};

inline std::vector<uint8_t> LoadNpyBytes(const std::string& path) {
  auto a = planner::ReadNpy(path);
  EXPECT_TRUE(a.ok()) << a.error();
  return a.ok() ? a.value().data : std::vector<uint8_t>();
}

inline std::vector<float> AsFloats(const std::vector<uint8_t>& bytes) {
  std::vector<float> out(bytes.size() / 4);
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * 4);
  return out;
}

// max |a - b| / max |b|
inline double RelativeError(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return 1e30;
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, static_cast<double>(std::abs(a[i] - b[i])));
    den = std::max(den, static_cast<double>(std::abs(b[i])));
  }
  return den == 0 ? num : num / den;
}

inline double MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return 1e30;
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, static_cast<double>(std::abs(a[i] - b[i])));
  return m;
}

// Plans `model` for ports/linux/targets/cpu.json and for soc4.json with
// `soc4_rules`, runs each on the Linux port and expects
// max |out - expected| <= 1e-4 max |expected| on the first output; on soc4
// at least one node must run off the CPU (the rules took effect).
inline void ExpectMatchesOnCpuAndSoc4(const std::string& model, const std::vector<uint8_t>& input,
                                      const std::vector<float>& expected,
                                      const std::vector<std::string>& soc4_rules,
                                      const std::string& what) {
  for (const char* target : {"cpu", "soc4"}) {
    SCOPED_TRACE(what + " on " + target);
    const bool soc4 = target == std::string("soc4");
    planner::Program program;
    const std::string bytes =
        PlanBytes(PlanSpec(model, target, soc4 ? soc4_rules : std::vector<std::string>{}), &program);
    ASSERT_FALSE(bytes.empty());
    Runner runner(bytes);
    ASSERT_TRUE(runner.ok());
    Tensors outputs;
    Status s = runner.Invoke({input}, &outputs);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_LE(RelativeError(AsFloats(outputs[0]), expected), 1e-4);
    if (soc4) {
      int on_accelerators = 0;
      for (size_t n = 0; n < program.graph.nodes.size(); ++n) {
        on_accelerators += program.queues[program.node_queue[n]].kind != schema::DeviceKind::Cpu;
      }
      EXPECT_GT(on_accelerators, 0);
    }
  }
}

}  // namespace baton::test
