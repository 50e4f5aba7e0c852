// The `baton` command line as users and scripts see it: --help everywhere,
// non-zero exits with a message, nothing partial written, inspect --json in
// DESIGN §7's layout.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/test_util.h"

namespace baton::test {
namespace {

struct Result {
  int code = -1;
  std::string out;
};

Result Baton(const std::string& args) {
  Result r;
  std::string cmd = std::string(BATON_TOOL) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string Tmp(const std::string& name) { return std::string(BATON_BINARY_DIR) + "/cli_" + name; }

TEST(Cli, HelpOnEverySubcommand) {
  for (const char* sub : {"plan", "inspect", "run", "sim", "pack", "profile"}) {
    Result r = Baton(std::string(sub) + " --help");
    EXPECT_EQ(r.code, 0) << sub;
    EXPECT_NE(r.out.find(sub), std::string::npos) << r.out;
  }
  EXPECT_NE(Baton("").code, 0);
  EXPECT_NE(Baton("frobnicate").code, 0);
}

TEST(Cli, PlanRunRoundTrip) {
  const std::string plan = Tmp("tiny.baton"), header = Tmp("tiny.h"), report = Tmp("tiny.json"), out = Tmp("out");
  Result r = Baton("plan " + GraphPath("tiny_cnn") + " --target " + TargetPath("soc4") +
                 " --assign Conv=npu0 --assign Gemm=dsp0 -o " + plan + " --header " + header +
                 " --report " + report + " --dot " + Tmp("tiny.dot"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(Exists(header));
  auto rep = nlohmann::json::parse(planner::ReadFile(report).value());
  EXPECT_EQ(rep["domains"]["npu_sram"]["capacity_bytes"], 8388608);
  EXPECT_GT(rep["copies"].get<int>(), 0);
  std::string h = planner::ReadFile(header).value();
  EXPECT_NE(h.find("#define BATON_NPU_SRAM_ARENA_BYTES"), std::string::npos);
  EXPECT_NE(h.find("baton_plan_data["), std::string::npos);
  r = Baton("run " + plan + " --input x=" + GraphDir() + "/tiny_cnn.x.npy --output-dir " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  auto y = AsFloats(LoadNpyBytes(out + "/y.npy"));
  auto ref = AsFloats(LoadNpyBytes(GraphDir() + "/tiny_cnn.ref.y.npy"));
  EXPECT_LE(RelativeError(y, ref), 1e-4);
}

// --isa portable always exists and is reported; an unknown name is refused.
TEST(Cli, RunSelectsKernelIsa) {
  const std::string plan = Tmp("tiny_isa.baton"), out = Tmp("out_isa");
  ASSERT_EQ(Baton("plan " + GraphPath("tiny_cnn") + " -o " + plan).code, 0);
  const std::string run = "run " + plan + " --input x=" + GraphDir() + "/tiny_cnn.x.npy --output-dir " + out;
  Result r = Baton(run + " --isa portable --repeat 2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("latency over 2 runs: median "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(kernels: portable)"), std::string::npos) << r.out;
  auto y = AsFloats(LoadNpyBytes(out + "/y.npy"));
  EXPECT_LE(RelativeError(y, AsFloats(LoadNpyBytes(GraphDir() + "/tiny_cnn.ref.y.npy"))), 1e-4);
  r = Baton(run + " --isa sse9");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.out.find("--isa"), std::string::npos) << r.out;
}

// `baton profile --isa` too: portable profiles with the portable kernels (it
// says so) and writes entries; an ISA that this build or CPU lacks exits 1
// and writes nothing.
TEST(Cli, ProfileSelectsKernelIsa) {
  const std::string plan = Tmp("tiny_isa_profile.baton"), json = Tmp("tiny_isa_profile.json");
  ASSERT_EQ(Baton("plan " + GraphPath("tiny_cnn") + " -o " + plan).code, 0);
  const std::string profile =
      "profile " + plan + " --input x=" + GraphDir() + "/tiny_cnn.x.npy -o " + json + " --runs 2";
  std::remove(json.c_str());
  Result r = Baton(profile + " --isa portable");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("(kernels: portable)"), std::string::npos) << r.out;
  auto prof = nlohmann::json::parse(planner::ReadFile(json).value());
  EXPECT_FALSE(prof["entries"].empty()) << prof.dump();
  EXPECT_EQ(prof.value("kernels", ""), "portable") << prof.dump();
  std::remove(json.c_str());
#if defined(__x86_64__)
  const char* missing = "neon_dotprod";
#else
  const char* missing = "avx2";
#endif
  r = Baton(profile + " --isa " + missing);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find(std::string("--isa ") + missing + ": not available"), std::string::npos)
      << r.out;
  EXPECT_FALSE(Exists(json));
}

// A CPU with "threads": 2 (issue 17): the plan carries Queue.threads = 2,
// `baton run` splits each Conv over two threads, and the outputs are
// bitwise those of the one-thread plan (and match torch on tiny_cnn).
TEST(Cli, CpuThreadsRunEqualsOneThread) {
  // conv 3x3 (im2col GEMM) -> depthwise 3x3 -> pointwise conv: each large
  // enough to be split.
  auto values = [](size_t n, uint32_t seed) {
    std::string out = "[";
    uint32_t v = seed;
    for (size_t i = 0; i < n; ++i) {
      v = v * 1664525u + 1013904223u;
      out += (i ? "," : "") + std::to_string(static_cast<int>(v >> 24) / 512.0 - 0.25);
    }
    return out + "]";
  };
  const std::string graph = Tmp("threads_graph.json");
  {
    std::string g =
        R"({"name": "threads", "inputs": [{"name": "x", "dtype": "float32", "shape": [1, 16, 32, 32]}],
      "outputs": ["y"], "initializers": [
      {"name": "w1", "dtype": "float32", "shape": [32, 16, 3, 3], "data": )" +
        values(32 * 16 * 9, 1) + R"(},
      {"name": "wd", "dtype": "float32", "shape": [32, 1, 3, 3], "data": )" +
        values(32 * 9, 2) + R"(},
      {"name": "w2", "dtype": "float32", "shape": [64, 32, 1, 1], "data": )" +
        values(64 * 32, 3) + R"(}],
      "nodes": [
      {"name": "c1", "op": "Conv", "inputs": ["x", "w1"], "outputs": ["t1"], "attrs": {"pads": [1, 1, 1, 1]}},
      {"name": "dw", "op": "Conv", "inputs": ["t1", "wd"], "outputs": ["t2"], "attrs": {"pads": [1, 1, 1, 1], "group": 32}},
      {"name": "c2", "op": "Conv", "inputs": ["t2", "w2"], "outputs": ["y"]}]})";
    FILE* f = std::fopen(graph.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(g.c_str(), f);
    std::fclose(f);
  }
  // The input: tiny_cnn's x is [1, 3, 16, 16]; write one of our own.
  const std::string x = Tmp("threads_x.npy");
  {
    std::vector<float> data(16 * 32 * 32);
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = static_cast<float>((i * 37) % 101) / 50.0f - 1.0f;
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 16, 32, 32), }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    FILE* f = std::fopen(x.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    std::fwrite(magic, 1, 8, f);
    const uint16_t len = static_cast<uint16_t>(header.size());
    std::fwrite(&len, 2, 1, f);
    std::fwrite(header.data(), 1, header.size(), f);
    std::fwrite(data.data(), sizeof(float), data.size(), f);
    std::fclose(f);
  }
  std::string outputs[2];
  const char* targets[2] = {"cpu", "cpu_2threads"};
  for (int t = 0; t < 2; ++t) {
    const std::string plan = Tmp(std::string("threads_") + targets[t] + ".baton");
    const std::string out = Tmp(std::string("threads_out_") + targets[t]);
    Result r = Baton("plan " + graph + " --target " + TargetPath(targets[t]) + " -o " + plan);
    ASSERT_EQ(r.code, 0) << r.out;
    r = Baton("inspect " + plan + " --json");
    ASSERT_EQ(r.code, 0) << r.out;
    const auto queue = nlohmann::json::parse(r.out)["queues"][0];
    if (t == 0) {
      EXPECT_FALSE(queue.contains("threads")) << r.out;
    } else {
      EXPECT_EQ(queue["threads"], 2) << r.out;
    }
    r = Baton("run " + plan + " --input x=" + x + " --output-dir " + out);
    ASSERT_EQ(r.code, 0) << r.out;
    outputs[t] = planner::ReadFile(out + "/y.npy").value();
  }
  EXPECT_GT(outputs[0].size(), static_cast<size_t>(64 * 32 * 32 * 4));
  EXPECT_TRUE(outputs[0] == outputs[1]) << "2-thread output differs from 1-thread output";

  const std::string plan = Tmp("tiny_2threads.baton"), out = Tmp("out_2threads");
  ASSERT_EQ(Baton("plan " + GraphPath("tiny_cnn") + " --target " + TargetPath("cpu_2threads") +
                  " -o " + plan)
                .code,
            0);
  Result r =
      Baton("run " + plan + " --input x=" + GraphDir() + "/tiny_cnn.x.npy --output-dir " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  auto y = AsFloats(LoadNpyBytes(out + "/y.npy"));
  EXPECT_LE(RelativeError(y, AsFloats(LoadNpyBytes(GraphDir() + "/tiny_cnn.ref.y.npy"))), 1e-4);
}

TEST(Cli, PlanFailureWritesNothing) {
  const std::string plan = Tmp("bad.baton"), report = Tmp("bad.json");
  std::remove(plan.c_str());
  std::remove(report.c_str());
  Result r = Baton("plan " + GraphPath("tiny_cnn") + " --target " + TargetPath("soc4") +
                 " --assign Conv=tpu9 -o " + plan + " --report " + report);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("baton plan: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tpu9"), std::string::npos) << r.out;
  EXPECT_FALSE(Exists(plan));
  EXPECT_FALSE(Exists(report));
  EXPECT_FALSE(Exists(plan + ".tmp"));
}

TEST(Cli, CapacityExceededNamesTheDomain) {
  // soc4's DSP TCM is 1 MiB; the residual graph's convolutions need more
  // with a big input... use a tiny-capacity target instead.
  const std::string target = Tmp("small.json");
  FILE* f = fopen(target.c_str(), "w");
  fputs(R"({"name": "small", "domains": [{"name": "sram", "bytes": 1024}],
            "devices": [{"name": "cpu0", "kind": "cpu", "domains": ["sram"]}]})", f);
  fclose(f);
  Result r = Baton("plan " + GraphPath("tiny_cnn") + " --target " + target + " -o " + Tmp("cap.baton"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("domain 'sram'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("capacity is 1024"), std::string::npos) << r.out;
  EXPECT_FALSE(Exists(Tmp("cap.baton")));
}

TEST(Cli, RunRejectsBadInputs) {
  const std::string plan = Tmp("tiny1.baton");
  ASSERT_EQ(Baton("plan " + GraphPath("tiny_cnn") + " -o " + plan).code, 0);
  Result r = Baton("run " + plan + " --input x=" + GraphDir() + "/branches.a.npy --output-dir " + Tmp("o2"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("shape"), std::string::npos) << r.out;
  r = Baton("run " + plan + " --input q=" + GraphDir() + "/tiny_cnn.x.npy --output-dir " + Tmp("o2"));
  EXPECT_EQ(r.code, 1);
  // Corrupt plan.
  std::string bytes = planner::ReadFile(plan).value();
  bytes.resize(bytes.size() / 2);
  ASSERT_TRUE(planner::WriteFileAtomic(Tmp("half.baton"), bytes).ok());
  r = Baton("run " + Tmp("half.baton") + " --input x=" + GraphDir() + "/tiny_cnn.x.npy --output-dir " + Tmp("o3"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("baton run: "), std::string::npos) << r.out;
  EXPECT_FALSE(Exists(Tmp("o3") + "/y.npy"));
}

TEST(Cli, InspectJsonFollowsDesign) {
  const std::string plan = Tmp("insp.baton");
  ASSERT_EQ(Baton("plan " + GraphPath("tiny_cnn") + " --target " + TargetPath("soc4") +
                " --assign Conv=npu0 --in-flight 2 -o " + plan).code, 0);
  Result r = Baton("inspect " + plan + " --json");
  ASSERT_EQ(r.code, 0) << r.out;
  auto j = nlohmann::ordered_json::parse(r.out);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"format", "version", "inferences_in_flight", "domains",
                                             "queues", "tensors", "nodes", "inputs", "outputs",
                                             "summary", "checksum"}));
  EXPECT_EQ(j["checksum"].get<std::string>().size(), 10u);  // "0x" + 8 hex digits
  EXPECT_EQ(j["format"], "baton-plan");
  EXPECT_EQ(j["inferences_in_flight"], 2);
  for (const auto& t : j["tensors"]) {
    for (const char* k : {"id", "name", "dtype", "shape", "bytes", "storage", "domain", "offset", "slots", "slot_stride"}) {
      EXPECT_TRUE(t.contains(k)) << k;
    }
    if (t["storage"] == "constant") {
      EXPECT_TRUE(t["domain"].is_null());
    }
  }
  bool copy = false;
  for (const auto& n : j["nodes"]) {
    for (const char* k : {"id", "name", "op", "queue", "position", "stage", "inputs", "outputs", "workspace", "waits"}) {
      EXPECT_TRUE(n.contains(k)) << k;
    }
    copy |= n["op"] == "__copy";
  }
  EXPECT_TRUE(copy);
  // Text mode shows the pipeline configuration.
  r = Baton("inspect " + plan);
  EXPECT_NE(r.out.find("-> [dma0 copy] -> npu0"), std::string::npos) << r.out;
}

TEST(Cli, PlansAreDeterministic) {
  for (int k = 0; k < 2; ++k) {
    ASSERT_EQ(Baton("plan " + GraphPath("residual") + " --target " + TargetPath("soc4") +
                  " --assign Conv=npu0 --in-flight 2 -o " + Tmp("det" + std::to_string(k) + ".baton")).code, 0);
  }
  EXPECT_EQ(planner::ReadFile(Tmp("det0.baton")).value(), planner::ReadFile(Tmp("det1.baton")).value());
}

}  // namespace
}  // namespace baton::test
