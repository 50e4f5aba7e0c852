// The Arm NN plugin (baton/linux/armnn_plugin.h): Subgraph nodes carrying
// ONNX regions, built by hand into plans (tests/runtime_only/plan_builder.h)
// and run through the Executor on the Linux port, threaded and cooperative,
// against ONNX Runtime's outputs for the same ONNX files (written by
// make_armnn_cases.py, the armnn.make_cases fixture).

#include "baton/linux/armnn_plugin.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "baton/executor.h"
#include "baton/linux/linux_port.h"
#include "plan_builder.h"

namespace baton::testing {
namespace {

using DeviceKind = schema::DeviceKind;
using Op = schema::Op;

struct TensorFile {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> data;
};

struct Case {
  std::vector<uint8_t> model;
  std::vector<TensorFile> inputs;
  std::vector<TensorFile> outputs;
};

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "missing " << path << " (run ctest -R armnn.make_cases first)";
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

Case LoadCase(const std::string& name) {
  const std::string dir = std::string(BATON_ARMNN_CASES) + "/" + name + "/";
  Case c;
  c.model = ReadBytes(dir + "model.onnx");
  std::ifstream meta(dir + "meta.txt");
  std::string line;
  while (std::getline(meta, line)) {
    std::istringstream s(line);
    std::string kind;
    TensorFile t;
    s >> kind >> t.name;
    for (int64_t d; s >> d;) t.shape.push_back(d);
    auto& list = kind == "input" ? c.inputs : c.outputs;
    const std::vector<uint8_t> bytes =
        ReadBytes(dir + (kind == "input" ? "in_" : "out_") + std::to_string(list.size()) + ".bin");
    t.data.resize(bytes.size() / sizeof(float));
    memcpy(t.data.data(), bytes.data(), bytes.size());
    list.push_back(t);
  }
  EXPECT_FALSE(c.inputs.empty()) << name;
  return c;
}

std::vector<uint8_t> Attributes(const std::vector<uint8_t>* model,
                                const std::vector<std::string>& backends = {}) {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<schema::Attribute>> attrs;
  if (!backends.empty()) {
    std::vector<flatbuffers::Offset<flatbuffers::String>> names;
    for (const std::string& b : backends) names.push_back(fbb.CreateString(b));
    attrs.push_back(schema::CreateAttributeDirect(fbb, "backends", schema::AttributeKind::Strings,
                                                  nullptr, nullptr, &names));
  }
  if (model != nullptr) {
    const std::vector<int64_t> shape = {static_cast<int64_t>(model->size())};
    fbb.ForceVectorAlignment(model->size(), 1, 8);
    attrs.push_back(schema::CreateAttributeDirect(fbb, "model", schema::AttributeKind::Tensor,
                                                  nullptr, nullptr, nullptr, schema::DType::UInt8,
                                                  &shape, model));
  }
  fbb.Finish(schema::CreateCustomAttributesDirect(fbb, &attrs));
  return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
}

// Graph inputs -> one Subgraph node "region" (runtime "armnn") on an npu
// queue -> graph outputs. With `cpu_pre`, a reference Relu on a cpu queue
// first rewrites input 0 (the region then sees relu(x)).
AlignedPlan SubgraphPlan(const Case& c, const std::vector<uint8_t>& attributes,
                         bool cpu_pre = false) {
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 1 << 16, 64);
  const uint32_t cpu = b.Queue("cpu0", DeviceKind::Cpu, {dram});
  const uint32_t npu = b.Queue("npu0", DeviceKind::Npu, {dram});
  uint64_t offset = 0;
  const auto arena = [&](const TensorFile& t, const std::string& name) {
    const uint32_t id = b.Arena(name, t.shape, dram, offset);
    offset += (PlanBuilder::Bytes(t.shape, schema::DType::Float32) + 63) / 64 * 64;
    return id;
  };
  std::vector<uint32_t> inputs, outputs;
  std::vector<int32_t> node_inputs;
  for (const TensorFile& t : c.inputs) {
    inputs.push_back(arena(t, t.name));
    node_inputs.push_back(static_cast<int32_t>(inputs.back()));
  }
  for (const TensorFile& t : c.outputs) outputs.push_back(arena(t, t.name + "_out"));
  std::vector<WaitSpec> waits;
  if (cpu_pre) {
    const uint32_t pre = arena(c.inputs[0], "pre");
    b.Node("pre", Op::Relu, cpu, {node_inputs[0]}, {pre});
    node_inputs[0] = static_cast<int32_t>(pre);
    waits.push_back({0, 0});
  }
  b.fbb().ForceVectorAlignment(attributes.size(), 1, 8);
  const auto bytes = b.fbb().CreateVector(attributes);
  const auto params = schema::CreateCustomParams(b.fbb(), b.fbb().CreateString("armnn"), bytes);
  b.Node("region", Op::Subgraph, npu, node_inputs, outputs, waits, 0, schema::Params::CustomParams,
         params.Union());
  b.Inputs(inputs);
  b.Outputs(outputs);
  return b.Finish();
}

const KernelRegistry& Registry() {
  static KernelRegistry registry;
  static const bool ok = RegisterReferenceKernels(&registry).ok() &&
                         RegisterArmnnRuntime(&registry, DeviceKind::Npu).ok();
  if (!ok) abort();
  return registry;
}

// Runs `runs` inferences of `plan` on the Linux port; returns Init's or the
// first inference error (with `error` describing an Init failure).
Status RunPlan(const AlignedPlan& plan, const KernelRegistry& registry, bool threaded,
               const Case& c, std::vector<std::vector<float>>* out, LoadError* error,
               int runs = 2) {
  PlanView view;
  BATON_RETURN_IF_ERROR(PlanView::Load(plan.data(), plan.size(), &view, error));
  linux_port::Arenas arenas(view);
  linux_port::Options options;
  options.threaded = threaded;
  linux_port::LinuxPort port(view, arenas.buffers(), options);
  Executor executor;
  BATON_RETURN_IF_ERROR(executor.Init(view, registry, &port, arenas.buffers(), error));
  BATON_RETURN_IF_ERROR(port.Start(&executor));
  std::vector<ConstBuffer> in;
  for (const TensorFile& t : c.inputs) in.push_back({t.data.data(), t.data.size() * sizeof(float)});
  Status status;
  for (int r = 0; r < runs && status.ok(); ++r) {
    out->assign(c.outputs.size(), {});
    std::vector<Buffer> buffers;
    for (size_t k = 0; k < c.outputs.size(); ++k) {
      (*out)[k].assign(c.outputs[k].data.size(), std::nanf(""));
      buffers.push_back({(*out)[k].data(), (*out)[k].size() * sizeof(float)});
    }
    status = executor.Invoke({in.data(), in.size()}, {buffers.data(), buffers.size()});
  }
  port.Stop();
  return status;
}

class ArmnnCaseTest : public ::testing::TestWithParam<std::tuple<std::string, bool>> {};

TEST_P(ArmnnCaseTest, MatchesOnnxRuntime) {
  const auto& [name, threaded] = GetParam();
  const Case c = LoadCase(name);
  // One case names its backend explicitly; the rest use the default.
  const std::vector<std::string> backends =
      name == "gemm_softmax" ? std::vector<std::string>{"CpuRef"} : std::vector<std::string>{};
  const AlignedPlan plan = SubgraphPlan(c, Attributes(&c.model, backends));
  std::vector<std::vector<float>> out;
  LoadError error;
  const Status status = RunPlan(plan, Registry(), threaded, c, &out, &error);
  ASSERT_TRUE(status.ok()) << status.message() << " " << error.text;
  ASSERT_EQ(out.size(), c.outputs.size());
  for (size_t k = 0; k < out.size(); ++k) {
    const std::vector<float>& want = c.outputs[k].data;
    ASSERT_EQ(out[k].size(), want.size());
    float max_diff = 0;
    for (size_t i = 0; i < want.size(); ++i)
      max_diff = std::fmax(max_diff, std::fabs(out[k][i] - want[i]));
    EXPECT_LE(max_diff, 1e-4f) << "output " << c.outputs[k].name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ArmnnCaseTest,
    ::testing::Combine(::testing::Values("conv_relu_pool", "dw_clip_add", "dw_mult_avgpool",
                                         "gemm_softmax", "concat_outputs", "mul_gap_reshape",
                                         "pool_softmax", "bn_hardswish", "torch_mobile"),
                       ::testing::Bool()),
    [](const auto& p) {
      return std::get<0>(p.param) + (std::get<1>(p.param) ? "_threaded" : "_cooperative");
    });

// A reference Relu on the cpu queue feeds the region on the npu queue (a
// cross-queue wait): the region sees relu(x); the reference is ORT's output
// for relu(x) (out_pre_0.bin).
TEST(ArmnnPluginTest, RunsAfterAReferenceKernelOnAnotherQueue) {
  const Case c = LoadCase("conv_relu_pool");
  const std::vector<uint8_t> bytes =
      ReadBytes(std::string(BATON_ARMNN_CASES) + "/conv_relu_pool/out_pre_0.bin");
  std::vector<float> want(bytes.size() / sizeof(float));
  memcpy(want.data(), bytes.data(), bytes.size());
  const AlignedPlan plan = SubgraphPlan(c, Attributes(&c.model), /*cpu_pre=*/true);
  for (const bool threaded : {false, true}) {
    std::vector<std::vector<float>> out;
    LoadError error;
    ASSERT_TRUE(RunPlan(plan, Registry(), threaded, c, &out, &error).ok()) << error.text;
    ASSERT_EQ(out[0].size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(out[0][i], want[i], 1e-4f) << i;
  }
}

// Two regions on two accelerator queues (npu0: conv_relu_pool, gpu0:
// gemm_softmax), independent, so the threaded port runs their Arm NN
// networks concurrently; two inferences in flight, eight submitted.
TEST(ArmnnPluginTest, TwoRegionsRunConcurrentlyOnTwoQueues) {
  const Case a = LoadCase("conv_relu_pool");
  const Case g = LoadCase("gemm_softmax");
  PlanBuilder b;
  const uint32_t dram = b.Domain("dram", 1 << 16, 64);
  const uint32_t npu = b.Queue("npu0", DeviceKind::Npu, {dram});
  const uint32_t gpu = b.Queue("gpu0", DeviceKind::Gpu, {dram});
  uint64_t offset = 0;
  const auto arena = [&](const TensorFile& t) {
    const uint64_t bytes = PlanBuilder::Bytes(t.shape, schema::DType::Float32);
    const uint32_t id =
        b.Arena(t.name + std::to_string(offset), t.shape, dram, offset, 2, (bytes + 63) / 64 * 64);
    offset += 2 * ((bytes + 63) / 64 * 64);
    return id;
  };
  const uint32_t xa = arena(a.inputs[0]), ya = arena(a.outputs[0]);
  const uint32_t xg = arena(g.inputs[0]), yg = arena(g.outputs[0]);
  const auto region = [&](const Case& c, uint32_t queue, uint32_t x, uint32_t y) {
    const std::vector<uint8_t> attributes = Attributes(&c.model);
    b.fbb().ForceVectorAlignment(attributes.size(), 1, 8);
    const auto bytes = b.fbb().CreateVector(attributes);
    const auto params = schema::CreateCustomParams(b.fbb(), b.fbb().CreateString("armnn"), bytes);
    b.Node("region" + std::to_string(queue), Op::Subgraph, queue, {static_cast<int32_t>(x)}, {y},
           {}, 0, schema::Params::CustomParams, params.Union());
  };
  region(a, npu, xa, ya);
  region(g, gpu, xg, yg);
  b.Inputs({xa, xg});
  b.Outputs({ya, yg});
  b.InFlight(2);
  const AlignedPlan plan = b.Finish();

  KernelRegistry registry;
  ASSERT_TRUE(RegisterArmnnRuntime(&registry, DeviceKind::Npu).ok());
  ASSERT_TRUE(RegisterArmnnRuntime(&registry, DeviceKind::Gpu).ok());
  PlanView view;
  LoadError error;
  ASSERT_TRUE(PlanView::Load(plan.data(), plan.size(), &view, &error).ok()) << error.text;
  linux_port::Arenas arenas(view);
  linux_port::LinuxPort port(view, arenas.buffers());
  Executor executor;
  ASSERT_TRUE(executor.Init(view, registry, &port, arenas.buffers(), &error).ok()) << error.text;
  ASSERT_TRUE(port.Start(&executor).ok());
  const std::vector<float>& in_a = a.inputs[0].data;
  const std::vector<float>& in_g = g.inputs[0].data;
  int submitted = 0, retired = 0;
  while (retired < 8) {
    while (submitted < 8) {
      const Status s = executor.SetInput(0, in_a.data(), in_a.size() * sizeof(float));
      if (s.code() == StatusCode::kBusy) break;
      ASSERT_TRUE(s.ok()) << s.message();
      ASSERT_TRUE(executor.SetInput(1, in_g.data(), in_g.size() * sizeof(float)).ok());
      ASSERT_TRUE(executor.Run().ok());
      ++submitted;
    }
    if (submitted == 8) executor.Flush();
    ASSERT_TRUE(executor.Wait().ok());
    std::vector<float> out_a(a.outputs[0].data.size()), out_g(g.outputs[0].data.size());
    const Buffer out[] = {{out_a.data(), out_a.size() * sizeof(float)},
                          {out_g.data(), out_g.size() * sizeof(float)}};
    ASSERT_TRUE(executor.GetOutputs(out).ok());
    for (size_t i = 0; i < out_a.size(); ++i) ASSERT_NEAR(out_a[i], a.outputs[0].data[i], 1e-4f);
    for (size_t i = 0; i < out_g.size(); ++i) ASSERT_NEAR(out_g[i], g.outputs[0].data[i], 1e-4f);
    ++retired;
  }
  port.Stop();
}

std::string InitError(const AlignedPlan& plan, const KernelRegistry& registry, const Case& c,
                      StatusCode* code) {
  std::vector<std::vector<float>> out;
  LoadError error;
  *code = RunPlan(plan, registry, false, c, &out, &error).code();
  return error.text;
}

TEST(ArmnnPluginTest, UnsupportedOpNamesNodeAndOp) {
  const struct {
    const char* name;
    const char* node;
    const char* op;
    const char* why;
  } cases[] = {{"unsupported", "erf1", "(Erf)", "not supported"},
               {"unsupported_group", "grouped", "(Conv)", "group 2"},
               {"unsupported_softmax_axis", "sm_axis1", "(Softmax)", "other than the last"}};
  for (const auto& u : cases) {
    const Case c = LoadCase(u.name);
    StatusCode code;
    const std::string text = InitError(SubgraphPlan(c, Attributes(&c.model)), Registry(), c, &code);
    EXPECT_EQ(code, StatusCode::kUnimplemented) << text;
    for (const char* part : {"region", u.node, u.op, u.why}) {
      EXPECT_NE(text.find(part), std::string::npos) << part << " not in: " << text;
    }
  }
}

TEST(ArmnnPluginTest, MalformedOrMissingModelIsRejected) {
  const Case c = LoadCase("conv_relu_pool");
  StatusCode code;
  const std::vector<uint8_t> garbage = {0xff, 0xff, 0xff, 0xff, 0x07, 0x01, 0x02, 0x03};
  std::string text = InitError(SubgraphPlan(c, Attributes(&garbage)), Registry(), c, &code);
  EXPECT_EQ(code, StatusCode::kInvalidArgument);
  EXPECT_NE(text.find("not a valid ONNX ModelProto"), std::string::npos) << text;
  // A truncated model: either not parseable or missing parts of the graph.
  const std::vector<uint8_t> half(c.model.begin(), c.model.begin() + c.model.size() / 2);
  text = InitError(SubgraphPlan(c, Attributes(&half)), Registry(), c, &code);
  EXPECT_NE(code, StatusCode::kOk);
  EXPECT_NE(text.find("armnn"), std::string::npos) << text;
  text = InitError(SubgraphPlan(c, Attributes(nullptr)), Registry(), c, &code);
  EXPECT_EQ(code, StatusCode::kInvalidArgument);
  EXPECT_NE(text.find("'model'"), std::string::npos) << text;
}

// Corrupted regions (every model byte in turn XOR 0x5A, sampled) either
// load or fail prepare with a message; none may crash the process (Debian's
// Arm NN aborts on failed assertions, so the plugin must check first).
TEST(ArmnnPluginTest, CorruptedModelsFailCleanly) {
  for (const char* name : {"conv_relu_pool", "mul_gap_reshape", "concat_outputs"}) {
    const Case c = LoadCase(name);
    size_t rejected = 0, tried = 0;
    for (size_t at = 0; at < c.model.size(); at += 1 + c.model.size() / 97) {
      std::vector<uint8_t> bad = c.model;
      bad[at] ^= 0x5A;
      const AlignedPlan plan = SubgraphPlan(c, Attributes(&bad));
      PlanView view;
      ASSERT_TRUE(PlanView::Load(plan.data(), plan.size(), &view).ok());
      linux_port::Arenas arenas(view);
      InlinePort port;
      Executor executor;
      LoadError error;
      ++tried;
      if (!executor.Init(view, Registry(), &port, arenas.buffers(), &error).ok()) {
        ++rejected;
        EXPECT_NE(std::string(error.text).find("armnn"), std::string::npos) << error.text;
      }
    }
    EXPECT_GT(rejected, 0u) << name << ": " << tried << " tried";
  }
  ReleaseArmnnNetworks();
}

TEST(ArmnnPluginTest, NodeTensorsMustMatchTheModel) {
  Case c = LoadCase("conv_relu_pool");
  c.inputs[0].shape = {1, 3, 8, 4};  // the model says [1, 3, 8, 8]
  c.inputs[0].data.resize(96);
  StatusCode code;
  const std::string text = InitError(SubgraphPlan(c, Attributes(&c.model)), Registry(), c, &code);
  EXPECT_EQ(code, StatusCode::kInvalidArgument);
  EXPECT_NE(text.find("graph input 'x'"), std::string::npos) << text;
}

TEST(ArmnnPluginTest, UnknownBackendIsAnError) {
  const Case c = LoadCase("conv_relu_pool");
  StatusCode code;
  const std::string text =
      InitError(SubgraphPlan(c, Attributes(&c.model, {"NoSuchAcc"})), Registry(), c, &code);
  EXPECT_NE(code, StatusCode::kOk);
  EXPECT_NE(text.find("armnn"), std::string::npos) << text;
}

TEST(ArmnnPluginTest, WithoutRegistrationTheLoaderNamesArmnn) {
  const Case c = LoadCase("conv_relu_pool");
  KernelRegistry registry;
  ASSERT_TRUE(RegisterReferenceKernels(&registry).ok());
  // Registered for another device kind only: still no kernel on the npu.
  ASSERT_TRUE(RegisterArmnnRuntime(&registry, DeviceKind::Gpu).ok());
  StatusCode code;
  const std::string text = InitError(SubgraphPlan(c, Attributes(&c.model)), registry, c, &code);
  EXPECT_EQ(code, StatusCode::kUnimplemented);
  EXPECT_NE(text.find("armnn"), std::string::npos) << text;
}

TEST(ArmnnPluginTest, PreparingANodeAgainReplacesItsNetwork) {
  ReleaseArmnnNetworks();
  EXPECT_EQ(ArmnnLoadedNetworks(), 0u);
  const Case c = LoadCase("gemm_softmax");
  const AlignedPlan plan = SubgraphPlan(c, Attributes(&c.model));
  PlanView view;
  ASSERT_TRUE(PlanView::Load(plan.data(), plan.size(), &view).ok());
  linux_port::Arenas arenas(view);
  InlinePort port;
  Executor a, b;
  ASSERT_TRUE(a.Init(view, Registry(), &port, arenas.buffers()).ok());
  ASSERT_TRUE(b.Init(view, Registry(), &port, arenas.buffers()).ok());
  EXPECT_EQ(ArmnnLoadedNetworks(), 1u);
  ReleaseArmnnNetworks();
  EXPECT_EQ(ArmnnLoadedNetworks(), 0u);
}

// Two executors of the same plan bytes share node pointers. While one runs
// the region, the other prepares the node again (Executor::Init) several
// times: the running one must keep a live network (it held a raw pointer the
// re-prepare freed; ASan in CI sees a use after free) and keep matching ONNX
// Runtime.
TEST(ArmnnPluginTest, ReprepareWhileAnotherExecutorRuns) {
  const Case c = LoadCase("gemm_softmax");
  const AlignedPlan plan = SubgraphPlan(c, Attributes(&c.model));
  PlanView view;
  ASSERT_TRUE(PlanView::Load(plan.data(), plan.size(), &view).ok());
  linux_port::Arenas arenas_a(view), arenas_b(view);
  linux_port::Options options;
  options.threaded = false;
  linux_port::LinuxPort port_a(view, arenas_a.buffers(), options);
  InlinePort port_b;
  Executor a;
  ASSERT_TRUE(a.Init(view, Registry(), &port_a, arenas_a.buffers()).ok());
  ASSERT_TRUE(port_a.Start(&a).ok());
  std::vector<ConstBuffer> in;
  for (const TensorFile& t : c.inputs) in.push_back({t.data.data(), t.data.size() * sizeof(float)});
  Status run_status;
  float max_diff = 0;
  std::thread runner([&] {
    for (int r = 0; r < 40 && run_status.ok(); ++r) {
      std::vector<std::vector<float>> out(c.outputs.size());
      std::vector<Buffer> buffers;
      for (size_t k = 0; k < c.outputs.size(); ++k) {
        out[k].assign(c.outputs[k].data.size(), std::nanf(""));
        buffers.push_back({out[k].data(), out[k].size() * sizeof(float)});
      }
      run_status = a.Invoke({in.data(), in.size()}, {buffers.data(), buffers.size()});
      for (size_t k = 0; k < out.size(); ++k) {
        for (size_t i = 0; i < out[k].size(); ++i) {
          max_diff = std::fmax(max_diff, std::fabs(out[k][i] - c.outputs[k].data[i]));
        }
      }
    }
  });
  Status init_status;
  for (int r = 0; r < 5 && init_status.ok(); ++r) {
    Executor b;
    init_status = b.Init(view, Registry(), &port_b, arenas_b.buffers());
  }
  runner.join();
  port_a.Stop();
  EXPECT_TRUE(init_status.ok()) << init_status.message();
  ASSERT_TRUE(run_status.ok()) << run_status.message();
  EXPECT_LE(max_diff, 1e-4f);
  EXPECT_EQ(ArmnnLoadedNetworks(), 1u);
  ReleaseArmnnNetworks();
}

// --- baton run -------------------------------------------------------------

void WriteFile(const std::string& path, const void* data, size_t size) {
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
}

// A float32 .npy (format 1.0) of `t`.
void WriteNpy(const std::string& path, const TensorFile& t) {
  std::string shape;
  for (int64_t d : t.shape) shape += std::to_string(d) + ",";
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string bytes = "\x93NUMPY";
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  bytes.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(float));
  WriteFile(path, bytes.data(), bytes.size());
}

// The float32 payload of a .npy (format 1.0) file: its last `count` values.
std::vector<float> ReadNpyTail(const std::string& path, size_t count) {
  const std::vector<uint8_t> bytes = ReadBytes(path);
  std::vector<float> out(count);
  if (bytes.size() < count * sizeof(float)) return {};
  memcpy(out.data(), bytes.data() + bytes.size() - count * sizeof(float), count * sizeof(float));
  return out;
}

// `baton run` registers the plugin for the queues that hold armnn nodes (the
// npu queue here) and runs the plan from the command line.
TEST(ArmnnPluginTest, BatonRunRunsArmnnRegions) {
  const Case c = LoadCase("dw_clip_add");
  const AlignedPlan plan = SubgraphPlan(c, Attributes(&c.model));
  const std::string dir = std::string(BATON_ARMNN_CASES) + "/baton_run";
  ASSERT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  WriteFile(dir + "/plan.baton", plan.data(), plan.size());
  std::string command =
      std::string(BATON_TOOL) + " run " + dir + "/plan.baton --output-dir " + dir + "/out";
  for (const TensorFile& t : c.inputs) {
    WriteNpy(dir + "/" + t.name + ".npy", t);
    command += " --input " + t.name + "=" + dir + "/" + t.name + ".npy";
  }
  const int rc = std::system((command + " > " + dir + "/log.txt 2>&1").c_str());
  const std::vector<uint8_t> log = ReadBytes(dir + "/log.txt");
  ASSERT_EQ(rc, 0) << command << "\n" << std::string(log.begin(), log.end());
  const std::vector<float> y = ReadNpyTail(dir + "/out/y_out.npy", c.outputs[0].data.size());
  ASSERT_EQ(y.size(), c.outputs[0].data.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], c.outputs[0].data[i], 1e-4f) << i;
}

}  // namespace
}  // namespace baton::testing
