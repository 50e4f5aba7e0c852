// Pipelined plans: stages, slots, simulated throughput against the bound, and
// the pipeline-executor topology (module 0 feeds modules 1 and 2, module 1
// feeds module 2, a second graph input enters module 1).

#include <gtest/gtest.h>

#include "baton/planner/analysis/sim.h"
#include "common/test_util.h"

namespace baton::test {
namespace {

planner::SimResult Sim(const std::string& bytes, const std::string& target, uint32_t n) {
  linux_port::AlignedBytes aligned(bytes.data(), bytes.size());
  PlanView view;
  EXPECT_TRUE(PlanView::Load(aligned.data(), aligned.size(), &view).ok());
  auto t = planner::LoadTarget(TargetPath(target));
  auto r = planner::Simulate(view, t.value(), n);
  EXPECT_TRUE(r.ok()) << r.error();
  return r.ok() ? r.value() : planner::SimResult();
}

// Conv on the NPU, pooling and Sigmoid on the GPU, the classifier on the DSP:
// every device crossing becomes a stage boundary.
const std::vector<std::string> kChainRules = {"Conv=npu0", "MaxPool=gpu0", "GlobalAveragePool=gpu0",
                                              "Gemm=dsp0", "Softmax=dsp0"};

TEST(Pipeline, ThroughputReachesTheBoundWhenDepthCoversTheStages) {
  planner::Program p;
  // Plan once with a large depth to learn the number of device-boundary stages.
  std::string probe = PlanBytes(PlanSpec(GraphPath("tiny_cnn"), "soc4", kChainRules, {}, 16), &p);
  ASSERT_FALSE(probe.empty());
  const int stages = p.num_stages;
  ASSERT_GE(stages, 3);
  for (int depth : {stages, stages + 1}) {
    SCOPED_TRACE("in flight " + std::to_string(depth));
    planner::Program q;
    std::string bytes =
        PlanBytes(PlanSpec(GraphPath("tiny_cnn"), "soc4", kChainRules, {}, depth), &q);
    EXPECT_EQ(q.num_stages, stages);
    planner::SimResult r = Sim(bytes, "soc4", 300);
    EXPECT_GE(r.throughput_per_s, 0.95 * r.bound_throughput_per_s)
        << r.throughput_per_s << " vs bound " << r.bound_throughput_per_s;
  }
  // One at a time: every device waits for the others, far below the bound.
  std::string serial = PlanBytes(PlanSpec(GraphPath("tiny_cnn"), "soc4", kChainRules));
  planner::SimResult r1 = Sim(serial, "soc4", 100);
  EXPECT_LT(r1.throughput_per_s, 0.8 * r1.bound_throughput_per_s);
}

TEST(Pipeline, SlotsCoverTheStagesATensorCrosses) {
  planner::Program p;
  std::string bytes = PlanBytes(PlanSpec(GraphPath("tiny_cnn"), "soc4", kChainRules, {}, 4), &p);
  ASSERT_FALSE(bytes.empty());
  std::vector<int> producer = p.graph.Producers();
  for (size_t t = 0; t < p.graph.tensors.size(); ++t) {
    if (p.graph.tensors[t].is_constant || p.placement[t].domain < 0) continue;
    const bool io = std::count(p.graph.inputs.begin(), p.graph.inputs.end(), static_cast<int>(t)) ||
                    std::count(p.graph.outputs.begin(), p.graph.outputs.end(), static_cast<int>(t));
    if (io) {
      EXPECT_EQ(p.placement[t].slots, 4u) << p.graph.tensors[t].name;
      continue;
    }
    int span = 0;
    for (size_t n = 0; n < p.graph.nodes.size(); ++n) {
      for (int in : p.graph.nodes[n].inputs) {
        if (in == static_cast<int>(t))
          span = std::max(span, p.node_stage[n] - p.node_stage[producer[t]]);
      }
    }
    // At most one more than the stages crossed; fewer where the schedule
    // already orders the reuse (the plan passes the validator: PlanBytes).
    EXPECT_GE(p.placement[t].slots, 1u) << p.graph.tensors[t].name;
    EXPECT_LE(p.placement[t].slots, static_cast<uint32_t>(std::min(4, span + 1)))
        << p.graph.tensors[t].name;
  }
}

TEST(Pipeline, PipelineExecutorTopologyMatchesTorch) {
  // m0 on the NPU, m1_add on the DSP (z enters here), m1_conv on the GPU, m2
  // on the CPU. m2_add fuses into m1_conv (its sum) and m2_sig into m2_conv
  // (issue 17), so the splits are at m1_add and m2_conv.
  const std::vector<std::string> rules = {"@m0_conv=npu0", "@m1_add=dsp0", "@m1_conv=gpu0",
                                          "@m2_conv=cpu0"};
  for (int depth : {1, 2, 3}) {
    SCOPED_TRACE(depth);
    std::string bytes = PlanBytes(
        PlanSpec(GraphPath("pipeline_topology"), "soc4", rules, {"m1_add", "m2_conv"}, depth));
    ASSERT_FALSE(bytes.empty());
    Runner r(bytes);
    ASSERT_TRUE(r.ok());
    Tensors in = {LoadNpyBytes(GraphDir() + "/pipeline_topology.x.npy"),
                  LoadNpyBytes(GraphDir() + "/pipeline_topology.z.npy")};
    std::vector<Tensors> results;
    std::vector<StatusCode> statuses;
    r.Stream({in, in, in, in, in}, &results, &statuses);
    ASSERT_EQ(results.size(), 5u);
    auto ref = AsFloats(LoadNpyBytes(GraphDir() + "/pipeline_topology.ref.y.npy"));
    for (const Tensors& out : results) EXPECT_LE(RelativeError(AsFloats(out[0]), ref), 1e-4);
  }
}

// Does some slot of a multi-slot tensor share bytes with another tensor?
bool MultiSlotSharing(const planner::Program& p) {
  const auto& g = p.graph;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    const planner::TensorPlacement& a = p.placement[t];
    if (a.domain < 0 || a.slots < 2) continue;
    for (size_t u = 0; u < g.tensors.size(); ++u) {
      const planner::TensorPlacement& b = p.placement[u];
      if (u == t || b.domain != a.domain) continue;
      for (uint32_t s = 0; s < a.slots; ++s) {
        for (uint32_t r = 0; r < b.slots; ++r) {
          const uint64_t a0 = a.offset + s * a.slot_stride, b0 = b.offset + r * b.slot_stride;
          if (a0 < b0 + g.tensors[u].bytes() && b0 < a0 + g.tensors[t].bytes()) return true;
        }
      }
    }
  }
  return false;
}

// Plans whose multi-slot tensors share bytes stream distinct inputs through
// D = 2..4 inferences in flight, threaded and cooperative, and give each
// inference the single-CPU plan's output for its own input. PlanBytes also
// runs the independent validator on every plan.
TEST(Pipeline, SharedSlotsGiveEveryInferenceItsOwnResult) {
  for (const std::string graph : {"tiny_cnn", "residual"}) {
    const std::string cpu = PlanBytes(PlanSpec(GraphPath(graph)));
    ASSERT_FALSE(cpu.empty());
    const std::vector<uint8_t> x = LoadNpyBytes(GraphDir() + "/" + graph + ".x.npy");
    // Inference k gets x scaled by (k + 1) / 4: a slot mix-up shows.
    std::vector<Tensors> inputs;
    std::vector<Tensors> expected;
    Runner reference(cpu);
    ASSERT_TRUE(reference.ok());
    for (int k = 0; k < 9; ++k) {
      std::vector<uint8_t> in = x;
      float* v = reinterpret_cast<float*>(in.data());
      for (size_t e = 0; e < in.size() / sizeof(float); ++e)
        v[e] *= 0.25f * static_cast<float>(k + 1);
      inputs.push_back({in});
      Tensors out;
      ASSERT_TRUE(reference.Invoke({in}, &out).ok());
      expected.push_back(out);
    }
    bool shared = false;
    for (int depth : {2, 3, 4}) {
      SCOPED_TRACE(graph + " in flight " + std::to_string(depth));
      planner::Program p;
      const std::string bytes =
          PlanBytes(PlanSpec(GraphPath(graph), "soc4", kChainRules, {}, depth), &p);
      ASSERT_FALSE(bytes.empty());
      shared |= MultiSlotSharing(p);
      for (size_t d = 0; d < p.domain_report.size(); ++d) {
        EXPECT_LE(p.domain_report[d].lower_bound_bytes, p.domain_report[d].arena_bytes);
        EXPECT_LE(p.domain_report[d].arena_bytes, p.target.domains[d].bytes);
      }
      for (bool threaded : {true, false}) {
        linux_port::Options options;
        options.threaded = threaded;
        Runner r(bytes, options);
        ASSERT_TRUE(r.ok());
        std::vector<Tensors> results;
        std::vector<StatusCode> statuses;
        r.Stream(inputs, &results, &statuses);
        ASSERT_EQ(results.size(), inputs.size());
        for (size_t k = 0; k < results.size(); ++k) {
          ASSERT_EQ(statuses[k], StatusCode::kOk) << k;
          EXPECT_LE(MaxAbsDiff(AsFloats(results[k][0]), AsFloats(expected[k][0])), 1e-5)
              << "inference " << k << " threaded " << threaded;
        }
      }
    }
    EXPECT_TRUE(shared) << graph << ": no plan shared a multi-slot tensor's bytes";
  }
}

// Found by the independent validator: E (stage 2) reads D's output, and the
// only order from D(i) to E(i) went through instances of inference i + 1,
// which are skipped at the end of a stream. The planner must not rely on
// them (PlanBytes validates the plan for every stream length it unrolls).
TEST(Pipeline, NoOrderThroughTheNextInference) {
  for (int depth : {2, 3}) {
    std::string bytes =
        PlanBytes(PlanSpec(GraphPath("passthrough"), "imx8mp_f32",
                           {"Conv=vip8000", "Add=gc7000ul", "Sigmoid=hifi4"}, {}, depth));
    ASSERT_FALSE(bytes.empty());
    Runner r(bytes);
    Tensors out;
    ASSERT_TRUE(r.Invoke({LoadNpyBytes(GraphDir() + "/passthrough.x.npy")}, &out).ok());
    auto ref = AsFloats(LoadNpyBytes(GraphDir() + "/passthrough.ref.e.npy"));
    EXPECT_LE(RelativeError(AsFloats(out[0]), ref), 1e-4);
  }
}

}  // namespace
}  // namespace baton::test
