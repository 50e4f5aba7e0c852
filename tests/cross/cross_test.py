#!/usr/bin/env python3
"""Driver for the cross-build ctest tests (registered by tests.cmake).

  cross_test.py build  --source S --build B --toolchain T [-D K=V]... --target T...
      Configures B with the toolchain (re-running cmake when B exists, so new
      -D values apply) and builds the targets (-j2).
  cross_test.py demo   --source S --build B --toolchain T --tool BATON
                       --machine M [--variant NAME:TARGET_JSON[:ASSIGN,...]]...
      For each variant: configure with that demo target/assignments, build
      baton-demo, run it under qemu-system-arm -M M (semihosting), run the
      same plan and inputs on the host (`baton run`), and compare the printed
      outputs with the host's .npy files (tolerance 1e-5).
  cross_test.py ctest  --build B
      Runs ctest in a cross build directory (tests run through the
      toolchain's CMAKE_CROSSCOMPILING_EMULATOR).
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, timeout=None, **kwargs):
    print("+ " + " ".join(cmd), flush=True)
    start = time.time()
    proc = subprocess.run(cmd, timeout=timeout, **kwargs)
    print("  (%.1f s, exit %d)" % (time.time() - start, proc.returncode), flush=True)
    return proc


def configure(args, defines):
    cmd = ["cmake", "-S", args.source, "-B", args.build, "-DCMAKE_TOOLCHAIN_FILE=" + args.toolchain]
    cmd += ["-D" + d for d in defines]
    if run(cmd).returncode != 0:
        sys.exit("cross_test: configure failed")


def build(args, targets):
    cmd = ["cmake", "--build", args.build, "-j2", "--target"] + targets
    if run(cmd).returncode != 0:
        sys.exit("cross_test: build of %s failed" % " ".join(targets))


def cmd_build(args):
    configure(args, args.define)
    build(args, args.target)
    return 0


def cmd_demo(args):
    failures = 0
    fw_dir = os.path.join(args.build, "ports", "cortex-m")
    for variant in args.variant:
        fields = variant.split(":")
        name, target = fields[0], fields[1]
        assign = fields[2] if len(fields) > 2 else ""
        print("=== %s: %s %s" % (name, os.path.basename(target), assign), flush=True)
        configure(args, args.define + ["BATON_HOST_TOOL=" + args.tool, "BATON_DEMO_TARGET=" + target,
                                       "BATON_DEMO_ASSIGN=" + assign.replace(",", ";")])
        build(args, ["baton-demo"])
        elf = os.path.join(fw_dir, "baton-demo.elf")
        log = os.path.join(args.build, "qemu-%s.log" % name)
        qemu = [args.qemu, "-M", args.machine, "-nographic", "-semihosting-config",
                "enable=on,target=native", "-kernel", elf]
        try:
            # QEMU prints semihosting output on stderr: keep both.
            proc = run(qemu, timeout=args.timeout, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            print("cross_test: %s: QEMU timed out after %d s" % (name, args.timeout))
            failures += 1
            continue
        text = proc.stdout.decode(errors="replace")
        with open(log, "w") as f:
            f.write(text)
        sys.stdout.write(text)
        if proc.returncode != 0:
            print("cross_test: %s: firmware exited with %d" % (name, proc.returncode))
            failures += 1
            continue
        host_dir = os.path.join(args.build, "host-%s" % name)
        shutil.rmtree(host_dir, ignore_errors=True)
        inputs_dir = os.path.join(fw_dir, "demo", "inputs")
        baton_run = [args.tool, "run", os.path.join(fw_dir, "demo", "plan.baton"), "--output-dir", host_dir]
        for f in sorted(os.listdir(inputs_dir)):
            if f.endswith(".npy"):
                baton_run += ["--input", "%s=%s" % (f[:-4], os.path.join(inputs_dir, f))]
        if run(baton_run).returncode != 0:
            print("cross_test: %s: host baton run failed" % name)
            failures += 1
            continue
        compare = [sys.executable, os.path.join(HERE, "compare_outputs.py"), log, host_dir,
                   "--tolerance", str(args.tolerance)]
        if run(compare).returncode != 0:
            failures += 1
    if failures:
        print("cross_test: %d of %d variants failed" % (failures, len(args.variant)))
    return 1 if failures else 0


def cmd_ctest(args):
    proc = run(["ctest", "--test-dir", args.build, "--output-on-failure", "-j2"])
    return proc.returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("build", "demo"):
        p = sub.add_parser(name)
        p.add_argument("--source", required=True)
        p.add_argument("--build", required=True)
        p.add_argument("--toolchain", required=True)
        p.add_argument("-D", dest="define", action="append", default=[], metavar="K=V")
    sub.choices["build"].add_argument("--target", nargs="+", required=True)
    demo = sub.choices["demo"]
    demo.add_argument("--tool", required=True, help="host baton")
    demo.add_argument("--machine", required=True, help="QEMU machine, e.g. mps2-an385")
    demo.add_argument("--variant", action="append", required=True,
                      metavar="NAME:TARGET_JSON[:PATTERN=DEVICE,...]")
    demo.add_argument("--qemu", default="qemu-system-arm")
    demo.add_argument("--timeout", type=int, default=120)
    demo.add_argument("--tolerance", type=float, default=1e-5)
    ct = sub.add_parser("ctest")
    ct.add_argument("--build", required=True)
    args = parser.parse_args()
    return {"build": cmd_build, "demo": cmd_demo, "ctest": cmd_ctest}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
