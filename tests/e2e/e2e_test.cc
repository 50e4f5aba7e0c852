// End-to-end: graph JSON -> plan -> run, against PyTorch references written
// by tests/e2e/make_graphs.py, and heterogeneous plans against the single-CPU
// plan. Every plan produced here also goes through the independent validator.

#include <gtest/gtest.h>

#include "baton/planner/analysis/validate_plan.h"
#include "common/test_util.h"

namespace baton::test {
namespace {

struct GraphCase {
  std::string name;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

const std::vector<GraphCase>& Cases() {
  static const std::vector<GraphCase> cases = {
      {"tiny_cnn", {"x"}, {"y"}},
      {"branches", {"a", "b"}, {"m", "t3"}},
      {"passthrough", {"x"}, {"e"}},
      {"residual", {"x"}, {"y"}},
      {"pipeline_topology", {"x", "z"}, {"y"}},
  };
  return cases;
}

Tensors Inputs(const GraphCase& c) {
  Tensors in;
  for (const auto& name : c.inputs)
    in.push_back(LoadNpyBytes(GraphDir() + "/" + c.name + "." + name + ".npy"));
  return in;
}

void ExpectValid(const std::string& bytes) {
  planner::ValidateReport report;
  auto check = planner::ValidatePlanSchedule(bytes.data(), bytes.size(), 0, &report);
  EXPECT_TRUE(check.ok()) << check.error();
  EXPECT_GT(report.pairs_checked + report.accesses, 0u);
}

Tensors RunPlan(const std::string& bytes, const Tensors& inputs, bool threaded = true) {
  linux_port::Options options;
  options.threaded = threaded;
  Runner runner(bytes, options);
  Tensors outputs;
  if (!runner.ok()) return outputs;
  Status s = runner.Invoke(inputs, &outputs);
  EXPECT_TRUE(s.ok()) << s.message();
  return outputs;
}

TEST(EndToEnd, SingleCpuMatchesTorch) {
  for (const GraphCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    std::string bytes = PlanBytes({GraphPath(c.name)});
    ASSERT_FALSE(bytes.empty());
    ExpectValid(bytes);
    Tensors out = RunPlan(bytes, Inputs(c));
    ASSERT_EQ(out.size(), c.outputs.size());
    for (size_t o = 0; o < c.outputs.size(); ++o) {
      auto ref =
          AsFloats(LoadNpyBytes(GraphDir() + "/" + c.name + ".ref." + c.outputs[o] + ".npy"));
      EXPECT_LE(RelativeError(AsFloats(out[o]), ref), 1e-4) << c.outputs[o];
    }
  }
}

TEST(EndToEnd, SameInputSameBytes) {
  for (const GraphCase& c : Cases()) {
    std::string a =
        PlanBytes({GraphPath(c.name), "soc4", {"Conv=npu0", "Sigmoid=gpu0", "Add=dsp0"}, {}, 2});
    std::string b =
        PlanBytes({GraphPath(c.name), "soc4", {"Conv=npu0", "Sigmoid=gpu0", "Add=dsp0"}, {}, 2});
    ASSERT_FALSE(a.empty());
    EXPECT_EQ(a, b) << c.name;
  }
}

struct HeteroCase {
  std::string target;
  std::vector<std::string> assign;
};

TEST(EndToEnd, HeterogeneousMatchesSingleCpu) {
  const std::vector<HeteroCase> hetero = {
      {"soc4",
       {"Conv=npu0", "Sigmoid=gpu0", "MaxPool=gpu0", "Gemm=dsp0", "Softmax=dsp0", "Add=dsp0",
        "MatMul=gpu0", "Tanh=dsp0", "AveragePool=npu0", "Concat=gpu0"}},
      {"soc4", {"Conv=gpu0", "Relu=npu0", "Add=npu0", "GlobalAveragePool=dsp0", "Mul=dsp0"}},
      {"twin_npu_f32", {"Conv=npu0", "Conv#1=npu1", "Conv#3=npu1", "Add=npu1", "Gemm=npu1"}},
      {"imx8mp_f32",
       {"Conv=vip8000", "Sigmoid=gc7000ul", "Gemm=hifi4", "Softmax=hifi4", "Add=hifi4"}},
  };
  for (const GraphCase& c : Cases()) {
    std::string reference = PlanBytes({GraphPath(c.name)});
    Tensors expected = RunPlan(reference, Inputs(c));
    for (const HeteroCase& h : hetero) {
      SCOPED_TRACE(c.name + " on " + h.target + " " + h.assign[0]);
      planner::Program program;
      std::string bytes = PlanBytes({GraphPath(c.name), h.target, h.assign}, &program);
      ASSERT_FALSE(bytes.empty());
      ExpectValid(bytes);
      for (bool threaded : {true, false}) {
        Tensors out = RunPlan(bytes, Inputs(c), threaded);
        ASSERT_EQ(out.size(), expected.size());
        for (size_t o = 0; o < out.size(); ++o) {
          EXPECT_LE(MaxAbsDiff(AsFloats(out[o]), AsFloats(expected[o])), 1e-5)
              << "threaded=" << threaded;
        }
      }
      // Arenas within 5% of the lower bound.
      for (size_t d = 0; d < program.domain_report.size(); ++d) {
        const auto& r = program.domain_report[d];
        EXPECT_LE(static_cast<double>(r.arena_bytes),
                  1.05 * static_cast<double>(r.lower_bound_bytes))
            << program.target.domains[d].name;
        EXPECT_GE(r.arena_bytes, r.lower_bound_bytes);
      }
    }
  }
}

TEST(EndToEnd, PlacesWorkOnEveryDevice) {
  planner::Program p;
  std::string bytes = PlanBytes(
      {GraphPath("tiny_cnn"), "soc4", {"Conv=npu0", "MaxPool=gpu0", "Gemm=dsp0", "Softmax=dsp0"}},
      &p);
  // (The Sigmoid after pw fuses into that Conv, issue 17: a rule naming it
  // has nothing left to place.)
  ASSERT_FALSE(bytes.empty());
  std::map<std::string, int> per_queue;
  for (size_t n = 0; n < p.graph.nodes.size(); ++n) {
    if (p.graph.nodes[n].op != planner::kCopyOp) per_queue[p.queues[p.node_queue[n]].name]++;
  }
  EXPECT_GT(per_queue["cpu0"], 0);
  EXPECT_GT(per_queue["gpu0"], 0);
  EXPECT_GT(per_queue["npu0"], 0);
  EXPECT_GT(per_queue["dsp0"], 0);
}

// A -> B -> C -> D -> E where E reads A, B and D; B and D on the NPU. Each
// tensor crosses to another memory once, however many consumers read it.
TEST(EndToEnd, PassthroughCopiesAreShared) {
  planner::Program p;
  std::string bytes = PlanBytes({GraphPath("passthrough"), "soc4", {"@B=npu0", "@D=npu0"}}, &p);
  ASSERT_FALSE(bytes.empty());
  ExpectValid(bytes);
  std::map<std::string, int> copies_of;
  for (const auto& n : p.graph.nodes) {
    if (n.op == planner::kCopyOp) copies_of[p.graph.tensors[n.inputs[0]].name]++;
  }
  // a -> npu (for B); b -> dram (for C on cpu and E1); d -> dram (for E).
  // Relu C is on cpu0 and reads b: the copy of b to dram is shared by C and E1.
  EXPECT_EQ(copies_of["a"], 1);
  EXPECT_EQ(copies_of["b"], 1);
  EXPECT_EQ(copies_of["c"], 1);
  // E = Add(e1, d) fuses into D (issue 17): e1 goes to the NPU, and the fifth
  // copy brings D's output, now the graph output e, back.
  EXPECT_EQ(copies_of["d"], 0);
  EXPECT_EQ(copies_of["e1"], 1);
  EXPECT_EQ(p.NumCopies(), 5);
  Tensors out = RunPlan(bytes, Inputs(Cases()[2]));
  auto ref = AsFloats(LoadNpyBytes(GraphDir() + "/passthrough.ref.e.npy"));
  EXPECT_LE(RelativeError(AsFloats(out[0]), ref), 1e-4);
}

TEST(EndToEnd, NoCopyBetweenDevicesSharingMemory) {
  planner::Program p;
  std::string bytes = PlanBytes({GraphPath("residual"), "soc4", {"Conv=gpu0"}}, &p);
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(p.NumCopies(), 0);  // CPU and GPU share DRAM
}

TEST(EndToEnd, FallbackIsReported) {
  planner::Program p;
  // The NPU does not run Sigmoid or Tanh: they fall back to the CPU.
  std::string bytes = PlanBytes({GraphPath("residual"), "soc4", {"Tanh=npu0"}}, &p);
  ASSERT_FALSE(bytes.empty());
  ASSERT_EQ(p.fallbacks.size(), 1u);
  EXPECT_EQ(p.fallbacks[0].node, "tanh");
  EXPECT_EQ(p.fallbacks[0].requested, "npu0");
  EXPECT_EQ(p.fallbacks[0].placed, "cpu0");
}

}  // namespace
}  // namespace baton::test
