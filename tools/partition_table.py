#!/usr/bin/python3
"""The partitioning table of docs/partitioning.md.

For every bundled multi-device target and six torchvision models (random
weights, 224x224), plans the model three ways and simulates each on the
target's cost model:
  - auto:   baton plan --auto (throughput objective, D <= 4);
  - single: the best single device that fits (from --auto's report, which
            plans and simulates every device alone at every depth);
  - rules:  a hand rule set per target (the README demo's style of rules),
            at --in-flight 3;
  - ref:    tools/partition_reference.py, an independent exhaustive search over
            contiguous pipelines (every cut set of up to 4 segments, every
            ordering of devices), its best candidates planned and simulated.
Prints a Markdown table: throughput, latency, D and arena bytes per row,
plus the planner's wall time for --auto.

usage: partition_table.py BATON OUT_DIR [--models a,b] [--targets x,y] [--reuse-ref]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = {
    "soc4": ["--assign", "Conv=npu0", "--assign", "Add=npu0",
             "--assign", "GlobalAveragePool=gpu0", "--assign", "Gemm=dsp0"],
    "twin_npu_f32": ["--assign", "Conv=npu0", "--assign", "Add=npu1", "--assign", "Gemm=npu1"],
    "imx8mp_f32": ["--assign", "Conv=vip8000", "--assign", "Add=gc7000ul",
               "--assign", "Gemm=hifi4", "--assign", "Softmax=hifi4"],
}
MODELS = ["mobilenet_v2", "resnet18", "squeezenet1_1", "mobilenet_v3_small",
          "googlenet", "efficientnet_b0"]


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def sim(baton, plan, target):
    return json.loads(run([baton, "sim", plan, "--target", target, "--inferences", "100",
                           "--json"]))


def inspect(baton, plan):
    return json.loads(run([baton, "inspect", plan, "--json"]))


def arena_bytes(doc):
    return sum(d["bytes"] for d in doc["domains"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("baton")
    ap.add_argument("out")
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--reuse-ref", action="store_true",
                    help="take the reference's result from OUT_DIR when an earlier run left it")
    a = ap.parse_args()
    baton, out = os.path.abspath(a.baton), a.out
    os.makedirs(out, exist_ok=True)
    rows = []
    for model in a.models.split(","):
        onnx = os.path.join(out, model, model + ".onnx")
        if not os.path.exists(onnx):
            subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools/export_torchvision.py"),
                            model, os.path.join(out, model)], check=True, capture_output=True)
        for tname in a.targets.split(","):
            rules = TARGETS[tname]
            target = os.path.join(ROOT, "ports/linux/targets", tname + ".json")
            base = os.path.join(out, f"{model}.{tname}")
            # The wall-clock cap is lifted so that the work budget alone
            # decides (the same plan on any machine, at any load); the
            # planner's CPU time (user + system) is what the table reports.
            start = time.monotonic()
            cpu0 = children_cpu()
            run([baton, "plan", onnx, "--target", target, "--auto", "--auto-time-limit", "1000",
                 "-o", base + ".auto.baton", "--report", base + ".auto.json", "-q"])
            seconds = time.monotonic() - start
            cpu_seconds = children_cpu() - cpu0
            report = json.load(open(base + ".auto.json"))["auto"]
            auto = sim(baton, base + ".auto.baton", target)
            auto_doc = inspect(baton, base + ".auto.baton")
            row = {"model": model, "target": tname, "plan_s": seconds, "plan_cpu_s": cpu_seconds,
                   "auto": (auto["throughput_per_s"], auto["latency_s"]["mean"],
                            auto_doc["inferences_in_flight"], arena_bytes(auto_doc)),
                   "single": (report["best_single_device"],
                              report["best_single_throughput_per_s"],
                              report["best_single_latency_s"], report["best_single_in_flight"])}
            try:
                run([baton, "plan", onnx, "--target", target, *rules, "--in-flight", "3",
                     "-o", base + ".rules.baton", "-q"])
                r = sim(baton, base + ".rules.baton", target)
                d = inspect(baton, base + ".rules.baton")
                row["rules"] = (r["throughput_per_s"], r["latency_s"]["mean"],
                                d["inferences_in_flight"], arena_bytes(d))
            except subprocess.CalledProcessError as e:
                row["rules"] = ("fails: " + e.stderr.strip().splitlines()[-1][:60],)
            # The reference's result is kept beside its plans: --reuse-ref
            # takes it from an earlier run (it does not depend on --auto).
            ref_json = base + ".ref.json"
            if a.reuse_ref and os.path.exists(ref_json):
                ref = json.load(open(ref_json))
            else:
                # It exits 1 with {"error": ...} when no contiguous
                # pipeline among its best candidates fits the memories.
                done = subprocess.run(["/usr/bin/python3",
                                       os.path.join(ROOT, "tools/partition_reference.py"),
                                       baton, onnx, target, base + ".ref"],
                                      capture_output=True, text=True)
                if done.returncode not in (0, 1) or not done.stdout.strip():
                    raise SystemExit(f"partition_reference.py failed on {model} {tname}:\n"
                                     + done.stderr)
                ref = json.loads(done.stdout)
                with open(ref_json, "w") as f:
                    json.dump(ref, f)
            row["ref"] = ((ref["throughput_per_s"], ref["latency_s"], ref["in_flight"],
                           ref["arena_bytes"]) if "error" not in ref else None)
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)

    def cols(v):
        if v is None:
            return "- | - | - | -"
        if len(v) == 1:
            return f"{v[0]} | - | - | -"
        return f"{v[0]:.1f} | {v[1] * 1e3:.2f} | {v[2]} | {v[3] / 1e6:.2f}"

    print("Throughput in inferences/s and latency in ms (simulated, 100 inferences), D, "
          "arena MB (all domains).\n")
    print("| model | target | auto inf/s | ms | D | MB | best single | inf/s | ms | D | "
          "rules inf/s | ms | D | MB | ref inf/s | ms | D | MB | auto / single | "
          "auto / ref | --auto CPU s |")
    print("|" + "---|" * 21)
    for r in rows:
        a, s = r["auto"], r["single"]
        ref = r["ref"]
        ratio = f"{a[0] / ref[0]:.3f}" if ref else "-"
        print(f"| {r['model']} | {r['target']} | {cols(a)} | {s[0]} | {s[1]:.1f} | "
              f"{s[2] * 1e3:.2f} | {s[3]} | {cols(r['rules'])} | {cols(ref)} | "
              f"{a[0] / s[1]:.2f}x | {ratio} | {r['plan_cpu_s']:.1f} |")


if __name__ == "__main__":
    main()
