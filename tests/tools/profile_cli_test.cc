// `baton profile`, `baton plan --profile` and the plan's summary as users see
// them: measured times feed the cost model where they match, the report says
// which node took its cost from where, and `baton inspect` explains the plan.

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/test_util.h"
#include "tool_test_util.h"

namespace baton::test {
namespace {

using json = nlohmann::json;

using Ran = CliResult;

Ran Baton(const std::string& args) { return RunBaton(args); }

std::string Tmp(const std::string& name) { return std::string(BATON_BINARY_DIR) + "/prof_" + name; }
bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}
json ReadJson(const std::string& path) { return json::parse(planner::ReadFile(path).value()); }
void WriteJson(const std::string& path, const json& j) {
  ASSERT_TRUE(planner::WriteFileAtomic(path, j.dump(2)).ok());
}
std::string Input() { return " --input x=" + GraphDir() + "/tiny_cnn.x.npy"; }

// The report's summary entry of node `name`.
json NodeCost(const json& report, const std::string& name) {
  for (const json& n : report["summary"]["nodes"]) {
    if (n["node"] == name) return n;
  }
  ADD_FAILURE() << "no node " << name;
  return json();
}

// Profiles tiny_cnn planned on one CPU, then feeds hand-made times back:
// one queue at D = 1 runs the nodes back to back, so the predicted latency
// is the plain sum of the node times.
TEST(Profile, RoundTripAndHandComputedLatency) {
  const std::string plan = Tmp("cpu.baton"), profile = Tmp("cpu.json");
  ASSERT_EQ(Baton("plan " + GraphPath("tiny_cnn") + " -o " + plan).code, 0);
  Ran r = Baton("profile " + plan + Input() + " -o " + profile + " --runs 3");
  ASSERT_EQ(r.code, 0) << r.out;
  json p = ReadJson(profile);
  EXPECT_EQ(p["baton_profile"], 1);
  json plan_json = json::parse(Baton("inspect " + plan + " --json").out);
  const size_t nodes = plan_json["nodes"].size();
  ASSERT_EQ(p["entries"].size(), nodes);  // no copies on one CPU
  for (size_t k = 0; k < nodes; ++k) {
    const json& e = p["entries"][k];
    EXPECT_EQ(e["node"], plan_json["nodes"][k]["name"]);
    EXPECT_EQ(e["device"], "cpu0");
    EXPECT_EQ(e["kind"], "cpu");
    EXPECT_EQ(e["runs"], 3);
    EXPECT_GT(e["median_s"].get<double>(), 0);
    EXPECT_LE(e["min_s"].get<double>(), e["median_s"].get<double>());
    EXPECT_EQ(e["inputs"].size(), plan_json["nodes"][k]["inputs"].size());
  }

  // Every node 1 ms, pw 0.5 s, plus one entry of a shape no node has.
  json hand = p;
  for (json& e : hand["entries"]) e["median_s"] = e["node"] == "pw" ? 0.5 : 0.001;
  json stray = hand["entries"][0];
  stray["outputs"][0]["shape"][0] = 7;
  hand["entries"].push_back(stray);
  WriteJson(Tmp("hand.json"), hand);
  const std::string report = Tmp("hand_report.json");
  r = Baton("plan " + GraphPath("tiny_cnn") + " -o " + Tmp("hand.baton") + " --profile " +
            Tmp("hand.json") + " --report " + report);
  ASSERT_EQ(r.code, 0) << r.out;
  json rep = ReadJson(report);
  const double expected = 0.001 * static_cast<double>(nodes - 1) + 0.5;
  EXPECT_NEAR(rep["summary"]["latency_s"].get<double>(), expected, 1e-12);
  EXPECT_NEAR(rep["summary"]["throughput_per_s"].get<double>(), 1 / expected, 1e-9);
  EXPECT_EQ(rep["summary"]["cost_sources"]["profile"], nodes);
  EXPECT_EQ(rep["summary"]["cost_sources"]["target"], 0);
  EXPECT_EQ(NodeCost(rep, "pw")["source"], "profile");
  EXPECT_EQ(NodeCost(rep, "pw")["seconds"], 0.5);
  EXPECT_EQ(rep["summary"]["profile"]["entries"], nodes + 1);
  EXPECT_EQ(rep["summary"]["profile"]["unused_entries"], 1);
  // The kernels' ISA: named by `baton profile`, repeated by the report.
  ASSERT_TRUE(p["kernels"].is_string()) << p.dump();
  EXPECT_FALSE(p["kernels"].get<std::string>().empty());
  EXPECT_EQ(rep["summary"]["profile"]["kernels"], p["kernels"]);

  // Without pw's entry, pw takes the target's formula and the latency moves
  // by exactly the difference.
  json partial = hand;
  json kept = json::array();
  for (const json& e : partial["entries"]) {
    if (e["node"] != "pw") kept.push_back(e);
  }
  partial["entries"] = kept;
  WriteJson(Tmp("partial.json"), partial);
  r = Baton("plan " + GraphPath("tiny_cnn") + " -o " + Tmp("partial.baton") + " --profile " +
            Tmp("partial.json") + " --report " + report);
  ASSERT_EQ(r.code, 0) << r.out;
  rep = ReadJson(report);
  EXPECT_EQ(NodeCost(rep, "pw")["source"], "target");
  EXPECT_EQ(rep["summary"]["cost_sources"]["target"], 1);
  const double pw_target = NodeCost(rep, "pw")["seconds"].get<double>();
  EXPECT_NEAR(rep["summary"]["latency_s"].get<double>(),
              0.001 * static_cast<double>(nodes - 1) + pw_target, 1e-12);

  // Same profile, same plan bytes.
  ASSERT_EQ(Baton("plan " + GraphPath("tiny_cnn") + " -o " + Tmp("hand2.baton") + " --profile " +
                  Tmp("hand.json")).code, 0);
  EXPECT_EQ(planner::ReadFile(Tmp("hand.baton")).value(),
            planner::ReadFile(Tmp("hand2.baton")).value());
}

std::string QueueOf(const json& inspect, const std::string& node) {
  for (const json& n : inspect["nodes"]) {
    if (n["name"] == node) return n["queue"];
  }
  return "";
}

// A measurement that makes pw very slow on the device --auto chose for it
// moves pw elsewhere; the entry then matches no node and is reported unused.
TEST(Profile, HugeMeasuredTimeMovesTheNodeUnderAuto) {
  const std::string plan = Tmp("auto.baton"), soc4 = " --target " + TargetPath("soc4");
  Ran r = Baton("plan " + GraphPath("tiny_cnn") + soc4 + " --auto -o " + plan);
  ASSERT_EQ(r.code, 0) << r.out;
  json before = json::parse(Baton("inspect " + plan + " --json").out);
  const std::string queue = QueueOf(before, "pw");
  ASSERT_FALSE(queue.empty());
  r = Baton("profile " + plan + Input() + " -o " + Tmp("auto_profile.json") + " --runs 2");
  ASSERT_EQ(r.code, 0) << r.out;
  json p = ReadJson(Tmp("auto_profile.json"));
  json slow = p;
  slow["entries"] = json::array();
  for (const json& e : p["entries"]) {
    if (e["node"] != "pw") continue;
    EXPECT_EQ(e["device"], queue);
    json huge = e;
    huge["median_s"] = 100.0;
    slow["entries"].push_back(huge);
  }
  ASSERT_EQ(slow["entries"].size(), 1u);
  WriteJson(Tmp("slow.json"), slow);
  const std::string report = Tmp("slow_report.json");
  r = Baton("plan " + GraphPath("tiny_cnn") + soc4 + " --auto -o " + Tmp("slow.baton") +
            " --profile " + Tmp("slow.json") + " --report " + report);
  ASSERT_EQ(r.code, 0) << r.out;
  json after = json::parse(Baton("inspect " + Tmp("slow.baton") + " --json").out);
  EXPECT_NE(QueueOf(after, "pw"), queue);
  json rep = ReadJson(report);
  EXPECT_EQ(rep["summary"]["profile"]["unused_entries"], 1);
  EXPECT_EQ(rep["summary"]["cost_sources"]["profile"], 0);
  EXPECT_EQ(rep["auto"]["cost_source"], "profile");
  // The plan never gets slower than 1/100 s per inference would allow.
  EXPECT_GT(rep["summary"]["throughput_per_s"].get<double>(), 1.0);
}

TEST(Profile, BadProfilesFailClearlyAndWriteNothing) {
  const std::string plan = Tmp("bad.baton");
  std::remove(plan.c_str());
  auto plan_with = [&](const std::string& text) {
    EXPECT_TRUE(planner::WriteFileAtomic(Tmp("bad.json"), text).ok());
    return Baton("plan " + GraphPath("tiny_cnn") + " -o " + plan + " --profile " + Tmp("bad.json"));
  };
  Ran r = plan_with(R"({"baton_profile": 2, "entries": []})");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("baton plan: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("profile format version 2 is not supported"), std::string::npos) << r.out;
  r = plan_with("{\"baton_profile\": 1, ");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("invalid JSON"), std::string::npos) << r.out;
  r = plan_with(R"({"baton_profile": 1, "entries": [{"op": "Conv", "device": "npu0"}]})");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("entries[0]: 'kind'"), std::string::npos) << r.out;
  EXPECT_FALSE(Exists(plan));
  r = Baton("plan " + GraphPath("tiny_cnn") + " -o " + plan + " --profile " + Tmp("missing.json"));
  EXPECT_NE(r.code, 0);
  EXPECT_FALSE(Exists(plan));
  // baton profile itself: a wrong input is named, nothing is written.
  ASSERT_EQ(Baton("plan " + GraphPath("tiny_cnn") + " -o " + Tmp("ok.baton")).code, 0);
  std::remove(Tmp("none.json").c_str());
  r = Baton("profile " + Tmp("ok.baton") + " --input q=" + GraphDir() + "/tiny_cnn.x.npy -o " +
            Tmp("none.json"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("baton profile: --input q: the plan has no input of that name (its inputs: 'x')"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(Exists(Tmp("none.json")));
  // The same input twice, as `baton run` refuses it.
  r = Baton("profile " + Tmp("ok.baton") + Input() + Input() + " -o " + Tmp("none.json"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("baton profile: --input x is given twice"), std::string::npos) << r.out;
  EXPECT_FALSE(Exists(Tmp("none.json")));
  // -o naming an existing directory is refused before anything runs.
  r = Baton("profile " + Tmp("ok.baton") + Input() + " -o " + std::string(BATON_BINARY_DIR));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("baton profile: -o"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("profiled"), std::string::npos) << r.out;
}

// inspect (text and --json) explains a rule plan: prediction, loads,
// bottleneck, pinned nodes, fallbacks with their cause.
TEST(Explain, InspectShowsTheSummaryOfARulePlan) {
  const std::string plan = Tmp("rules.baton"), report = Tmp("rules_report.json");
  Ran r = Baton("plan " + GraphPath("tiny_cnn") + " --target " + TargetPath("soc4") +
                " --assign Conv=npu0 --assign Softmax=npu0 -o " + plan + " --report " + report);
  ASSERT_EQ(r.code, 0) << r.out;
  json j = json::parse(Baton("inspect " + plan + " --json").out);
  const json& s = j["summary"];
  ASSERT_TRUE(s.is_object()) << j.dump();
  EXPECT_EQ(s["method"], "rules");
  EXPECT_TRUE(s["objective"].is_null());
  EXPECT_TRUE(s["best_single"].is_null());
  EXPECT_EQ(s["inferences_in_flight"], 1);
  json rep = ReadJson(report);
  EXPECT_EQ(s["throughput_per_s"], rep["summary"]["throughput_per_s"]);
  EXPECT_EQ(s["latency_s"], rep["summary"]["latency_s"]);
  EXPECT_EQ(s["bottleneck_queue"], rep["summary"]["bottleneck_queue"]);
  // D = 1: one inference at a time, so throughput = 1 / latency, and the
  // bottleneck is the queue with the largest load.
  EXPECT_NEAR(s["throughput_per_s"].get<double>() * s["latency_s"].get<double>(), 1.0, 1e-9);
  double largest = -1;
  std::string busiest;
  ASSERT_EQ(s["queues"].size(), j["queues"].size());
  for (const json& q : s["queues"]) {
    EXPECT_GE(q["utilization"].get<double>(), 0);
    EXPECT_LE(q["utilization"].get<double>(), 1);
    if (q["busy_s_per_inference"].get<double>() > largest) {
      largest = q["busy_s_per_inference"];
      busiest = q["queue"];
    }
  }
  EXPECT_EQ(s["bottleneck_queue"], busiest);
  // Pinned: the three convolutions and softmax; softmax fell back (op).
  std::vector<std::string> pinned;
  for (const json& id : s["pinned"]) pinned.push_back(j["nodes"][id.get<size_t>()]["name"]);
  EXPECT_EQ(pinned.size(), 4u);
  for (const char* name : {"conv1", "dw", "pw", "softmax"}) {
    EXPECT_NE(std::find(pinned.begin(), pinned.end(), name), pinned.end()) << name;
  }
  ASSERT_EQ(s["fallbacks"].size(), 1u);
  EXPECT_EQ(s["fallbacks"][0]["name"], "softmax");
  EXPECT_EQ(s["fallbacks"][0]["requested"], "npu0");
  EXPECT_EQ(s["fallbacks"][0]["placed"], "cpu0");
  EXPECT_EQ(s["fallbacks"][0]["cause"], "op");
  EXPECT_EQ(s["node_cost"].size(), j["nodes"].size());
  EXPECT_EQ(s["cost_sources"]["profile"], 0);

  r = Baton("inspect " + plan);
  for (const char* text : {"Prediction", "placement: rules", "1 inference in flight (D)",
                           "(bottleneck)", "pinned nodes (rules, annotations): 4",
                           "fallback nodes: 1", "softmax: requested npu0, placed on cpu0 (op: "}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
  }
}

TEST(Explain, InspectShowsTheBestSingleDeviceOfAnAutoPlan) {
  const std::string plan = Tmp("auto2.baton"), report = Tmp("auto2_report.json");
  Ran r = Baton("plan " + GraphPath("residual") + " --target " + TargetPath("soc4") +
                " --auto -o " + plan + " --report " + report);
  ASSERT_EQ(r.code, 0) << r.out;
  json j = json::parse(Baton("inspect " + plan + " --json").out);
  const json& s = j["summary"];
  json rep = ReadJson(report);
  EXPECT_EQ(s["method"], "auto");
  EXPECT_EQ(s["objective"], "throughput");
  ASSERT_TRUE(s["best_single"].is_object());
  EXPECT_EQ(s["best_single"]["device"], rep["auto"]["best_single_device"]);
  EXPECT_EQ(s["best_single"]["throughput_per_s"], rep["auto"]["best_single_throughput_per_s"]);
  EXPECT_NEAR(s["best_single"]["speedup"].get<double>(),
              s["throughput_per_s"].get<double>() /
                  s["best_single"]["throughput_per_s"].get<double>(), 1e-12);
  EXPECT_EQ(s["inferences_in_flight"], j["inferences_in_flight"]);
  r = Baton("inspect " + plan);
  for (const char* text : {"placement: auto (objective throughput)", "best single device: ",
                           "speed-up ", "utilization"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << "\n" << r.out;
  }
}

}  // namespace
}  // namespace baton::test
