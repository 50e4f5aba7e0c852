// Every reference kernel against numpy/torch results. The cases (inputs,
// parameters, expected outputs) come from tests/kernels/make_refs.py, run
// once per test process (it returns at once when its output is current).
// Each test below runs the cases of one op family; float outputs must match
// within 1e-4 of the output's scale (max |reference|), others exactly.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "baton/planner/io/npy.h"
#include "conv_winograd.h"  // runtime/src/kernels (internal)
#include "gemm_core.h"
#include "kernels/kernel_test_util.h"

namespace baton {
namespace {

using nlohmann::json;
using testing::KernelHarness;
using testing::ParamsFn;

std::string RefDir() { return std::string(BATON_BINARY_DIR) + "/tests/kernels/refs"; }

bool OpFromName(const std::string& name, schema::Op* out) {
  for (schema::Op op : schema::EnumValuesOp()) {
    if (name == schema::EnumNameOp(op)) {
      *out = op;
      return true;
    }
  }
  return false;
}

template <typename T>
std::vector<T> Vec(const json& p, const char* key) {
  std::vector<T> v;
  if (p.contains(key)) {
    for (const auto& e : p[key]) v.push_back(e.get<T>());
  }
  return v;
}

// The fused clamp, or null.
const schema::Clamp* ClampOf(const json& p, schema::Clamp* storage) {
  if (!p.contains("clamp")) return nullptr;
  *storage = schema::Clamp(p["clamp"][0].get<float>(), p["clamp"][1].get<float>());
  return storage;
}

// Translates the manifest's params object into the schema's Params union.
schema::Params ParamsFromJson(const json& p, ParamsFn* out) {
  if (p.is_null()) return schema::Params::NONE;
  const std::string type = p["type"].get<std::string>();
  if (type == "ConvParams") {
    *out = [p](flatbuffers::FlatBufferBuilder& b) {
      auto kernel = Vec<int32_t>(p, "kernel"), strides = Vec<int32_t>(p, "strides"),
           pads = Vec<int32_t>(p, "pads"), dilations = Vec<int32_t>(p, "dilations");
      schema::Clamp c;
      return schema::CreateConvParamsDirect(b, &kernel, &strides, &pads, &dilations,
                                            p["group"].get<int32_t>(), ClampOf(p, &c))
          .Union();
    };
    return schema::Params::ConvParams;
  }
  if (type == "GemmParams") {
    *out = [p](flatbuffers::FlatBufferBuilder& b) {
      schema::Clamp c;
      return schema::CreateGemmParams(b, p["alpha"].get<float>(), p["beta"].get<float>(),
                                      p["trans_a"].get<bool>(), p["trans_b"].get<bool>(),
                                      ClampOf(p, &c))
          .Union();
    };
    return schema::Params::GemmParams;
  }
  if (type == "ElementwiseParams") {
    *out = [p](flatbuffers::FlatBufferBuilder& b) {
      schema::Clamp c;
      return schema::CreateElementwiseParams(b, ClampOf(p, &c)).Union();
    };
    return schema::Params::ElementwiseParams;
  }
  if (type == "ActivationParams") {
    *out = [p](flatbuffers::FlatBufferBuilder& b) {
      return schema::CreateActivationParams(b, p.value("alpha", 0.0f), p.value("beta", 0.0f),
                                            p.value("min", 0.0f), p.value("max", 0.0f))
          .Union();
    };
    return schema::Params::ActivationParams;
  }
  if (type == "AxisParams") {
    *out = [p](flatbuffers::FlatBufferBuilder& b) {
      return schema::CreateAxisParams(b, p["axis"].get<int32_t>()).Union();
    };
    return schema::Params::AxisParams;
  }
  if (type == "PoolParams") {
    *out = [p](flatbuffers::FlatBufferBuilder& b) {
      auto kernel = Vec<int32_t>(p, "kernel"), strides = Vec<int32_t>(p, "strides"),
           pads = Vec<int32_t>(p, "pads"), dilations = Vec<int32_t>(p, "dilations");
      return schema::CreatePoolParamsDirect(b, &kernel, &strides, &pads, &dilations,
                                            p["ceil_mode"].get<bool>(),
                                            p["count_include_pad"].get<bool>())
          .Union();
    };
    return schema::Params::PoolParams;
  }
  if (type == "ReduceParams") {
    *out = [p](flatbuffers::FlatBufferBuilder& b) {
      auto axes = Vec<int32_t>(p, "axes");
      return schema::CreateReduceParamsDirect(b, &axes, p["keepdims"].get<bool>()).Union();
    };
    return schema::Params::ReduceParams;
  }
  if (type == "BatchNormParams") {
    *out = [p](flatbuffers::FlatBufferBuilder& b) {
      return schema::CreateBatchNormParams(b, p["epsilon"].get<float>()).Union();
    };
    return schema::Params::BatchNormParams;
  }
  if (type == "SliceParams") {
    *out = [p](flatbuffers::FlatBufferBuilder& b) {
      auto starts = Vec<int64_t>(p, "starts"), ends = Vec<int64_t>(p, "ends"),
           steps = Vec<int64_t>(p, "steps");
      auto axes = Vec<int32_t>(p, "axes");
      return schema::CreateSliceParamsDirect(b, &starts, &ends, &axes, &steps).Union();
    };
    return schema::Params::SliceParams;
  }
  if (type == "PadParams") {
    *out = [p](flatbuffers::FlatBufferBuilder& b) {
      auto pads = Vec<int64_t>(p, "pads");
      return schema::CreatePadParamsDirect(b, &pads, p["mode"].get<uint8_t>(),
                                           p["value"].get<float>())
          .Union();
    };
    return schema::Params::PadParams;
  }
  if (type == "TransposeParams") {
    *out = [p](flatbuffers::FlatBufferBuilder& b) {
      auto perm = Vec<int32_t>(p, "perm");
      return schema::CreateTransposeParamsDirect(b, &perm).Union();
    };
    return schema::Params::TransposeParams;
  }
  // The reference files keep the op-level names; they lower to the existing
  // tables as the planner does (docs/formats.md).
  if (type == "ResizeParams") {
    *out = [p](flatbuffers::FlatBufferBuilder& b) {
      const bool linear = p["mode"].get<int>() == 1;
      auto kernel = Vec<int32_t>(p, "y0"), pads = Vec<int32_t>(p, "x0");
      std::vector<int32_t> wy, wx;
      if (linear) {
        auto y1 = Vec<int32_t>(p, "y1"), x1 = Vec<int32_t>(p, "x1");
        kernel.insert(kernel.end(), y1.begin(), y1.end());
        pads.insert(pads.end(), x1.begin(), x1.end());
        auto fy = Vec<float>(p, "wy"), fx = Vec<float>(p, "wx");
        wy.resize(fy.size());
        wx.resize(fx.size());
        if (!fy.empty()) memcpy(wy.data(), fy.data(), fy.size() * sizeof(float));
        if (!fx.empty()) memcpy(wx.data(), fx.data(), fx.size() * sizeof(float));
      }
      return schema::CreatePoolParamsDirect(b, &kernel, linear ? &wy : nullptr, &pads,
                                            linear ? &wx : nullptr, linear, false)
          .Union();
    };
    return schema::Params::PoolParams;
  }
  if (type == "DepthSpaceParams") {
    *out = [p](flatbuffers::FlatBufferBuilder& b) {
      return schema::CreateAxisParams(b, p["crd"].get<bool>() ? 1 : 0).Union();
    };
    return schema::Params::AxisParams;
  }
  if (type == "LayerNormParams") {
    *out = [p](flatbuffers::FlatBufferBuilder& b) {
      return schema::CreateBatchNormParams(b, p["epsilon"].get<float>()).Union();
    };
    return schema::Params::BatchNormParams;
  }
  ADD_FAILURE() << "unknown params type " << type;
  return schema::Params::NONE;
}

class KernelRefTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string cmd = std::string(BATON_PYTHON) + " " + BATON_SOURCE_DIR +
                            "/tests/kernels/make_refs.py " + RefDir();
    script_status_ = std::system(cmd.c_str());
    if (script_status_ != 0) return;
    std::ifstream f(RefDir() + "/manifest.json");
    manifest_ = new json(json::parse(f, nullptr, /*allow_exceptions=*/false));
  }
  static void TearDownTestSuite() {
    delete manifest_;
    manifest_ = nullptr;
  }

  void SetUp() override {
    ASSERT_EQ(script_status_, 0)
        << "make_refs.py failed (needs /usr/bin/python3 with numpy, torch)";
    ASSERT_TRUE(manifest_ != nullptr && manifest_->contains("cases")) << "bad manifest";
  }

  // Runs every case whose op is in `ops`; there must be at least one.
  void RunOps(std::initializer_list<const char*> ops) {
    int ran = 0;
    for (const json& c : (*manifest_)["cases"]) {
      const std::string op = c["op"].get<std::string>();
      bool match = false;
      for (const char* o : ops) match = match || op == o;
      if (!match) continue;
      SCOPED_TRACE(c["name"].get<std::string>());
      RunCase(c);
      ++ran;
    }
    EXPECT_GT(ran, 0) << "no reference cases for this family";
  }

  // workspace_bytes >= 0 forces the workspace size (else WorkspaceBytes).
  void RunCase(const json& c, int64_t workspace_bytes = -1) {
    KernelHarness h;
    h.OverrideWorkspace(workspace_bytes);
    std::vector<int> inputs, outputs;
    std::vector<planner::NpyArray> expected;
    for (const json& in : c["inputs"]) {
      if (in.is_null()) {
        inputs.push_back(-1);
        continue;
      }
      auto arr = planner::ReadNpy(RefDir() + "/" + in.get<std::string>());
      ASSERT_TRUE(arr.ok()) << arr.error();
      const int id = h.AddTensor(arr->dtype, arr->shape);
      h.SetBytes(id, arr->data.data(), arr->data.size());
      inputs.push_back(id);
    }
    for (const json& out : c["outputs"]) {
      auto arr = planner::ReadNpy(RefDir() + "/" + out.get<std::string>());
      ASSERT_TRUE(arr.ok()) << arr.error();
      outputs.push_back(h.AddTensor(arr->dtype, arr->shape));
      expected.push_back(std::move(arr.value()));
    }
    schema::Op op = schema::Op::Copy;
    ASSERT_TRUE(OpFromName(c["op"].get<std::string>(), &op));
    ParamsFn params;
    const schema::Params type = ParamsFromJson(c["params"], &params);
    h.SetNode(op, inputs, outputs, type, params);
    Status st = h.Prepare();
    ASSERT_TRUE(st.ok()) << "prepare: " << st.message();
    st = h.Eval();
    ASSERT_TRUE(st.ok()) << "eval: " << st.message();
    for (size_t i = 0; i < outputs.size(); ++i) {
      ExpectMatches(expected[i], h, outputs[i]);
      if (c.contains("rtol")) ExpectRelative(expected[i], h, outputs[i], c["rtol"].get<float>());
    }
  }

  // Every element within `rtol` of its reference (cases that promise more
  // than the scale-relative tolerance, e.g. Erf).
  static void ExpectRelative(const planner::NpyArray& ref, KernelHarness& h, int id, float rtol) {
    ASSERT_EQ(ref.dtype, DType::Float32);
    const std::vector<float> want = ref.FloatData();
    const float* got = h.F32(id);
    size_t bad = 0, first_bad = 0;
    for (size_t j = 0; j < want.size(); ++j) {
      const double w = static_cast<double>(want[j]);
      const double err = std::fabs(static_cast<double>(got[j]) - w);
      if (!(err <= static_cast<double>(rtol) * std::fabs(w) + 1e-30)) {
        if (bad++ == 0) first_bad = j;
      }
    }
    EXPECT_EQ(bad, 0u) << bad << " of " << want.size() << " elements beyond relative " << rtol
                       << "; first at " << first_bad << ": got " << got[first_bad] << " want "
                       << want[first_bad];
  }

  static void ExpectMatches(const planner::NpyArray& ref, KernelHarness& h, int id) {
    ASSERT_EQ(ref.data.size(), h.Bytes(id));
    if (ref.dtype != DType::Float32) {
      EXPECT_EQ(0, memcmp(ref.data.data(), h.Data(id), ref.data.size())) << "bytes differ";
      return;
    }
    const std::vector<float> want = ref.FloatData();
    const float* got = h.F32(id);
    float scale = 0.0f;
    for (float v : want) scale = std::fmax(scale, std::fabs(v));
    const float tol = 1e-4f * (scale > 0.0f ? scale : 1.0f);
    size_t bad = 0, first_bad = 0;
    float worst = 0.0f;
    for (size_t j = 0; j < want.size(); ++j) {
      const float err = std::fabs(got[j] - want[j]);
      if (!(err <= tol)) {  // also catches NaN
        if (bad++ == 0) first_bad = j;
      }
      if (err > worst) worst = err;
    }
    EXPECT_EQ(bad, 0u) << bad << " of " << want.size() << " elements off; first at " << first_bad
                       << ": got " << got[first_bad] << " want " << want[first_bad]
                       << "; worst error " << worst << ", tolerance " << tol;
  }

  static int script_status_;
  static json* manifest_;
};

int KernelRefTest::script_status_ = -1;
json* KernelRefTest::manifest_ = nullptr;

TEST_F(KernelRefTest, Conv) { RunOps({"Conv"}); }
TEST_F(KernelRefTest, Gemm) { RunOps({"Gemm"}); }
TEST_F(KernelRefTest, MatMul) { RunOps({"MatMul"}); }

// The GEMM-based ops (and the activations and integer kernels compiled with them) once more with
// every instruction set this build and CPU have (their tile shapes, and so their edge cases,
// differ).
TEST_F(KernelRefTest, GemmOpsEveryIsa) {
  const testing::IsaGuard restore;
  int ran = 0;
  for (KernelIsa isa : kAllKernelIsas) {
    if (!KernelIsaAvailable(isa)) continue;
    SCOPED_TRACE(KernelIsaName(isa));
    ASSERT_TRUE(SelectKernelIsa(isa));
    EXPECT_EQ(ActiveKernelIsa(), isa);
    RunOps({"Conv", "Gemm", "MatMul", "LSTM", "GRU", "Sigmoid", "Tanh", "Swish", "QLinearConv",
            "QLinearMatMul", "QLinearAdd"});
    ++ran;
  }
  EXPECT_GE(ran, 1);
}

// The wino_* reference cases take the Winograd path (so the thresholds
// cannot silently move them to im2col), and a plan that reserved only the
// im2col + GEMM workspace (an older planner) still runs them correctly.
TEST_F(KernelRefTest, WinogradCasesAndGemmSizedWorkspace) {
  int ran = 0;
  for (const json& c : (*manifest_)["cases"]) {
    const std::string name = c["name"].get<std::string>();
    if (name.rfind("wino_", 0) != 0) continue;
    SCOPED_TRACE(name);
    auto x = planner::ReadNpy(RefDir() + "/" + c["inputs"][0].get<std::string>());
    auto y = planner::ReadNpy(RefDir() + "/" + c["outputs"][0].get<std::string>());
    ASSERT_TRUE(x.ok() && y.ok());
    const json& p = c["params"];
    kernels::ConvGeom g;
    g.win.n = x->shape[0];
    g.win.c = x->shape[1];
    g.win.h = x->shape[2];
    g.win.w = x->shape[3];
    g.win.oh = y->shape[2];
    g.win.ow = y->shape[3];
    g.win.kh = g.win.kw = 3;
    g.win.pt = p["pads"][0].get<int64_t>();
    g.win.pl = p["pads"][1].get<int64_t>();
    g.win.pb = p["pads"][2].get<int64_t>();
    g.win.pr = p["pads"][3].get<int64_t>();
    g.m = y->shape[1];
    g.group = 1;
    ASSERT_TRUE(kernels::UseWinograd(g));
    const size_t gemm_bytes =
        kernels::GemmWorkspaceBytes(g.m, g.win.oh * g.win.ow, g.win.c * 9);
    ASSERT_LT(gemm_bytes, kernels::WinogradWorkspaceBytes(g));  // so the GEMM path runs
    RunCase(c, static_cast<int64_t>(gemm_bytes));
    ++ran;
  }
  EXPECT_GE(ran, 2);
}

// Depthwise layers take the phase-plane path with the workspace the planner
// reserves, and the row path without one (a plan from an older planner):
// both match torch, with every instruction set.
TEST_F(KernelRefTest, DepthwiseBothPaths) {
  const testing::IsaGuard restore;
  int ran = 0;
  for (KernelIsa isa : {KernelIsa::kPortable, KernelIsa::kAvx2, KernelIsa::kAvx512}) {
    if (!KernelIsaAvailable(isa)) continue;
    ASSERT_TRUE(SelectKernelIsa(isa));
    for (const json& c : (*manifest_)["cases"]) {
      const std::string name = c["name"].get<std::string>();
      if (name.rfind("dw_", 0) != 0) continue;
      SCOPED_TRACE(name + " " + KernelIsaName(isa));
      RunCase(c);
      RunCase(c, 0);
      ++ran;
    }
  }
  EXPECT_GE(ran, 19);
}

// The dispatch offers exactly what the CPU can run, and picks the widest.
// The CPU's features come from the compiler's own cpuid query here, not from
// the kernels' bookkeeping.
TEST(KernelIsa, DispatchMatchesCpu) {
  EXPECT_TRUE(KernelIsaAvailable(KernelIsa::kPortable));
  EXPECT_FALSE(SelectKernelIsa(static_cast<KernelIsa>(7)));
#if !defined(__aarch64__)
  EXPECT_FALSE(KernelIsaAvailable(KernelIsa::kNeonDot));  // an aarch64 level
#endif
#if BATON_KERNEL_DISPATCH
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
  const bool vnni = avx512 && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512vnni");
  EXPECT_EQ(KernelIsaAvailable(KernelIsa::kAvx2), avx2);
  EXPECT_EQ(KernelIsaAvailable(KernelIsa::kAvx512), avx512);
  EXPECT_EQ(KernelIsaAvailable(KernelIsa::kAvx512Vnni), vnni);
  const KernelIsa widest = vnni     ? KernelIsa::kAvx512Vnni
                           : avx512 ? KernelIsa::kAvx512
                           : avx2   ? KernelIsa::kAvx2
                                    : KernelIsa::kPortable;
  EXPECT_EQ(DefaultKernelIsa(), widest);
  if (!avx2) {
    EXPECT_FALSE(SelectKernelIsa(KernelIsa::kAvx2));
  }
#else
  EXPECT_FALSE(KernelIsaAvailable(KernelIsa::kAvx2));
  EXPECT_FALSE(KernelIsaAvailable(KernelIsa::kAvx512));
  EXPECT_FALSE(KernelIsaAvailable(KernelIsa::kAvx512Vnni));
  EXPECT_EQ(DefaultKernelIsa(), KernelIsa::kPortable);
  EXPECT_EQ(ActiveKernelIsa(), KernelIsa::kPortable);
#endif
}
TEST_F(KernelRefTest, Elementwise) { RunOps({"Add", "Sub", "Mul", "Div"}); }
TEST_F(KernelRefTest, Activations) {
  RunOps({"Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish"});
}
TEST_F(KernelRefTest, UnaryMath) {
  RunOps({"Sqrt", "Exp", "Log", "Erf", "Neg", "Abs", "Reciprocal", "Softplus", "Elu", "Gelu",
          "Mish", "Swish"});
}
TEST_F(KernelRefTest, PowMaxMinPRelu) { RunOps({"Pow", "Max", "Min", "PRelu"}); }
TEST_F(KernelRefTest, Tile) { RunOps({"Tile"}); }
TEST_F(KernelRefTest, Reductions) { RunOps({"ReduceSum", "ReduceMax", "ReduceMin", "ReduceL2"}); }
TEST_F(KernelRefTest, ArgMaxArgMin) { RunOps({"ArgMax", "ArgMin"}); }
TEST_F(KernelRefTest, TopK) { RunOps({"TopK"}); }
TEST_F(KernelRefTest, Softmax) { RunOps({"Softmax", "LogSoftmax"}); }
TEST_F(KernelRefTest, Pools) { RunOps({"MaxPool", "AveragePool"}); }
TEST_F(KernelRefTest, GlobalPools) { RunOps({"GlobalAveragePool", "GlobalMaxPool"}); }
TEST_F(KernelRefTest, ReduceMean) { RunOps({"ReduceMean"}); }
TEST_F(KernelRefTest, BatchNormalization) { RunOps({"BatchNormalization"}); }
TEST_F(KernelRefTest, ConcatSplit) { RunOps({"Concat", "Split"}); }
TEST_F(KernelRefTest, Slice) { RunOps({"Slice"}); }
TEST_F(KernelRefTest, Pad) { RunOps({"Pad"}); }
TEST_F(KernelRefTest, Transpose) { RunOps({"Transpose"}); }
TEST_F(KernelRefTest, Gather) { RunOps({"Gather"}); }
TEST_F(KernelRefTest, CompareAndLogic) { RunOps({"Equal", "Greater", "Less", "Not", "And"}); }
TEST_F(KernelRefTest, Where) { RunOps({"Where"}); }
TEST_F(KernelRefTest, CastAndExpand) { RunOps({"Cast", "Expand"}); }
TEST_F(KernelRefTest, QuantizeDequantize) { RunOps({"QuantizeLinear", "DequantizeLinear"}); }
// Integer kernels against make_refs.py's integer reference (which
// tests/kernels/qlinear_vs_ort.py checks against ONNX Runtime bit for bit).
TEST_F(KernelRefTest, QLinear) { RunOps({"QLinearConv", "QLinearMatMul"}); }
TEST_F(KernelRefTest, QLinearAdd) { RunOps({"QLinearAdd"}); }
TEST_F(KernelRefTest, QLinearMul) { RunOps({"QLinearMul"}); }
TEST_F(KernelRefTest, MatMulInteger) { RunOps({"MatMulInteger"}); }
TEST_F(KernelRefTest, ConvInteger) { RunOps({"ConvInteger"}); }
TEST_F(KernelRefTest, DynamicQuantizeLinear) { RunOps({"DynamicQuantizeLinear"}); }
TEST_F(KernelRefTest, QLinearPools) { RunOps({"QLinearAveragePool", "QLinearGlobalAveragePool"}); }
TEST_F(KernelRefTest, QLinearLookup) { RunOps({"QLinearLookup"}); }
TEST_F(KernelRefTest, QLinearSoftmax) { RunOps({"QLinearSoftmax"}); }
TEST_F(KernelRefTest, ConvTranspose) { RunOps({"ConvTranspose"}); }
TEST_F(KernelRefTest, Resize) { RunOps({"Resize"}); }
TEST_F(KernelRefTest, DepthSpace) { RunOps({"DepthToSpace", "SpaceToDepth"}); }
TEST_F(KernelRefTest, Recurrent) { RunOps({"LSTM", "GRU"}); }
TEST_F(KernelRefTest, Normalizations) {
  RunOps({"LayerNormalization", "InstanceNormalization"});
}
TEST_F(KernelRefTest, ByteCopies) {
  RunOps({"Copy", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"});
}

// Every op of the schema has at least one reference case. Custom and
// Subgraph nodes run kernels registered by name, tested with them
// (runtime_only CustomOpTest and PostprocessTest, armnn.*, CustomOpPlan).
TEST_F(KernelRefTest, EveryOpCovered) {
  for (schema::Op op : schema::EnumValuesOp()) {
    if (op == schema::Op::Custom || op == schema::Op::Subgraph) continue;
    bool found = false;
    for (const json& c : (*manifest_)["cases"]) {
      found = found || c["op"].get<std::string>() == schema::EnumNameOp(op);
    }
    EXPECT_TRUE(found) << "no reference case for " << schema::EnumNameOp(op);
  }
}

}  // namespace
}  // namespace baton
