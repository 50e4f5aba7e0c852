#!/usr/bin/python3
"""Baton's outputs on int8 QDQ models against ONNX Runtime's and torch's, in LSBs.

    quant_check.py --baton PATH/TO/baton --cases DIR [--target T.json]
                   [--cpu-target CPU.json] [--work DIR] [--max-lsb 1] [--min-equal 0.99]
                   [--against ort|ort_noopt] [--allow-spread] [--case NAME]...
                   [--isa auto|portable|avx2|avx512|avx512vnni]

DIR is what tests/quant/make_quant_models.py writes (its manifest.json lists
the cases). For every case and target (the single-CPU target
ports/linux/targets/cpu.json of this tree or --cpu-target, and --target
when given) this runs

    baton plan DIR/<case>/model.onnx --target T.json -o PLAN -q
    baton run PLAN --input NAME=DIR/<case>/input<k>.npy... --output-dir OUT --isa ISA

and compares every output with the references the manifest names:
ONNX Runtime at graph optimization level 'all' (fused integer kernels),
at level 'disabled' (DequantizeLinear, float op, QuantizeLinear one by one)
and torch's quantized model (or, for the onnx.helper cases, the
generator's float64 simulation, marked '*'). A difference is counted in
units of the output's LSB: the scale of the DequantizeLinear that writes
the output (per element along its axis when per-axis), 1 for an integer
output. Per case and target it prints the largest |difference| in LSBs and
the share of elements whose difference rounds to 0 LSB, against each
reference. A case fails when `baton plan` or `baton run` fails (its error
is printed) or when, against --against (default ort, i.e. ORT-all), the
largest difference of an output exceeds --max-lsb or its equal share is
below --min-equal. Exit code 0 when every case passes, 1 otherwise, 2 on a
usage error.

--allow-spread widens both limits per output to how far the references
themselves are apart over the generator's sample inputs (its manifest's
"spread": the largest difference and the lowest per-input equal share of
the --against reference against the other ORT level and against torch or
the float64 simulation). Deep nets need it: one float32 rounding of a value
near a tie flips an LSB, and the flips grow from layer to layer, so ORT's
two levels already differ by several LSBs on mobilenet_v2's logits, and a
float-simulated implementation cannot be expected to do better.

As a module: lsb_stats(got, want, output entry of the manifest).
"""
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CPU_TARGET = os.path.join(ROOT, "ports", "linux", "targets", "cpu.json")
TIMEOUT_S = 600  # one `baton plan` or `baton run`


def lsb_array(out, rank):
    """The LSB of every element of an output (broadcastable), or None."""
    lsb = out.get("lsb")
    if lsb is None:
        return None
    if out.get("lsb_axis") is None:
        return np.float64(lsb)
    shape = [1] * rank
    shape[out["lsb_axis"]] = len(lsb)
    return np.asarray(lsb, np.float64).reshape(shape)


def lsb_stats(got, want, out):
    """{"max_lsb": largest |got - want| in LSBs, "equal": share of elements
    whose difference rounds to 0 LSBs}. Integer outputs compare exactly (one
    LSB is 1). Raises ValueError on a shape mismatch or an output without an
    LSB."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        raise ValueError(f"shape {list(got.shape)}, the reference's is {list(want.shape)}")
    if np.issubdtype(want.dtype, np.integer) and np.issubdtype(got.dtype, np.integer):
        d = got.astype(np.int64) - want.astype(np.int64)
    else:
        lsb = lsb_array(out, want.ndim)
        if lsb is None:
            raise ValueError("the output is not written by a DequantizeLinear (no LSB known)")
        d = (got.astype(np.float64) - want.astype(np.float64)) / lsb
        d = np.where(np.isnan(d), np.inf, d)
    if d.size == 0:
        return {"max_lsb": 0.0, "equal": 1.0}
    a = np.abs(d)
    return {"max_lsb": round(float(a.max()), 3), "equal": float(np.mean(np.rint(a) == 0))}


def worst(stats):
    """The worst of several outputs' lsb_stats (None when there are none)."""
    stats = [s for s in stats if s is not None]
    if not stats:
        return None
    return {"max_lsb": max(s["max_lsb"] for s in stats), "equal": min(s["equal"] for s in stats)}


def output_file(out_dir, name):
    # `baton run` writes DIR/<output>.npy with '/', '\' and ':' made '_'.
    return os.path.join(out_dir, name.replace("/", "_").replace("\\", "_").replace(":", "_") +
                        ".npy")


class CaseError(Exception):
    pass


def run_tool(cmd, what):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise CaseError(f"{what} timed out after {TIMEOUT_S} s")
    except OSError as e:
        raise CaseError(f"{what} could not start: {e}")
    if r.returncode < 0:
        raise CaseError(f"{what} was killed by signal {-r.returncode} "
                        f"({signal.Signals(-r.returncode).name})")
    if r.returncode != 0:
        lines = [s for s in (r.stderr or r.stdout).strip().splitlines() if s.strip()]
        msg = lines[-1] if lines else f"exit code {r.returncode}"
        # Keep the "baton plan: ..." line, not the usage hint after it.
        for s in lines:
            if s.startswith("baton "):
                msg = s
                break
        raise CaseError(f"{what} failed (exit {r.returncode}): {msg}")


def check_case(tool, case_dir, case, target, work, isa="auto"):
    """Plans and runs one case on one target. Returns {output name: {ref:
    lsb_stats}}; raises CaseError."""
    shutil.rmtree(work, ignore_errors=True)  # no outputs of an earlier run
    os.makedirs(work)
    plan = os.path.join(work, "model.baton")
    out_dir = os.path.join(work, "out")
    run_tool([tool, "plan", os.path.join(case_dir, "model.onnx"), "--target", target, "-o", plan,
              "-q"], "baton plan")
    cmd = [tool, "run", plan, "--output-dir", out_dir, "--isa", isa]
    for i in case["inputs"]:
        cmd += ["--input", f"{i['name']}={os.path.join(case_dir, i['file'])}"]
    run_tool(cmd, "baton run")
    result = {}
    for out in case["outputs"]:
        path = output_file(out_dir, out["name"])
        if not os.path.exists(path):
            raise CaseError(f"baton run wrote no {os.path.basename(path)} for output "
                            f"'{out['name']}'")
        got = np.load(path)
        stats = {}
        for ref in ("ort", "ort_noopt", "torch", "ref"):
            if ref in out:
                try:
                    stats[ref] = lsb_stats(got, np.load(os.path.join(case_dir, out[ref])), out)
                except ValueError as e:
                    raise CaseError(f"output '{out['name']}' against {ref}: {e}")
        result[out["name"]] = stats
    return result


def limits(out, args):
    """(max LSBs, min equal share) for one output of the manifest."""
    max_lsb, min_equal = args.max_lsb, args.min_equal
    if args.allow_spread:
        ref = args.against
        other = [r for r in ("ort", "ort_noopt", "torch", "ref") if r != ref]
        for key, s in out.get("spread", {}).items():
            if key in [f"{ref}_vs_{o}" for o in other] or key in [f"{o}_vs_{ref}" for o in other]:
                max_lsb = max(max_lsb, s["max_lsb"])
                min_equal = min(min_equal, s["equal"])
    return max_lsb, min_equal


def fmt(s):
    return "-" if s is None else f"{s['max_lsb']:g} / {100 * s['equal']:.2f}%"


def main(argv):
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="Cells are 'largest |diff| in LSBs / %% of elements equal'.")
    ap.add_argument("--baton", required=True, help="the baton tool")
    ap.add_argument("--cases", required=True, help="make_quant_models.py's output directory")
    ap.add_argument("--target", help="a target besides the single-CPU one")
    ap.add_argument("--cpu-target", default=CPU_TARGET,
                    help="the single-CPU target (default: ports/linux/targets/cpu.json)")
    ap.add_argument("--work", help="keep plans and outputs here (default: a temporary directory)")
    ap.add_argument("--max-lsb", type=float, default=1.0)
    ap.add_argument("--min-equal", type=float, default=0.99)
    ap.add_argument("--against", choices=("ort", "ort_noopt"), default="ort",
                    help="the reference the thresholds apply to: ORT at level 'all' (default) "
                    "or 'disabled'")
    ap.add_argument("--allow-spread", action="store_true",
                    help="per output, allow as much as the references differ among themselves")
    ap.add_argument("--case", action="append", default=[], help="check only this case")
    ap.add_argument("--isa", default="auto",
                    help="baton run --isa: the kernels' instruction set (auto, portable, avx2, "
                    "avx512, avx512vnni, neon_dotprod)")
    args = ap.parse_args(argv)
    manifest_path = os.path.join(args.cases, "manifest.json")
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        ap.error(f"cannot read {manifest_path} (run tests/quant/make_quant_models.py): {e}")
    if not os.path.isfile(args.baton):
        ap.error(f"--baton {args.baton} does not exist")
    targets = [args.cpu_target] + ([args.target] if args.target else [])
    for t in targets:
        if not os.path.isfile(t):
            ap.error(f"target {t} does not exist")
    cases = manifest["cases"]
    unknown = set(args.case) - {c["name"] for c in cases}
    if unknown:
        ap.error(f"no case {', '.join(sorted(unknown))} in {manifest_path}")
    if args.case:
        cases = [c for c in cases if c["name"] in args.case]

    work_root = args.work or tempfile.mkdtemp(prefix="baton-quant-")
    print(f"baton vs references on {len(cases)} QDQ cases; cells: max |diff| in LSBs / "
          f"% equal; pass: vs {'ORT-all' if args.against == 'ort' else 'ORT-disabled'} "
          f"<= {args.max_lsb:g} LSB and >= {100 * args.min_equal:g}% equal")
    head = f"{'case':28} {'target':10} {'vs ORT-all':>17} {'vs ORT-disabled':>17} " \
           f"{'vs torch (*ref)':>17}  result"
    print(head)
    print("-" * len(head))
    failures = []
    for case in cases:
        for target in targets:
            tname = os.path.splitext(os.path.basename(target))[0]
            label = f"{case['name']:28} {tname:10}"
            try:
                res = check_case(os.path.abspath(args.baton), os.path.join(args.cases,
                                 case["name"]), case, target,
                                 os.path.join(work_root, case["name"], tname), args.isa)
            except CaseError as e:
                msg = str(e)
                print(f"{label} FAIL: {msg if len(msg) <= 160 else msg[:157] + '...'}")
                failures.append(f"{case['name']} on {tname}: {e}")
                continue
            except Exception as e:  # a bug here, or malformed files: still one row
                print(f"{label} FAIL: internal error: {type(e).__name__}: {e}")
                traceback.print_exc(file=sys.stderr)
                failures.append(f"{case['name']} on {tname}: {type(e).__name__}: {e}")
                continue
            cells = {ref: worst([s.get(ref) for s in res.values()])
                     for ref in ("ort", "ort_noopt", "torch", "ref")}
            third = fmt(cells["torch"]) if cells["torch"] else \
                (fmt(cells["ref"]) + "*" if cells["ref"] else "-")
            bad = []
            for out in case["outputs"]:
                max_lsb, min_equal = limits(out, args)
                s = res[out["name"]][args.against]
                if s["max_lsb"] > max_lsb or s["equal"] < min_equal:
                    bad.append(f"'{out['name']}' {fmt(s)} (limits {max_lsb:g} / "
                               f"{100 * min_equal:.2f}%)")
            verdict = "ok" if not bad else "FAIL"
            print(f"{label} {fmt(cells['ort']):>17} {fmt(cells['ort_noopt']):>17} "
                  f"{third:>17}  {verdict}")
            if bad:
                failures.append(f"{case['name']} on {tname}: output {', '.join(bad)} against "
                                f"{args.against}")
    if args.work is None:
        shutil.rmtree(work_root, ignore_errors=True)
    if failures:
        print(f"\n{len(failures)} of {len(cases) * len(targets)} case/target pairs failed:")
        for f in failures:
            print(f"  {f}")
        return 1
    print(f"\nall {len(cases) * len(targets)} case/target pairs pass")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
