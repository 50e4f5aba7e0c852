#!/usr/bin/python3
"""An independent reference for `baton plan --auto`: the best contiguous pipeline.

It shares no code with the planner's search (planner/src/passes/partition.cc).
From baton it takes only facts it could measure on a board:
  - the model's nodes in topological order and the bytes of every tensor
    (`baton inspect --json` of a plan that keeps every node on the fallback
    device);
  - every node's time on every device that runs it (`baton sim --json` of a
    plan that puts every op type the device runs on it, with the domains made
    large enough to fit; the fallback device's time from the fallback plan);
  - the links of the target file (routes, DMA queues, latency and bandwidth).

The search is exhaustive over contiguous pipelines: the topological order is
cut into 1..4 consecutive segments, each run by a different device (every
ordered choice of devices, every set of cut points). A node its segment's device
cannot run stays on the target's fallback device, as `--assign` rules do. Each
candidate's period is the largest queue load per inference: node times, plus
every copy the assignment implies (one per tensor and destination domain, along
the fewest-hop route, on the link's DMA queue or on the destination device),
each costing latency + bytes / bandwidth.

All cut sets are first ranked with numpy on an approximation (copies only of
the tensors crossing each cut, between consecutive segments); the best 400 are
re-scored exactly; the best exact candidates are then planned by baton with
one `@node=device` rule per node and `--in-flight 4` and simulated, and the
fastest plan that fits the target's memories is the reference.

usage: partition_reference.py BATON MODEL.onnx TARGET.json WORK_DIR [--top N]
prints one JSON object: throughput, latency, D, arena bytes, the segments.
"""
import argparse
import collections
import itertools
import json
import os
import subprocess
import sys

import numpy as np

MAX_SEGMENTS = 4
APPROX_KEEP = 400


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def plan_and_measure(baton, model, target_path, plan, rules):
    run([baton, "plan", model, "--target", target_path, *rules, "-o", plan, "-q"])
    doc = json.loads(run([baton, "inspect", plan, "--json"]))
    sim = json.loads(run([baton, "sim", plan, "--target", target_path, "--inferences", "1",
                          "--json"]))
    return doc, {n["id"]: n["duration_s"] for n in sim["nodes"]}


class Problem:
    """Nodes, tensors, per-device node times and copy routes of one model."""

    def __init__(self, baton, model, target_path, work):
        self.target = json.load(open(target_path))
        t = self.target
        self.devices = [d["name"] for d in t["devices"]]
        self.fallback = t.get("fallback", self.devices[0])
        self.home = {d["name"]: d["domains"][0] for d in t["devices"]}
        os.makedirs(work, exist_ok=True)

        # Structure and fallback times: every node on the fallback device.
        doc, dur = plan_and_measure(baton, model, target_path,
                                    os.path.join(work, "ref_fallback.baton"), [])
        nodes = sorted((n for n in doc["nodes"] if n["op"] != "__copy"),
                       key=lambda n: (n["stage"], n["position"]))
        self.names = [n["name"] for n in nodes]
        self.ops = [n["op"] for n in nodes]
        self.n = len(nodes)
        tensors = {x["id"]: x for x in doc["tensors"]}
        self.bytes = {i: x["bytes"] for i, x in tensors.items()}
        producer = {}
        for i, n in enumerate(nodes):
            for o in n["outputs"]:
                producer[o] = i
        self.producer = producer
        self.consumers = collections.defaultdict(list)
        for i, n in enumerate(nodes):
            for x in n["inputs"]:
                if tensors[x]["storage"] != "constant":
                    self.consumers[x].append(i)
        self.outputs = set(doc["outputs"])
        self.inputs = set(doc["inputs"])
        times = {self.fallback: [dur[n["id"]] for n in nodes]}

        # Every other device: all its op types on it, memories made roomy.
        roomy = json.loads(json.dumps(t))
        for d in roomy["domains"]:
            d["bytes"] = max(d["bytes"], 1 << 31)
        roomy_path = os.path.join(work, "ref_roomy_target.json")
        json.dump(roomy, open(roomy_path, "w"))
        for dev in t["devices"]:
            name = dev["name"]
            if name == self.fallback:
                continue
            ops = sorted(set(self.ops)) if dev["ops"] == "*" else \
                sorted(set(self.ops) & set(dev["ops"]))
            rules = [a for op in ops for a in ("--assign", f"{op}={name}")]
            ddoc, ddur = plan_and_measure(baton, model, roomy_path,
                                          os.path.join(work, f"ref_{name}.baton"), rules)
            by_name = {n["name"]: ddur[n["id"]] for n in ddoc["nodes"] if n["queue"] == name}
            times[name] = [by_name.get(nm) for nm in self.names]
        self.times = times

        # Links and fewest-hop routes between domains.
        self.links = {(l["from"], l["to"]): l for l in t["links"]}
        self.routes = {}
        domains = [d["name"] for d in t["domains"]]
        for a in domains:
            prev, frontier = {a: None}, [a]
            while frontier:
                nxt = []
                for u in frontier:
                    for (f, to) in sorted(self.links):
                        if f == u and to not in prev:
                            prev[to] = u
                            nxt.append(to)
                frontier = nxt
            for b in domains:
                if b == a or b not in prev:
                    continue
                path, cur = [], b
                while cur != a:
                    path.append((prev[cur], cur))
                    cur = prev[cur]
                self.routes[(a, b)] = path[::-1]

    def hop_queue(self, hop, device):
        link = self.links[hop]
        if link.get("queue"):
            return link["queue"]
        reaches = lambda d: hop[1] in next(x for x in self.target["devices"]
                                           if x["name"] == d)["domains"]
        if device is not None and reaches(device):
            return device
        if reaches(self.fallback):
            return self.fallback
        return next(d["name"] for d in self.target["devices"] if hop[1] in d["domains"])

    def copy_cost(self, nbytes, src, dst, device, loads):
        if src == dst:
            return True
        path = self.routes.get((src, dst))
        if path is None:
            return False
        for hop in path:
            link = self.links[hop]
            q = self.hop_queue(hop, device)
            loads[q] += link["latency_s"] + nbytes / link["bytes_per_s"]
        return True

    def device_of(self, assignment, i):
        d = assignment[i]
        return d if self.times[d][i] is not None else self.fallback

    def exact_period(self, assignment):
        """Largest queue load per inference of a full assignment (None: no route)."""
        loads = collections.defaultdict(float)
        dev = [self.device_of(assignment, i) for i in range(self.n)]
        for i in range(self.n):
            loads[dev[i]] += self.times[dev[i]][i]
        fb_home = self.home[self.fallback]
        for x, cons in self.consumers.items():
            src = self.home[dev[self.producer[x]]] if x in self.producer else fb_home
            seen = set()
            for c in cons:
                dst = self.home[dev[c]]
                if dst in seen:
                    continue
                seen.add(dst)
                if not self.copy_cost(self.bytes[x], src, dst, dev[c], loads):
                    return None, None
        for x in self.outputs:
            if x in self.producer:
                if not self.copy_cost(self.bytes[x], self.home[dev[self.producer[x]]], fb_home,
                                      None, loads):
                    return None, None
        worst = max(loads, key=lambda q: loads[q])
        return loads[worst], dict(loads)


def approximate_candidates(p):
    """Every (device order, cut set), ranked by an approximate period."""
    n = p.n
    # crossing[c]: bytes of tensors produced before c (or graph inputs) read at or after c.
    crossing = np.zeros(n + 1)
    for x, cons in p.consumers.items():
        first = p.producer.get(x, -1) + 1
        last = max(cons)
        crossing[first:last + 1] += p.bytes[x]
    pref = {}
    fb_pref = {}
    for d in p.devices:
        t = np.array([p.times[d][i] if p.times[d][i] is not None else 0.0 for i in range(n)])
        f = np.array([p.times[p.fallback][i] if p.times[d][i] is None else 0.0
                      for i in range(n)])
        pref[d] = np.concatenate([[0.0], np.cumsum(t)])
        fb_pref[d] = np.concatenate([[0.0], np.cumsum(f)])
    best = []
    for s in range(1, min(MAX_SEGMENTS, len(p.devices)) + 1):
        if s == 1:
            cuts = np.zeros((1, 0), dtype=np.int64)
        else:
            cuts = np.array(list(itertools.combinations(range(1, n), s - 1)), dtype=np.int64)
        bounds = np.concatenate([np.zeros((len(cuts), 1), np.int64), cuts,
                                 np.full((len(cuts), 1), n, np.int64)], axis=1)
        for order in itertools.permutations(p.devices, s):
            loads = collections.defaultdict(lambda: np.zeros(len(cuts)))
            ok = True
            for j, d in enumerate(order):
                lo, hi = bounds[:, j], bounds[:, j + 1]
                loads[d] = loads[d] + pref[d][hi] - pref[d][lo]
                loads[p.fallback] = loads[p.fallback] + fb_pref[d][hi] - fb_pref[d][lo]
                if j > 0:
                    src, dst = p.home[order[j - 1]], p.home[d]
                    if src != dst:
                        path = p.routes.get((src, dst))
                        if path is None:
                            ok = False
                            break
                        for hop in path:
                            link = p.links[hop]
                            q = p.hop_queue(hop, d)
                            loads[q] = loads[q] + link["latency_s"] + \
                                crossing[lo] / link["bytes_per_s"]
            if not ok:
                continue
            period = np.max(np.stack(list(loads.values())), axis=0)
            keep = np.argsort(period, kind="stable")[:APPROX_KEEP]
            best.extend((period[k], order, tuple(bounds[k])) for k in keep)
    best.sort(key=lambda c: c[0])
    return best[:APPROX_KEEP]


def assignment_of(p, order, bounds):
    a = [None] * p.n
    for j, d in enumerate(order):
        for i in range(bounds[j], bounds[j + 1]):
            a[i] = d
    return a


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("baton")
    ap.add_argument("model")
    ap.add_argument("target")
    ap.add_argument("work")
    ap.add_argument("--top", type=int, default=5, help="exact candidates to plan and simulate")
    a = ap.parse_args()
    baton = os.path.abspath(a.baton)
    p = Problem(baton, a.model, a.target, a.work)
    scored = []
    for _, order, bounds in approximate_candidates(p):
        period, loads = p.exact_period(assignment_of(p, order, bounds))
        if period is not None:
            scored.append((period, order, bounds))
    scored.sort(key=lambda c: c[0])
    results, tried = [], 0
    for period, order, bounds in scored:
        if len(results) >= a.top or tried >= 4 * a.top:
            break
        tried += 1
        assignment = assignment_of(p, order, bounds)
        rules = [r for i in range(p.n) for r in ("--assign", f"@{p.names[i]}={assignment[i]}")]
        plan = os.path.join(a.work, f"ref_candidate{tried}.baton")
        try:
            run([baton, "plan", a.model, "--target", a.target, *rules, "--in-flight", "4",
                 "-o", plan, "-q"])
        except subprocess.CalledProcessError:
            continue  # does not fit the target's memories
        sim = json.loads(run([baton, "sim", plan, "--target", a.target, "--inferences", "100",
                              "--json"]))
        doc = json.loads(run([baton, "inspect", plan, "--json"]))
        results.append({
            "throughput_per_s": sim["throughput_per_s"],
            "latency_s": sim["latency_s"]["mean"],
            "in_flight": doc["inferences_in_flight"],
            "arena_bytes": sum(d["bytes"] for d in doc["domains"]),
            "model_period_s": period,
            "segments": [[order[j], p.names[bounds[j]], int(bounds[j + 1] - bounds[j])]
                         for j in range(len(order))],
        })
    if not results:
        print(json.dumps({"error": "no contiguous pipeline among the best candidates fits"}))
        return 1
    best = max(results, key=lambda r: r["throughput_per_s"])
    best["candidates_simulated"] = len(results)
    best["nodes"] = p.n
    print(json.dumps(best))
    return 0


if __name__ == "__main__":
    sys.exit(main())
