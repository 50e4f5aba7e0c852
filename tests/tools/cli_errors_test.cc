// The `baton` command line on bad input (issue 13): every usage error exits 1
// with the `baton CMD:` prefix, crashes and silent acceptance are clear
// errors, and every command's outputs are all or nothing (a directory in the
// way, two outputs on one path, a full disk).

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "common/test_util.h"
#include "tool_test_util.h"

namespace baton::test {
namespace {

struct Outcome {
  int code = -1;    // exit code; -1 when killed by a signal
  int signal = 0;   // the signal that killed it
  std::string out;  // stdout and stderr
};

// Runs `baton ARGS` through the shell, with `setup` (shell commands, e.g. a
// ulimit) before it.
Outcome Baton(const std::string& args, const std::string& setup = "") {
  Outcome r;
  const std::string inner = setup + (setup.empty() ? "" : "; ") + "exec " + BATON_TOOL + " " + args;
  const int status = RunShell("bash -c '" + inner + "' 2>&1", &r.out);
  if (status == -1) return r;
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  // bash reports a child killed by signal s as exit 128 + s.
  if (r.code > 128 && r.code < 160) r.signal = r.code - 128;
  return r;
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// A fresh, empty directory for one test.
std::string Dir(const std::string& name) {
  const std::string d = std::string(BATON_BINARY_DIR) + "/cli_errors/" + name;
  EXPECT_EQ(std::system(("rm -rf " + d + " && mkdir -p " + d).c_str()), 0);
  return d;
}

// Names of the entries of directory `d`, space-separated and sorted.
std::string Listing(const std::string& d) {
  std::string out;
  RunShell("ls -A " + d + " | sort | tr '\\n' ' '", &out);
  return out;
}

void WriteText(const std::string& path, const std::string& text) {
  FILE* f = std::fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr) << path;
  std::fputs(text.c_str(), f);
  ASSERT_EQ(std::fclose(f), 0);
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// A plan of tiny_cnn, the input of run/inspect/sim tests.
std::string TinyPlan(const std::string& dir) {
  const std::string plan = dir + "/tiny.baton";
  Outcome r = Baton("plan " + GraphPath("tiny_cnn") + " -o " + plan + " -q");
  EXPECT_EQ(r.code, 0) << r.out;
  return plan;
}

// --- Usage errors -----------------------------------------------------------

TEST(CliErrors, UsageErrorsExitOneWithTheCommandPrefix) {
  const std::string d = Dir("usage");
  const std::string plan = TinyPlan(d);
  const std::string model = GraphPath("tiny_cnn");
  const std::pair<std::string, std::string> cases[] = {
      {"plan", "plan " + model + " --bogus -o " + d + "/p.baton"},
      {"plan", "plan " + model},                                      // no -o
      {"plan", "plan " + d + "/missing.json -o " + d + "/p.baton"},   // not a file
      {"plan", "plan " + model + " --in-flight 99 -o " + d + "/p.baton"},
      {"plan", "plan " + model + " --in-flight two -o " + d + "/p.baton"},
      {"inspect", "inspect"},
      {"inspect", "inspect " + plan + " --yaml"},
      {"run", "run " + plan + " --output-dir " + d + "/o"},           // no --input
      {"run", "run " + plan + " --input x=a.npy --output-dir " + d + "/o --inferences 0"},
      {"sim", "sim " + plan + " --inferences 4"},                     // no --target
      {"sim", "sim " + plan + " --target t.json --inferences -1"},
      {"pack", "pack"},
      {"pack", "pack a.csv --capacity lots"},
  };
  for (const auto& [cmd, args] : cases) {
    Outcome r = Baton(args);
    EXPECT_EQ(r.code, 1) << args << "\n" << r.out;
    EXPECT_TRUE(StartsWith(r.out, "baton " + cmd + ": ")) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("Run 'baton " + cmd + " --help' for usage."), std::string::npos) << r.out;
  }
  for (const std::string args : {"", "frobnicate", "--bogus"}) {
    Outcome r = Baton(args);
    EXPECT_EQ(r.code, 1) << args << "\n" << r.out;
    EXPECT_TRUE(StartsWith(r.out, "baton: ")) << args << "\n" << r.out;
  }
  EXPECT_FALSE(Exists(d + "/p.baton"));
  for (const char* sub : {"plan", "inspect", "run", "sim", "pack"}) {
    EXPECT_EQ(Baton(std::string(sub) + " --help").code, 0) << sub;
  }
  EXPECT_EQ(Baton("--help").code, 0);
}

// --- Graphs the planner cannot plan ----------------------------------------

TEST(CliErrors, GraphWithoutNodesIsAnError) {
  const std::string d = Dir("empty_graph");
  WriteText(d + "/g.json", R"({"inputs": [{"name": "x", "shape": [1, 4]}], "outputs": ["x"], "nodes": []})");
  Outcome r = Baton("plan " + d + "/g.json -o " + d + "/p.baton");
  EXPECT_EQ(r.code, 1) << r.out;  // was SIGSEGV
  EXPECT_EQ(r.out, "baton plan: the graph has no nodes; every output is a graph input or a constant\n");
  EXPECT_EQ(Listing(d), "g.json ");
}

// A Concat of N inputs.
std::string WideGraph(int n) {
  std::string inputs, names;
  for (int i = 0; i < n; ++i) {
    inputs += std::string(i ? ", " : "") + "{\"name\": \"x" + std::to_string(i) + "\", \"shape\": [1, 2]}";
    names += std::string(i ? ", " : "") + "\"x" + std::to_string(i) + "\"";
  }
  return "{\"inputs\": [" + inputs + "], \"outputs\": [\"y\"], \"nodes\": [{\"name\": \"cat\", " +
         "\"op\": \"Concat\", \"attrs\": {\"axis\": 1}, \"inputs\": [" + names + "], \"outputs\": [\"y\"]}]}";
}

TEST(CliErrors, TooManyGraphInputsNamesTheLimit) {
  const std::string d = Dir("wide");
  WriteText(d + "/g64.json", WideGraph(64));
  WriteText(d + "/g65.json", WideGraph(65));
  Outcome r = Baton("plan " + d + "/g64.json -o " + d + "/p64.baton -q");
  EXPECT_EQ(r.code, 0) << r.out;
  r = Baton("plan " + d + "/g65.json -o " + d + "/p65.baton");
  EXPECT_EQ(r.code, 1) << r.out;  // was "internal: the runtime rejects the plan: " and nothing
  EXPECT_EQ(r.out, "baton plan: the graph has 65 inputs; the runtime supports at most 64 "
                   "(kMaxGraphInputs in runtime/include/baton/config.h)\n");
  EXPECT_FALSE(Exists(d + "/p65.baton"));
}

TEST(CliErrors, ZeroChannelBatchNormDoesNotCrash) {
  const std::string d = Dir("zero_bn");
  WriteText(d + "/g.json", R"({"inputs": [{"name": "x", "shape": [1, 2, 4, 4]}],
    "initializers": [{"name": "w", "shape": [0, 2, 1, 1], "data": []},
                     {"name": "s", "shape": [0], "data": []}, {"name": "b", "shape": [0], "data": []},
                     {"name": "m", "shape": [0], "data": []}, {"name": "v", "shape": [0], "data": []}],
    "nodes": [{"name": "conv", "op": "Conv", "inputs": ["x", "w"], "outputs": ["c"]},
              {"name": "bn", "op": "BatchNormalization", "inputs": ["c", "s", "b", "m", "v"], "outputs": ["y"]}],
    "outputs": ["y"]})");
  Outcome r = Baton("plan " + d + "/g.json -o " + d + "/p.baton");
  EXPECT_EQ(r.signal, 0) << r.out;  // was SIGFPE
  // Nothing to fold: the zero-channel Conv and BatchNorm are planned as they are.
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("2 nodes"), std::string::npos) << r.out;
}

TEST(CliErrors, AssignRankMustBeDigits) {
  const std::string d = Dir("assign");
  for (const char* rule : {"Conv#+1=cpu0", "Conv#-1=cpu0", "Conv# 1=cpu0", "Conv#99999999999999999999=cpu0",
                           "#0=cpu0", "@=cpu0"}) {
    Outcome r = Baton("plan " + GraphPath("tiny_cnn") + " --assign \"" + rule + "\" -o " + d + "/p.baton");
    EXPECT_EQ(r.code, 1) << rule << ": " << r.out;
    EXPECT_TRUE(StartsWith(r.out, "baton plan: --assign ")) << r.out;
  }
  EXPECT_EQ(Baton("plan " + GraphPath("tiny_cnn") + " --assign Conv#0=cpu0 -q -o " + d + "/p.baton").code, 0);
}

TEST(CliErrors, SplitTakesOneListAndRejectsEmptyNames) {
  const std::string d = Dir("split_args");
  const std::string plan = "plan " + GraphPath("tiny_cnn") + " -o " + d + "/p.baton ";
  Outcome r = Baton(plan + "--in-flight 2 --split , -q");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out, "baton plan: --split: an empty node name (give NAME[,NAME...])\n");
  EXPECT_FALSE(Exists(d + "/p.baton"));
  // Two names after one --split: the second is not taken as the model.
  r = Baton(plan + "--in-flight 2 --split conv1 relu1");
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_FALSE(Exists(d + "/p.baton"));
}

// --- run's inputs and options -------------------------------------------------

TEST(CliErrors, RunRejectsDuplicateInputsAndBadAffinity) {
  const std::string d = Dir("run_args");
  const std::string plan = TinyPlan(d);
  const std::string x = GraphDir() + "/tiny_cnn.x.npy";
  const std::string run = "run " + plan + " --output-dir " + d + "/o ";
  Outcome r = Baton(run + "--input x=" + x + " --input x=" + GraphDir() + "/branches.a.npy");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out, "baton run: --input x is given twice\n");
  // A misspelt name is named before the missing one, with the plan's inputs.
  r = Baton(run + "--input y=" + x);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out, "baton run: --input y: the plan has no input of that name (its inputs: 'x')\n");
  r = Baton(run + "--input x=" + x + " --affinity 999");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(StartsWith(r.out, "baton run: --affinity 999: not a CPU this process may run on")) << r.out;
  r = Baton(run + "--input x=" + x + " --affinity 0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(StartsWith(r.out, "baton run: --affinity lists 17 CPUs but the plan has 1 queues")) << r.out;
  EXPECT_FALSE(Exists(d + "/o"));
  r = Baton(run + "--input x=" + x + " --affinity 0");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(Exists(d + "/o/y.npy"));
}

TEST(CliErrors, RunRejectsBadNpy) {
  const std::string d = Dir("run_npy");
  const std::string plan = TinyPlan(d);
  // tiny_cnn's x with its shape's first dimension written as -1.
  std::string bytes = planner::ReadFile(GraphDir() + "/tiny_cnn.x.npy").value();
  const size_t at = bytes.find("'shape': (1,");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 12, "'shape': (-1");
  ASSERT_TRUE(planner::WriteFileAtomic(d + "/neg.npy", bytes).ok());
  Outcome r = Baton("run " + plan + " --input x=" + d + "/neg.npy --output-dir " + d + "/o");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out, "baton run: " + d + "/neg.npy: negative dimension -1 in the .npy shape\n");
  bytes.replace(at, 12, "'shape': (12345678901234567890123");
  ASSERT_TRUE(planner::WriteFileAtomic(d + "/huge.npy", bytes).ok());
  r = Baton("run " + plan + " --input x=" + d + "/huge.npy --output-dir " + d + "/o");
  EXPECT_EQ(r.code, 1) << r.out;  // was an uncaught std::out_of_range
  EXPECT_NE(r.out.find("dimension 12345678901234567890123 in the .npy shape is too large"),
            std::string::npos) << r.out;
  EXPECT_FALSE(Exists(d + "/o"));
}

// --- All-or-nothing outputs ---------------------------------------------------

TEST(CliErrors, PlanOutputsAreAllOrNothing) {
  const std::string d = Dir("plan_outputs");
  const std::string plan_args = "plan " + GraphPath("tiny_cnn") + " -q ";
  ASSERT_EQ(std::system(("mkdir " + d + "/adir").c_str()), 0);
  for (const char* flag : {"--header", "--report", "--dot"}) {
    Outcome r = Baton(plan_args + "-o " + d + "/p.baton " + flag + " " + d + "/adir");
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_EQ(r.out, "baton plan: " + std::string(flag) + " " + d + "/adir: is a directory\n");
  }
  Outcome r = Baton(plan_args + "-o " + d + "/p.baton --header " + d + "/p.baton");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out, "baton plan: --header " + d + "/p.baton: the same file as -o " + d +
                       "/p.baton; every output needs its own path\n");
  r = Baton(plan_args + "-o " + d + "/p.baton --report " + d + "/r.json --dot " + d + "/adir/../r.json");
  EXPECT_EQ(r.code, 1) << r.out;
  r = Baton(plan_args + "-o " + d + "/nodir/p.baton --report " + d + "/r.json");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(StartsWith(r.out, "baton plan: -o " + d + "/nodir/p.baton: cannot write: ")) << r.out;
  EXPECT_EQ(Listing(d), "adir ");
  EXPECT_EQ(Listing(d + "/adir"), "");
  // A full disk: /dev/full fails every write.
  r = Baton(plan_args + "-o " + d + "/p.baton --report " + d + "/r.json --header /dev/full");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out, "baton plan: --header /dev/full: write error: No space left on device\n");
  EXPECT_EQ(Listing(d), "adir ");
  // A file size limit makes the plan's own write fail part way (bash's
  // ulimit -f counts KiB; SIGXFSZ ignored so that write returns EFBIG).
  r = Baton(plan_args + "-o " + d + "/p.baton --report " + d + "/r.json", "trap \"\" XFSZ; ulimit -f 1");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("write error: File too large"), std::string::npos) << r.out;
  EXPECT_EQ(Listing(d), "adir ");
  // /dev/null takes any number of outputs; everything else is written.
  r = Baton(plan_args + "-o " + d + "/p.baton --report /dev/null --dot /dev/null");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(Listing(d), "adir p.baton ");
}

TEST(CliErrors, SimOutputsAreAllOrNothing) {
  const std::string d = Dir("sim_outputs");
  const std::string plan = TinyPlan(d);
  ASSERT_EQ(std::system(("mkdir " + d + "/adir").c_str()), 0);
  const std::string sim = "sim " + plan + " --target " + TargetPath("cpu") + " --inferences 2 ";
  Outcome r = Baton(sim + "--trace " + d + "/t.json --gantt " + d + "/adir");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out, "baton sim: --gantt " + d + "/adir: is a directory\n");
  r = Baton(sim + "--trace " + d + "/t.json --gantt " + d + "/t.json");
  EXPECT_EQ(r.code, 1) << r.out;
  r = Baton(sim + "--trace " + d + "/t.json --gantt /dev/full");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(Listing(d), "adir tiny.baton ");
  r = Baton(sim + "--trace " + d + "/t.json --gantt " + d + "/g.svg");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(Listing(d), "adir g.svg t.json tiny.baton ");
}

TEST(CliErrors, RunOutputsAreAllOrNothing) {
  const std::string d = Dir("run_outputs");
  // y is 8 KiB per inference: over a 4 KiB file size limit.
  WriteText(d + "/g.json", R"({"inputs": [{"name": "x", "shape": [1, 2048]}], "outputs": ["y"],
    "nodes": [{"name": "r", "op": "Relu", "inputs": ["x"], "outputs": ["y"]}]})");
  ASSERT_EQ(Baton("plan " + d + "/g.json -q -o " + d + "/p.baton").code, 0);
  ASSERT_EQ(std::system((std::string(BATON_PYTHON) +
                         " -c \"import numpy as np; np.save('" + d +
                         "/x.npy', np.linspace(-1, 1, 2048, dtype=np.float32).reshape(1, 2048))\"").c_str()),
            0);
  const std::string run = "run " + d + "/p.baton --input x=" + d + "/x.npy --inferences 3 --output-dir ";
  Outcome r = Baton(run + d + "/out", "trap \"\" XFSZ; ulimit -f 4");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("write error: File too large"), std::string::npos) << r.out;
  EXPECT_EQ(Listing(d), "g.json p.baton x.npy ");
  // An existing directory keeps its files; a file in the way is an error.
  WriteText(d + "/afile", "x");
  r = Baton(run + d + "/afile");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out, "baton run: --output-dir " + d + "/afile: exists and is not a directory\n");
  r = Baton(run + d + "/out");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(Listing(d + "/out"), "0 1 2 ");
  EXPECT_EQ(Listing(d + "/out/2"), "y.npy ");
  const std::vector<float> y = AsFloats(LoadNpyBytes(d + "/out/2/y.npy"));
  ASSERT_EQ(y.size(), 2048u);
  EXPECT_EQ(y[0], 0.0f);      // relu(-1)
  EXPECT_EQ(y[2047], 1.0f);   // relu(1)
}

TEST(CliErrors, PackOutputIsAllOrNothing) {
  const std::string d = Dir("pack_outputs");
  WriteText(d + "/b.csv", "id,lower,upper,size\n0,0,2,64\n1,1,3,64\n");
  Outcome r = Baton("pack " + d + "/b.csv -o /dev/full");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out, "baton pack: -o /dev/full: write error: No space left on device\n");
  r = Baton("pack " + d + "/b.csv -o " + d);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out, "baton pack: -o " + d + ": is a directory\n");
  EXPECT_EQ(Listing(d), "b.csv ");
}

}  // namespace
}  // namespace baton::test
