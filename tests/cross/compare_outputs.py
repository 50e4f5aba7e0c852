#!/usr/bin/env python3
"""Compares a firmware's printed outputs with a host run's .npy files.

  compare_outputs.py LOG HOST_DIR [--tolerance 1e-5]

LOG holds lines `output <name> <count> <v0> <v1> ...` (other lines are
ignored); HOST_DIR holds `<name>.npy` from `baton run --output-dir`. Each
value must satisfy |device - host| <= tol * max(1, |host|). Every output in
HOST_DIR must be printed and vice versa. Exit 0 when they match.
"""
import argparse
import math
import os
import sys

import numpy as np


def parse_log(path):
    outputs = {}
    with open(path, errors="replace") as f:
        for line in f:
            parts = line.split()
            if len(parts) < 3 or parts[0] != "output":
                continue
            name, count = parts[1], int(parts[2])
            values = [float(v) for v in parts[3:]]
            if len(values) != count:
                raise ValueError("output %s: %d values printed, count says %d" % (name, len(values), count))
            outputs[name] = np.array(values, dtype=np.float64)
    return outputs


def close(device, host, tolerance):
    if math.isnan(host):
        return math.isnan(device)
    if math.isinf(host):
        return device == host
    return math.isfinite(device) and abs(device - host) <= tolerance * max(1.0, abs(host))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log")
    parser.add_argument("host_dir")
    parser.add_argument("--tolerance", type=float, default=1e-5)
    args = parser.parse_args()

    device = parse_log(args.log)
    host = {os.path.splitext(f)[0]: np.load(os.path.join(args.host_dir, f)).astype(np.float64).ravel()
            for f in os.listdir(args.host_dir) if f.endswith(".npy")}
    ok = True
    if not device:
        print("compare_outputs: no 'output' lines in %s" % args.log)
        return 1
    for name in sorted(set(device) | set(host)):
        if name not in device:
            print("compare_outputs: %s: missing from the firmware output" % name)
            ok = False
            continue
        if name not in host:
            print("compare_outputs: %s: no %s.npy from the host run" % (name, name))
            ok = False
            continue
        d, h = device[name], host[name]
        if d.shape != h.shape:
            print("compare_outputs: %s: %d values on the device, %d on the host" % (name, d.size, h.size))
            ok = False
            continue
        bad = [i for i in range(d.size) if not close(d[i], h[i], args.tolerance)]
        with np.errstate(invalid="ignore"):
            worst = float(np.nanmax(np.abs(d - h))) if d.size else 0.0
        if bad:
            i = bad[0]
            print("compare_outputs: %s: %d of %d values differ (first: [%d] device %.9g host %.9g)"
                  % (name, len(bad), d.size, i, d[i], h[i]))
            ok = False
        else:
            print("compare_outputs: %s: %d values match (max abs diff %.3g)" % (name, d.size, worst))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
