#!/usr/bin/python3
"""The custom-op example end to end (ctest example.custom_op).

  1. export_model.py: torch model with com.example::MyOp -> model.onnx,
     input.npy and torch's own output expected.npy;
  2. baton plan model.onnx --custom-op com.example::MyOp;
  3. baton inspect shows the op and its attributes;
  4. baton run fails: it has no kernel for MyOp, and says so;
  5. run_custom_op (registers the kernel) runs the plan;
  6. its output equals torch's (float32 tolerance).

usage: run_example.py BATON RUN_CUSTOM_OP WORK_DIR
"""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OP = "com.example::MyOp"


def run(cmd, expect_ok=True):
    print("$", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(r.stdout, end="")
    if (r.returncode == 0) != expect_ok:
        sys.exit("FAILED: exit code %d" % r.returncode)
    return r.stdout


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    baton, runner, work = sys.argv[1:]
    os.makedirs(work, exist_ok=True)
    run([sys.executable, "-W", "ignore", os.path.join(HERE, "export_model.py"), work])
    model, plan = os.path.join(work, "model.onnx"), os.path.join(work, "model.baton")

    # Undeclared, the op is an error that suggests --custom-op.
    out = run([baton, "plan", model, "-o", plan], expect_ok=False)
    assert "--custom-op " + OP in out, out

    run([baton, "plan", model, "--custom-op", OP, "-o", plan])
    info = json.loads(run([baton, "inspect", plan, "--json"]))
    custom = [n for n in info["nodes"] if n["op"] == OP]
    assert len(custom) == 1, info["nodes"]
    attrs = custom[0]["attributes"]
    assert attrs["alpha"] == 1.5 and attrs["bias"] == -2 and attrs["mode"] == "affine", attrs
    assert attrs["taps"] == [1, 2, 3] and attrs["gains"] == [0.5, 2.0], attrs
    assert attrs["tags"] == ["edge", "demo"], attrs
    assert attrs["lut"]["values"] == [0.25, -0.5, 1.0, 2.0], attrs

    # `baton run` has no kernel for the op: the loader names it.
    out = run([baton, "run", plan, "--input", "x=" + os.path.join(work, "input.npy"),
               "--output-dir", os.path.join(work, "baton_run")], expect_ok=False)
    assert OP in out, out

    result = os.path.join(work, "y.npy")
    run([runner, plan, os.path.join(work, "input.npy"), result])
    got, want = np.load(result), np.load(os.path.join(work, "expected.npy"))
    assert got.shape == want.shape, (got.shape, want.shape)
    err = float(np.max(np.abs(got - want)))
    print("max |baton - torch| = %.3g over %d values" % (err, want.size))
    if not err <= 1e-5 * max(1.0, float(np.max(np.abs(want)))):
        sys.exit("FAILED: output differs from torch's")
    print("OK")


if __name__ == "__main__":
    main()
