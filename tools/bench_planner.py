#!/usr/bin/python3
"""The planner's run time: `baton plan --auto` from import to written plan.

Generates the big graphs (tools/make_big_graph.py: about 500 and 5,000 nodes
after import) unless they exist, exports mobilenet_v2 (tools/export_torchvision.py),
then plans each model with --auto on every bundled multi-device target and
prints a Markdown table: wall seconds, CPU seconds (user + system of the
planner process), the plan's predicted throughput and D, and
whether --auto-time-limit cut the search short. Each cell is the median of
--repeat runs (default 1). Run it on an otherwise idle machine: the wall
time counts whatever else shares the cores.

usage: bench_planner.py BATON OUT_DIR [--models big500,big5000,mobilenet_v2]
                        [--targets soc4,twin_npu_f32,imx8mp_f32] [--repeat N] [-- EXTRA PLAN ARGS]
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def model_path(out, name):
    path = os.path.join(out, name + ".onnx")
    if os.path.exists(path):
        return path
    if name.startswith("big"):
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools/make_big_graph.py"), path,
                        "--nodes", name[3:]], check=True)
    else:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools/export_torchvision.py"),
                        name, os.path.join(out, name)], check=True, capture_output=True)
        os.replace(os.path.join(out, name, name + ".onnx"), path)
    return path


def plan_once(baton, model, target, out, extra):
    report = out + ".json"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run([baton, "plan", model, "--target", target, "--auto", "-o", out + ".baton",
                    "--report", report, "-q", *extra], check=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    doc = json.load(open(report))
    return wall, cpu, doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("baton")
    ap.add_argument("out")
    ap.add_argument("--models", default="big500,big5000,mobilenet_v2")
    ap.add_argument("--targets", default="soc4,twin_npu_f32,imx8mp_f32")
    ap.add_argument("--repeat", type=int, default=1)
    # Everything after `--` goes to `baton plan` (argparse alone rejects
    # options there).
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    a = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    a.extra = extra
    os.makedirs(a.out, exist_ok=True)
    baton = os.path.abspath(a.baton)
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print("| model | target | wall s | CPU s | throughput/s | D | time limit hit |")
    print("|---|---|---|---|---|---|---|")
    for name in a.models.split(","):
        model = model_path(a.out, name)
        for tname in a.targets.split(","):
            target = os.path.join(ROOT, "ports/linux/targets", tname + ".json")
            runs = [plan_once(baton, model, target, os.path.join(a.out, f"{name}.{tname}"), a.extra)
                    for _ in range(a.repeat)]
            doc = runs[-1][2]
            auto = doc.get("auto", {})
            print(f"| {name} | {tname} | {statistics.median(r[0] for r in runs):.2f} | "
                  f"{statistics.median(r[1] for r in runs):.2f} | "
                  f"{auto.get('throughput_per_s', 0):.1f} | {doc.get('inferences_in_flight', '')} | "
                  f"{'yes' if auto.get('time_limit_hit') else 'no'} |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    sys.exit(main())
