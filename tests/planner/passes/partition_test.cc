// `--auto` against an exhaustive search on small random DAGs.
//
// The reference lives in this file and shares nothing with the partitioner:
// it enumerates every assignment of every node to every device that runs its
// op (3^12 at most), computes each queue's load per inference by the cost
// model's formula from the graph it generated (DESIGN §7: launch + max(macs /
// macs_per_s, bytes / bytes_per_s); a copy is latency + bytes / bandwidth on
// its link's DMA queue), and takes 1 / the largest load: the throughput bound
// of that assignment, an upper bound for any stage cut and depth. Walking the
// assignments from the best bound down, the first one the real planner can
// place within the memories (pinned with @node rules, depth 4..1) is the
// optimum. `--auto`'s simulated throughput must reach 98% of it. Every auto
// plan also passes the independent plan validator.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <numeric>
#include <random>

#include "baton/planner/analysis/inspect.h"
#include "baton/planner/analysis/sim.h"
#include "baton/planner/analysis/validate_plan.h"
#include "baton/planner/emit/emit.h"
#include "baton/planner/planner.h"

namespace baton::planner {
namespace {

struct Dev {
  const char* name;
  const char* kind;
  const char* domain;
  std::vector<std::string> ops;  // empty: all
  double macs_per_s, bytes_per_s, launch_s;
};

// cpu in dram runs everything; npu (sram, DMA both ways) runs Add and Tanh
// fast; dsp (tcm, DMA both ways) runs Mul, Sigmoid and Tanh. (No Relu: the
// simplifier would fuse it into an Add, and the reference would plan a node
// that no longer exists.)
const std::vector<Dev> kDevs = {
    {"cpu", "cpu", "dram", {}, 2e8, 1e9, 2e-6},
    {"npu", "npu", "sram", {"Add", "Tanh"}, 2e9, 8e9, 2e-5},
    {"dsp", "dsp", "tcm", {"Mul", "Sigmoid", "Tanh"}, 6e8, 3e9, 1e-5},
};
constexpr double kLinkBw = 2e9, kLinkLatency = 5e-6;

std::string TargetJson(uint64_t sram_bytes, uint64_t tcm_bytes) {
  std::string devs;
  for (const Dev& d : kDevs) {
    std::string ops = "\"*\"";
    if (!d.ops.empty()) {
      ops = "[";
      for (size_t i = 0; i < d.ops.size(); ++i) ops += (i ? ",\"" : "\"") + d.ops[i] + "\"";
      ops += "]";
    }
    devs += std::string(devs.empty() ? "" : ",") + "{\"name\":\"" + d.name + "\",\"kind\":\"" +
            d.kind + "\",\"domains\":[\"" + d.domain + "\"],\"ops\":" + ops +
            ",\"cost\":{\"macs_per_s\":" + std::to_string(d.macs_per_s) +
            ",\"bytes_per_s\":" + std::to_string(d.bytes_per_s) +
            ",\"launch_s\":" + std::to_string(d.launch_s) + "}}";
  }
  auto link = [](const char* a, const char* b) {
    return std::string("{\"from\":\"") + a + "\",\"to\":\"" + b + "\",\"bytes_per_s\":" +
           std::to_string(kLinkBw) + ",\"latency_s\":" + std::to_string(kLinkLatency) +
           ",\"queue\":\"dma\"}";
  };
  return "{\"name\":\"rand3\",\"fallback\":\"cpu\",\"domains\":[{\"name\":\"dram\",\"bytes\":"
         "268435456,\"alignment\":64},{\"name\":\"sram\",\"bytes\":" +
         std::to_string(sram_bytes) + ",\"alignment\":64},{\"name\":\"tcm\",\"bytes\":" +
         std::to_string(tcm_bytes) + ",\"alignment\":64}],\"devices\":[" + devs +
         "],\"links\":[" + link("dram", "sram") + "," + link("sram", "dram") + "," +
         link("dram", "tcm") + "," + link("tcm", "dram") + "]}";
}

// A random DAG of elementwise ops over tensors of one of a few sizes.
struct RandomDag {
  Graph graph;
  std::vector<std::vector<int>> inputs;  // per node: producer nodes (-1: graph input)
  std::vector<int64_t> elements;         // per node output
  int64_t input_elements = 0;
};

RandomDag MakeDag(uint32_t seed, int nodes) {
  std::mt19937 rng(seed);
  RandomDag d;
  const int64_t elements = int64_t{1} << (12 + rng() % 4);  // 4096..32768 floats
  d.input_elements = elements;
  Graph& g = d.graph;
  g.name = "rand" + std::to_string(seed);
  Tensor x;
  x.name = "x";
  x.shape = {1, elements};
  x.shape_known = true;
  g.inputs.push_back(g.AddTensor(x));
  std::vector<int> values = {0};  // tensor indices available as inputs
  std::vector<int> used(1, 0);
  const char* unary[] = {"Tanh", "Sigmoid"};
  const char* binary[] = {"Add", "Mul"};
  for (int n = 0; n < nodes; ++n) {
    Node node;
    node.name = "n" + std::to_string(n);
    // Mostly a chain, with skip connections to earlier values.
    const int last = values.back();
    const bool two = values.size() > 1 && rng() % 3 == 0;
    node.inputs.push_back(last);
    if (two) {
      int other = values[rng() % (values.size() - 1)];
      node.inputs.push_back(other);
      node.op = binary[rng() % 2];
    } else {
      node.op = unary[rng() % 2];
    }
    Tensor out;
    out.name = "t" + std::to_string(n);
    out.shape = {1, elements};
    out.shape_known = true;
    const int t = g.AddTensor(out);
    node.outputs = {t};
    g.nodes.push_back(node);
    values.push_back(t);
  }
  g.outputs.push_back(values.back());
  d.elements.assign(nodes, elements);
  return d;
}

bool Runs(const Dev& d, const std::string& op) {
  return d.ops.empty() || std::find(d.ops.begin(), d.ops.end(), op) != d.ops.end();
}

// The reference bound of one assignment, from the DESIGN §7 formulas.
double Bound(const Graph& g, const std::vector<int>& dev) {
  const size_t nd = kDevs.size();
  std::vector<double> load(nd + 1, 0.0);  // devices, then the DMA queue
  std::vector<int> producer(g.tensors.size(), -1);
  for (size_t n = 0; n < g.nodes.size(); ++n) producer[g.nodes[n].outputs[0]] = static_cast<int>(n);
  auto domain_of_tensor = [&](int t) { return producer[t] < 0 ? 0 : dev[producer[t]]; };
  auto copy = [&](double bytes) { return kLinkLatency + bytes / kLinkBw; };
  // (tensor, domain) pairs already holding a copy; device index == domain index.
  std::vector<std::vector<bool>> there(g.tensors.size(), std::vector<bool>(nd, false));
  auto fetch = [&](int t, int domain) {
    const int home = domain_of_tensor(t);
    if (home == domain || there[t][domain]) return;
    const double bytes = static_cast<double>(g.tensors[t].bytes());
    if (home != 0 && domain != 0 && !there[t][0]) {  // via dram
      load[nd] += copy(bytes);
      there[t][0] = true;
    }
    load[nd] += copy(bytes);
    there[t][domain] = true;
  };
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    double bytes = static_cast<double>(g.tensors[node.outputs[0]].bytes());
    for (int t : node.inputs) {
      bytes += static_cast<double>(g.tensors[t].bytes());
      fetch(t, dev[n]);
    }
    const Dev& d = kDevs[dev[n]];
    const double macs = static_cast<double>(g.tensors[node.outputs[0]].elements());
    load[dev[n]] += d.launch_s + std::max(macs / d.macs_per_s, bytes / d.bytes_per_s);
  }
  for (int t : g.outputs) fetch(t, 0);
  return 1.0 / *std::max_element(load.begin(), load.end());
}

Result<Program> PlanPinned(const Graph& g, const Target& t, const std::vector<int>& dev, int d,
                           const std::vector<std::string>& split) {
  PlanOptions o;
  o.in_flight = d;
  o.split = split;
  o.pack_time_limit_s = 0;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    o.rules.push_back({"@" + g.nodes[n].name, kDevs[dev[n]].name});
  }
  return PlanGraph(g, t, o);
}

double Simulated(const Program& p, const Target& t) {
  auto bytes = EmitPlan(p);
  if (!bytes.ok()) return 0;
  auto loaded = LoadedPlan::FromBytes(bytes->data(), bytes->size(), "plan");
  if (!loaded.ok()) return 0;
  auto sim = Simulate(loaded->view(), t, 64);
  return sim.ok() ? sim->throughput_per_s : 0;
}

// Calls fn with every set of at most three nodes (in node order, which is
// topological here) at which a new stage begins.
void ForEachSplit(const Graph& g, const std::function<void(const std::vector<std::string>&)>& fn) {
  const int n = static_cast<int>(g.nodes.size());
  fn({});
  for (int a = 1; a < n; ++a) {
    fn({g.nodes[a].name});
    for (int b = a + 1; b < n; ++b) {
      fn({g.nodes[a].name, g.nodes[b].name});
      for (int c = b + 1; c < n; ++c) fn({g.nodes[a].name, g.nodes[b].name, g.nodes[c].name});
    }
  }
}

// Assignments (best bounds first) whose stage cuts the reference explores.
constexpr size_t kAssignments = 4;

struct Case {
  uint32_t seed;
  int nodes;
  uint64_t sram, tcm;
};

class AutoVsExhaustive : public ::testing::TestWithParam<Case> {};

TEST_P(AutoVsExhaustive, WithinTwoPercentOfOptimum) {
  const Case c = GetParam();
  RandomDag dag = MakeDag(c.seed, c.nodes);
  const Graph& g = dag.graph;
  auto target = ParseTarget(TargetJson(c.sram, c.tcm), "rand3.json");
  ASSERT_TRUE(target.ok()) << target.error();

  // Exhaustive: every assignment to devices that run each op.
  std::vector<std::pair<double, std::vector<int>>> all;
  std::vector<int> dev(g.nodes.size(), 0);
  std::function<void(size_t)> enumerate = [&](size_t n) {
    if (n == g.nodes.size()) {
      all.push_back({Bound(g, dev), dev});
      return;
    }
    for (size_t d = 0; d < kDevs.size(); ++d) {
      if (!Runs(kDevs[d], g.nodes[n].op)) continue;
      dev[n] = static_cast<int>(d);
      enumerate(n + 1);
    }
  };
  enumerate(0);
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  // The best assignments by bound, each with every stage cut of at most
  // three cuts in topological order (--split) at the smallest depth that
  // holds its stages and at depth 4, planned and simulated for real.
  double optimum = 0;
  std::string optimum_how;
  size_t tried = 0;
  for (size_t k = 0; k < all.size() && tried < kAssignments; ++k) {
    if (!PlanPinned(g, target.value(), all[k].second, 1, {}).ok()) continue;  // memory
    ++tried;
    ForEachSplit(g, [&](const std::vector<std::string>& split) {
      for (int depth : {static_cast<int>(split.size()) + 1, 4}) {
        auto r = PlanPinned(g, target.value(), all[k].second, depth, split);
        if (!r.ok()) continue;
        const double t = Simulated(r.value(), target.value());
        if (t > optimum) {
          optimum = t;
          std::string a;
          for (int x : all[k].second) a += std::to_string(x);
          for (const std::string& cut : split) a += " cut@" + cut;
          optimum_how = a + " bound " + std::to_string(all[k].first) + " assignment #" + std::to_string(k) + ", " +
                        std::to_string(split.size()) + " cuts, D=" + std::to_string(depth);
        }
      }
    });
  }
  ASSERT_GT(optimum, 0);

  PlanOptions o;
  o.auto_partition = true;
  o.pack_time_limit_s = 0;
  o.auto_time_limit_s = 1e7;  // the work budget decides, whatever the machine's load
  // The default (exhaustive on the model for graphs this small) must reach
  // 98% of the optimum, and so must the heuristic alone (chains, contiguous
  // segments and local moves: what larger graphs get; before the segment
  // seeds it reached 89% and 92% on seeds 9 and 7, docs/partitioning.md).
  o.auto_exact_limit = 0;
  {
    auto heuristic = PlanGraph(g, target.value(), o);
    ASSERT_TRUE(heuristic.ok()) << heuristic.error();
    const double t = Simulated(heuristic.value(), target.value());
    std::printf("seed %u: heuristic alone %.1f%% of the optimum\n", c.seed, 100.0 * t / optimum);
    EXPECT_GE(t, 0.98 * optimum) << "seed " << c.seed << ": heuristic " << t
                                 << "/s, exhaustive optimum " << optimum << "/s (" << optimum_how
                                 << ")";
  }
  o.auto_exact_limit = PlanOptions().auto_exact_limit;
  auto planned = PlanGraph(g, target.value(), o);
  ASSERT_TRUE(planned.ok()) << planned.error();
  auto bytes = EmitPlan(planned.value());
  ASSERT_TRUE(bytes.ok()) << bytes.error();
  Check valid = ValidatePlanSchedule(bytes->data(), bytes->size());
  EXPECT_TRUE(valid.ok()) << valid.error();
  auto loaded = LoadedPlan::FromBytes(bytes->data(), bytes->size(), "auto plan");
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  auto sim = Simulate(loaded->view(), target.value(), 64);
  ASSERT_TRUE(sim.ok()) << sim.error();
  // The margin, for the log (docs/partitioning.md quotes it).
  std::printf("seed %u: auto %.1f/s (D=%d) = %.1f%% of the exhaustive optimum %.1f/s (%s)\n",
              c.seed, sim->throughput_per_s, planned->in_flight,
              100.0 * sim->throughput_per_s / optimum, optimum, optimum_how.c_str());
  EXPECT_GE(sim->throughput_per_s, 0.98 * optimum)
      << "seed " << c.seed << ": auto " << sim->throughput_per_s << "/s (D="
      << planned->in_flight << "), exhaustive optimum " << optimum << "/s (" << optimum_how << ")";
  // Never below the best single device either.
  EXPECT_GE(sim->throughput_per_s, planned->auto_report.best_single_throughput_per_s * 0.999);
}

// --auto plans its candidates on two threads and takes their results in the
// one-thread order: the plan bytes must not depend on the thread count (nor
// on the threads' timing: each plan is made three times).
TEST(AutoThreads, PlanBytesDoNotDependOnTheThreadCount) {
  for (uint32_t seed : {3u, 7u, 9u}) {
    RandomDag dag = MakeDag(seed, 10);
    auto target = ParseTarget(TargetJson(96ull << 10, 64ull << 20), "rand3.json");
    ASSERT_TRUE(target.ok()) << target.error();
    for (int64_t exact_limit : {int64_t{0}, PlanOptions().auto_exact_limit}) {
      std::vector<std::string> plans;
      for (int threads : {1, 2, 2, 1, 2}) {
        PlanOptions o;
        o.auto_partition = true;
        o.pack_time_limit_s = 0;
        o.auto_time_limit_s = 1e7;
        o.auto_exact_limit = exact_limit;
        o.auto_threads = threads;
        auto planned = PlanGraph(dag.graph, target.value(), o);
        ASSERT_TRUE(planned.ok()) << planned.error();
        auto bytes = EmitPlan(planned.value());
        ASSERT_TRUE(bytes.ok()) << bytes.error();
        plans.push_back(bytes.value());
      }
      for (size_t k = 1; k < plans.size(); ++k) {
        EXPECT_EQ(plans[k], plans[0]) << "seed " << seed << ", exact limit " << exact_limit
                                      << ", run " << k;
      }
    }
  }
}

// The arena estimate big graphs' candidates get (forced here on small
// ones): the written plan is still packed exactly, passes the validator, fits
// every capacity and is never below the best single device; on roomy
// memories it matches the packed search's throughput within 2%.
TEST(AutoEstimatedMemory, WrittenPlanIsPackedValidAndFits) {
  for (uint32_t seed : {1u, 3u, 9u}) {
    RandomDag dag = MakeDag(seed, 10);
    const uint64_t sram = seed == 9 ? 96ull << 10 : 64ull << 20;
    const uint64_t tcm = seed == 9 ? 160ull << 10 : 64ull << 20;
    auto target = ParseTarget(TargetJson(sram, tcm), "rand3.json");
    ASSERT_TRUE(target.ok()) << target.error();
    PlanOptions o;
    o.auto_partition = true;
    o.pack_time_limit_s = 0;
    o.auto_time_limit_s = 1e7;
    auto packed = PlanGraph(dag.graph, target.value(), o);
    ASSERT_TRUE(packed.ok()) << packed.error();
    o.auto_estimate_memory_nodes = 0;
    auto estimated = PlanGraph(dag.graph, target.value(), o);
    ASSERT_TRUE(estimated.ok()) << estimated.error();
    auto bytes = EmitPlan(estimated.value());
    ASSERT_TRUE(bytes.ok()) << bytes.error();
    Check valid = ValidatePlanSchedule(bytes->data(), bytes->size());
    EXPECT_TRUE(valid.ok()) << "seed " << seed << ": " << valid.error();
    for (size_t d = 0; d < target->domains.size(); ++d) {
      EXPECT_LE(estimated->domain_report[d].arena_bytes, target->domains[d].bytes)
          << "seed " << seed << ", domain " << target->domains[d].name;
    }
    const double t = Simulated(estimated.value(), target.value());
    const double t_packed = Simulated(packed.value(), target.value());
    EXPECT_GE(t, estimated->auto_report.best_single_throughput_per_s * 0.999) << "seed " << seed;
    if (seed != 9) {
      EXPECT_GE(t, 0.98 * t_packed) << "seed " << seed;
    }
    std::printf("seed %u: estimated memory %.1f/s, packed %.1f/s\n", seed, t, t_packed);
  }
}

// --assign rules become pins --auto keeps: every node pinned to a device
// other than the fallback (the first accelerator that runs its op) is there
// in the written plan, whatever the search would have chosen.
TEST(AutoPins, PinnedNodesKeepTheirDevice) {
  for (uint32_t seed : {2u, 5u, 8u}) {
    RandomDag dag = MakeDag(seed, 10);
    auto target = ParseTarget(TargetJson(64ull << 20, 64ull << 20), "rand3.json");
    ASSERT_TRUE(target.ok()) << target.error();
    PlanOptions o;
    o.auto_partition = true;
    o.auto_time_limit_s = 1e7;
    std::map<std::string, std::string> pins;
    for (size_t n = 0; n < dag.graph.nodes.size(); n += 3) {
      const Node& node = dag.graph.nodes[n];
      for (size_t d = 1; d < kDevs.size(); ++d) {
        const auto& ops = kDevs[d].ops;
        if (std::find(ops.begin(), ops.end(), node.op) == ops.end()) continue;
        pins[node.name] = kDevs[d].name;
        o.rules.push_back({"@" + node.name, kDevs[d].name});
        break;
      }
    }
    ASSERT_GE(pins.size(), 2u) << "seed " << seed;
    auto planned = PlanGraph(dag.graph, target.value(), o);
    ASSERT_TRUE(planned.ok()) << planned.error();
    const Program& p = planned.value();
    int checked = 0;
    for (size_t n = 0; n < p.graph.nodes.size(); ++n) {
      auto it = pins.find(p.graph.nodes[n].name);
      if (it == pins.end()) continue;
      // A pinned Mul fused into Swish (x * Sigmoid(x)) is an op its device
      // does not list: it falls back, as any rule's node would.
      if (p.graph.nodes[n].op == "Swish") continue;
      ++checked;
      EXPECT_EQ(p.target.devices[p.node_device[n]].name, it->second)
          << "seed " << seed << ", node " << it->first;
      EXPECT_TRUE(p.node_pinned[n]) << it->first;
    }
    EXPECT_GE(checked, 2) << "seed " << seed;
  }
}

std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    const int nodes = 6 + static_cast<int>(seed % 5);  // 6..10
    // Roomy memories, or an sram/tcm that holds only a few tensors.
    const uint64_t roomy = 64ull << 20;
    const uint64_t small = (seed % 3 == 0) ? 96ull << 10 : roomy;
    const uint64_t tiny = (seed % 4 == 1) ? 160ull << 10 : roomy;
    cases.push_back({seed, nodes, small, tiny});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Random, AutoVsExhaustive, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           return "seed" + std::to_string(param_info.param.seed) + "_n" +
                                  std::to_string(param_info.param.nodes);
                         });

}  // namespace
}  // namespace baton::planner
