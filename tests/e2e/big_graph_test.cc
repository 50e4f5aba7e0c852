// `--auto` on a 500-node graph (tools/make_big_graph.py: residual, inception
// and squeeze-excite blocks, two inputs, one output per stage) on soc4: the
// plan passes the runtime's loader and the independent plan validator, is
// not slower than the best single device, and computes, over a stream of
// pipelined inferences, the outputs of the single-CPU plan. The planner's
// run time is measured by tools/bench_planner.py, not here.

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "common/test_util.h"

namespace baton::test {
namespace {

std::string BigGraph(int nodes) {
  const std::string dir = std::string(BATON_BINARY_DIR) + "/big_graphs";
  const std::string path = dir + "/big" + std::to_string(nodes) + ".onnx";
  const std::string cmd = "mkdir -p " + dir + " && flock " + dir + ".lock -c '[ -f " + path +
                          " ] || { " + BATON_PYTHON + " " + BATON_SOURCE_DIR +
                          "/tools/make_big_graph.py " + path + ".tmp --nodes " +
                          std::to_string(nodes) + " && mv " + path + ".tmp " + path + "; }'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return path;
}

Tensors RandomInputs(const PlanView& view, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Tensors in(view.num_inputs());
  for (uint32_t i = 0; i < view.num_inputs(); ++i) {
    std::vector<float> values(view.input(i)->bytes() / 4);
    for (float& v : values) v = u(rng);
    in[i].resize(values.size() * 4);
    std::memcpy(in[i].data(), values.data(), in[i].size());
  }
  return in;
}

TEST(BigGraph, AutoPlanOf500NodesIsValidAndMatchesTheCpuPlan) {
  const std::string model = BigGraph(500);
  auto graph = planner::ImportModel(model);
  ASSERT_TRUE(graph.ok()) << graph.error();
  auto target = planner::LoadTarget(TargetPath("soc4"));
  ASSERT_TRUE(target.ok()) << target.error();
  planner::PlanOptions options;
  options.auto_partition = true;
  options.auto_time_limit_s = 3600;  // the work budget decides, whatever the machine's load
  auto program = planner::PlanGraph(graph.value(), target.value(), options);
  ASSERT_TRUE(program.ok()) << program.error();
  const planner::Program& p = program.value();
  size_t computing = 0;
  for (const auto& n : p.graph.nodes) computing += n.op != planner::kCopyOp;
  // Fewer than 500: Adds and activations after a Conv fuse into it (issue 17).
  EXPECT_GE(computing, 440u);
  EXPECT_FALSE(p.auto_report.time_limit_hit);
  EXPECT_GE(p.auto_report.throughput_per_s, p.auto_report.best_single_throughput_per_s * 0.999);
  auto bytes = planner::EmitPlan(p);
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  auto verified = planner::VerifyWithRuntime(bytes.value());
  EXPECT_TRUE(verified.ok()) << verified.error();
  auto valid = planner::ValidatePlanSchedule(bytes.value().data(), bytes.value().size());
  EXPECT_TRUE(valid.ok()) << valid.error();

  const std::string cpu_bytes = PlanBytes(PlanSpec(model, "cpu"));
  ASSERT_FALSE(cpu_bytes.empty());
  Runner cpu(cpu_bytes);
  Runner pipelined(bytes.value());
  ASSERT_TRUE(cpu.ok() && pipelined.ok());
  std::vector<Tensors> inputs;
  for (uint32_t i = 0; i < 6; ++i) inputs.push_back(RandomInputs(cpu.view(), 100 + i));
  std::vector<Tensors> results;
  std::vector<StatusCode> statuses;
  pipelined.Stream(inputs, &results, &statuses);
  ASSERT_EQ(results.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_EQ(statuses[i], StatusCode::kOk) << "inference " << i;
    Tensors expected;
    ASSERT_TRUE(cpu.Invoke(inputs[i], &expected).ok());
    ASSERT_EQ(results[i].size(), expected.size());
    for (size_t o = 0; o < expected.size(); ++o) {
      const std::vector<float> got = AsFloats(results[i][o]), want = AsFloats(expected[o]);
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < want.size(); ++k) {
        ASSERT_NEAR(got[k], want[k], 1e-5f + 1e-4f * std::fabs(want[k]))
            << "inference " << i << ", output " << o << ", element " << k;
      }
    }
  }
}

}  // namespace
}  // namespace baton::test
