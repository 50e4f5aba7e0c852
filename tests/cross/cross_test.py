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
  cross_test.py images --source S --build B --toolchain T --tool BATON
                       --cases DIR --target-json J --model NAME... [--size-report R.json]
                       [--float] [--assign PATTERN=DEVICE,...]
      Builds one firmware per model of make_quant_models.py's DIR: the int8
      QDQ model (fw-int8-NAME.elf, must build; planned with the --assign
      rules, and every device they name must get a node) and, with --float and when the
      case has one, its float model (fw-float-NAME.elf, may fail to fit the
      board; the reason is reported), each planned for J with the case's input
      embedded (ports/cortex-m BATON_FIRMWARE_IMAGES: the libraries are
      built once, each image only plans and links). Prints and writes a
      table of arena bytes (plan.h) and ELF sizes (arm-none-eabi-size).
  cross_test.py int8   --build B --cases DIR --model NAME --machine M --qemu Q
                       --tool BATON [--allow-spread]
      Runs fw-int8-NAME.elf under QEMU and compares its printed outputs with
      ONNX Runtime's (ort_out<k>.npy) in output LSBs (tools/quant_check.py):
      at most 1 LSB and 99% equal, or the references' spread with
      --allow-spread. Also reports the difference from `baton run` of the
      same plan on the host (bit-exact expected, not required).
  cross_test.py custom --source S --build B --toolchain T --tool BATON --example DIR
                       --runner RUN_CUSTOM_OP --target-json J --machine M --qemu Q
                       [--size SIZE --nm NM] [--size-delta]
      The custom op on the target: DIR/export_model.py (examples/custom_op)
      writes model.onnx with com.example::MyOp, input.npy and torch's
      expected.npy; the image fw-custom_op (BATON_FIRMWARE_IMAGES with
      custom-op: and kernels:DIR/firmware_kernels.cc,DIR/my_op_kernel.cc)
      is planned for J, built and run under QEMU; its output is compared
      (1e-5) with torch's and with RUN_CUSTOM_OP's on the host. Checks the
      ELF with tools/check_no_heap.sh and prints its size; --size-delta also
      links the same plan without the kernels (fw-custom_op-nokernel, not
      run) and prints the difference.
  cross_test.py firmware --build B --target T --machine M --qemu Q
      Builds firmware target T in the configured tree B and runs it under
      QEMU; passes when it exits 0 (baton-qdot-check).
  cross_test.py ctest  --build B [-R REGEX] [--qemu-cpu CPU]
      Runs ctest in a cross build directory (tests run through the
      toolchain's CMAKE_CROSSCOMPILING_EMULATOR), with QEMU_CPU=CPU when
      given (qemu-aarch64 then emulates that core).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools"))
import quant_check  # noqa: E402  (lsb_stats, limits)
from compare_outputs import parse_log  # noqa: E402


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


def run_firmware(args, name, elf):
    """Runs `elf` under QEMU with semihosting (its output comes on stderr:
    both are kept), writes it to qemu-NAME.log and echoes it. Returns the
    log's path, or None, saying why, when QEMU timed out or the firmware
    exited with an error."""
    qemu = [args.qemu, "-M", args.machine, "-nographic", "-semihosting-config",
            "enable=on,target=native", "-kernel", elf]
    try:
        proc = run(qemu, timeout=args.timeout, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                   stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        print("cross_test: %s: QEMU timed out after %d s" % (name, args.timeout))
        return None
    text = proc.stdout.decode(errors="replace")
    log = os.path.join(args.build, "qemu-%s.log" % name)
    with open(log, "w") as f:
        f.write(text)
    sys.stdout.write(text)
    if proc.returncode != 0:
        print("cross_test: %s: firmware exited with %d" % (name, proc.returncode))
        return None
    return log


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
        log = run_firmware(args, name, os.path.join(fw_dir, "baton-demo.elf"))
        if log is None:
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


def load_manifest(cases):
    with open(os.path.join(cases, "manifest.json")) as f:
        return {c["name"]: c for c in json.load(f)["cases"]}


def image_dir(build, name):
    return os.path.join(build, "ports", "cortex-m", "fw", name)


def image_elf(build, name):
    return os.path.join(build, "ports", "cortex-m", "fw-%s.elf" % name)


def plan_macros(path):
    """{macro: int} of plan.h's #define NAME <integer> lines."""
    with open(path) as f:
        return {m.group(1): int(m.group(2))
                for m in re.finditer(r"^#define (\w+) (\d+)u?\s*$", f.read(), re.M)}


def elf_size(size_tool, elf):
    out = subprocess.run([size_tool, elf], stdout=subprocess.PIPE, text=True, check=True).stdout
    text, data, bss = (int(v) for v in out.splitlines()[1].split()[:3])
    return {"text": text, "data": data, "bss": bss}


def cmd_images(args):
    manifest = load_manifest(args.cases)
    lines, images = [], []
    for model in args.model:
        case = manifest[model]
        inputs = " ".join("%s=%s" % (i["name"], os.path.join(args.cases, model, i["file"]))
                          for i in case["inputs"])
        for kind, onnx in (("int8", "model.onnx"), ("float", case.get("float_model"))):
            if onnx is None or (kind == "float" and not args.float):
                continue
            name = "%s-%s" % (kind, model)
            # The int8 images place the integer ops by --assign (an int8-only
            # NPU queue); the float images are measured on the CPU alone.
            assign = " assign:" + args.assign if kind == "int8" and args.assign else ""
            lines.append("%s %s %s%s %s" % (name, os.path.join(args.cases, model, onnx),
                                            args.target_json, assign, inputs))
            images.append((model, kind, name))
    os.makedirs(args.build, exist_ok=True)
    listing = os.path.join(args.build, "firmware_images.txt")
    with open(listing, "w") as f:
        f.write("\n".join(lines) + "\n")
    configure(args, args.define + ["BATON_HOST_TOOL=" + args.tool,
                                   "BATON_FIRMWARE_IMAGES=" + listing])
    # The int8 images must build (each link runs the no-heap check); float
    # images are only measured, and may not fit the board.
    build(args, ["fw-" + n for _, kind, n in images if kind == "int8"])
    rows = []
    for model, kind, name in images:
        row = {"model": model, "kind": kind, "image": name}
        if kind == "float":
            proc = run(["cmake", "--build", args.build, "-j2", "--target", "fw-" + name],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            text = proc.stdout.decode(errors="replace")
            if proc.returncode != 0:
                lines = [l.strip() for l in text.splitlines()]
                why = [l for l in lines if l.startswith("baton plan:") or "overflowed" in l] + \
                    [l for l in lines if "error" in l.lower()]
                row["error"] = why[0].split("/ld: ")[-1] if why else "build failed"
                print("cross_test: %s did not build: %s" % (name, row["error"]))
                sys.stdout.write(text[-2000:])
        d = image_dir(args.build, name)
        if os.path.exists(os.path.join(d, "plan.h")):
            macros = plan_macros(os.path.join(d, "plan.h"))
            row["plan_bytes"] = macros.get("BATON_PLAN_BYTES")
            row["arenas"] = {k[len("BATON_"):-len("_ARENA_BYTES")].lower(): v
                             for k, v in macros.items() if k.endswith("_ARENA_BYTES")}
            row["input_bytes"] = sum(np.load(os.path.join(d, "inputs", f)).nbytes
                                     for f in os.listdir(os.path.join(d, "inputs")))
        if kind == "int8" and args.assign:
            # Every device a rule names must run part of the plan.
            plan = json.loads(run([args.tool, "inspect", "--json", os.path.join(d, "plan.baton")],
                                  stdout=subprocess.PIPE).stdout)
            row["nodes_per_queue"] = {}
            for node in plan["nodes"]:
                q = row["nodes_per_queue"]
                q[node["queue"]] = q.get(node["queue"], 0) + 1
            for rule in args.assign.split(","):
                device = rule.split("=")[-1]
                if row["nodes_per_queue"].get(device, 0) == 0:
                    print("cross_test: %s: no node on %s (rules %s)" % (name, device, args.assign))
                    return 1
        if "error" not in row:
            row.update(elf_size(args.size, image_elf(args.build, name)))
            # Code: the ELF's .text without the embedded plan and inputs.
            row["code"] = row["text"] - row["plan_bytes"] - row["input_bytes"]
        rows.append(row)
    print("\n%-22s %-5s %10s %10s %8s %8s %9s  %s" % ("model", "kind", "text", "code", "data",
                                                     "bss", "plan", "arenas"))
    for r in rows:
        arenas = " ".join("%s=%d" % kv for kv in sorted(r.get("arenas", {}).items()))
        if "error" in r:
            print("%-22s %-5s %10s %10s %8s %8s %9s  %s  (%s)" % (
                r["model"], r["kind"], "-", "-", "-", "-", r.get("plan_bytes", "-"), arenas,
                r["error"]))
        else:
            print("%-22s %-5s %10d %10d %8d %8d %9d  %s" % (
                r["model"], r["kind"], r["text"], r["code"], r["data"], r["bss"],
                r["plan_bytes"], arenas))
    if args.size_report:
        with open(args.size_report, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


def cmd_int8(args):
    case = load_manifest(args.cases)[args.model]
    name = "int8-" + args.model
    log = run_firmware(args, name, image_elf(args.build, name))
    if log is None:
        return 1
    device = parse_log(log)
    # The same plan and input on the host, for information.
    d = image_dir(args.build, name)
    host_dir = os.path.join(args.build, "host-%s" % name)
    shutil.rmtree(host_dir, ignore_errors=True)
    baton_run = [args.tool, "run", os.path.join(d, "plan.baton"), "--output-dir", host_dir]
    for i in case["inputs"]:
        baton_run += ["--input", "%s=%s" % (i["name"], os.path.join(d, "inputs", i["name"] + ".npy"))]
    host_ok = run(baton_run).returncode == 0
    limit_args = argparse.Namespace(max_lsb=1.0, min_equal=0.99, against="ort",
                                    allow_spread=args.allow_spread)
    failures = 0
    for k, out in enumerate(case["outputs"]):
        if out["name"] not in device:
            print("cross_test: %s: output %s not printed" % (name, out["name"]))
            failures += 1
            continue
        want = np.load(os.path.join(args.cases, args.model, out["ort"]))
        got = device[out["name"]].astype(want.dtype).reshape(want.shape)
        stats = quant_check.lsb_stats(got, want, out)
        max_lsb, min_equal = quant_check.limits(out, limit_args)
        ok = stats["max_lsb"] <= max_lsb and stats["equal"] >= min_equal
        host = "-"
        host_file = quant_check.output_file(host_dir, out["name"])
        if host_ok and os.path.exists(host_file):
            h = np.load(host_file).reshape(want.shape)
            host = "bit-exact" if np.array_equal(h.view(np.uint8), got.view(np.uint8)) else \
                "max |diff| %g" % float(np.abs(h.astype(np.float64) - got).max())
        print("%s output %s vs ORT: max %g LSB, %.2f%% equal (limits %g LSB, %.2f%%): %s; "
              "vs host baton run: %s" % (name, out["name"], stats["max_lsb"],
                                         100 * stats["equal"], max_lsb, 100 * min_equal,
                                         "ok" if ok else "FAIL", host))
        failures += 0 if ok else 1
    return 1 if failures else 0


def cmd_custom(args):
    work = os.path.join(args.build, "custom_op")
    if run([sys.executable, "-W", "ignore", os.path.join(args.example, "export_model.py"),
            work]).returncode != 0:
        sys.exit("cross_test: export_model.py failed")
    model = os.path.join(work, "model.onnx")
    op = "custom-op:com.example::MyOp"
    kernels = "kernels:" + ",".join(os.path.join(args.example, f)
                                    for f in ("firmware_kernels.cc", "my_op_kernel.cc"))
    x = "x=" + os.path.join(work, "input.npy")
    lines = ["custom_op %s %s %s %s %s" % (model, args.target_json, op, kernels, x)]
    if args.size_delta:
        lines.append("custom_op-nokernel %s %s %s %s" % (model, args.target_json, op, x))
    listing = os.path.join(args.build, "custom_op_images.txt")
    os.makedirs(args.build, exist_ok=True)
    with open(listing, "w") as f:
        f.write("\n".join(lines) + "\n")
    configure(args, args.define + ["BATON_HOST_TOOL=" + args.tool,
                                   "BATON_FIRMWARE_IMAGES=" + listing])
    build(args, ["fw-" + l.split()[0] for l in lines])  # each link runs the no-heap check
    elf = image_elf(args.build, "custom_op")
    if run([os.path.join(args.source, "tools", "check_no_heap.sh"), "--nm", args.nm,
            elf]).returncode != 0:
        return 1
    size = elf_size(args.size, elf)
    print("fw-custom_op.elf: text %(text)d data %(data)d bss %(bss)d" % size)
    if args.size_delta:
        base = elf_size(args.size, image_elf(args.build, "custom_op-nokernel"))
        print("custom op kernel (MyOp + baton_custom + registration): text %+d data %+d bss %+d"
              % tuple(size[k] - base[k] for k in ("text", "data", "bss")))
    log = run_firmware(args, "custom_op", elf)
    if log is None:
        return 1
    failures = 0
    # Torch's own output, and the host runner with the same kernel, same input.
    torch_dir = os.path.join(args.build, "torch-custom_op")
    shutil.rmtree(torch_dir, ignore_errors=True)
    os.makedirs(torch_dir)
    shutil.copy(os.path.join(work, "expected.npy"), os.path.join(torch_dir, "y.npy"))
    host_dir = os.path.join(args.build, "host-custom_op")
    shutil.rmtree(host_dir, ignore_errors=True)
    os.makedirs(host_dir)
    d = image_dir(args.build, "custom_op")
    if run([args.runner, os.path.join(d, "plan.baton"), os.path.join(d, "inputs", "x.npy"),
            os.path.join(host_dir, "y.npy")]).returncode != 0:
        print("cross_test: custom_op: %s failed" % args.runner)
        failures += 1
    for ref in (torch_dir, host_dir):
        compare = [sys.executable, os.path.join(HERE, "compare_outputs.py"), log, ref,
                   "--tolerance", str(args.tolerance)]
        if run(compare).returncode != 0:
            failures += 1
    return 1 if failures else 0


def cmd_firmware(args):
    build(args, [args.target])
    elf = os.path.join(args.build, "ports", "cortex-m", args.target + ".elf")
    return 0 if run_firmware(args, args.target, elf) is not None else 1


def cmd_ctest(args):
    cmd = ["ctest", "--test-dir", args.build, "--output-on-failure", "-j2"]
    if args.regex:
        cmd += ["-R", args.regex]
    env = dict(os.environ)
    if args.qemu_cpu:
        env["QEMU_CPU"] = args.qemu_cpu  # qemu-aarch64 (user mode) reads it
    proc = run(cmd, env=env)
    return proc.returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("build", "demo", "images"):
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
    images = sub.choices["images"]
    images.add_argument("--tool", required=True, help="host baton")
    images.add_argument("--cases", required=True, help="make_quant_models.py's output directory")
    images.add_argument("--target-json", required=True)
    images.add_argument("--assign", default="",
                        help="rules for the int8 images, comma-separated PATTERN=DEVICE")
    images.add_argument("--model", nargs="+", required=True)
    images.add_argument("--size", default="arm-none-eabi-size")
    images.add_argument("--size-report", help="write the size table as JSON here")
    images.add_argument("--float", action="store_true",
                        help="also plan and link each model's float image, for the size table "
                             "(not run; about a minute per board, so ctest leaves it out)")
    i8 = sub.add_parser("int8")
    i8.add_argument("--build", required=True)
    i8.add_argument("--cases", required=True)
    i8.add_argument("--model", required=True)
    i8.add_argument("--machine", required=True)
    i8.add_argument("--qemu", default="qemu-system-arm")
    i8.add_argument("--tool", required=True, help="host baton")
    i8.add_argument("--timeout", type=int, default=120)
    i8.add_argument("--allow-spread", action="store_true")
    cu = sub.add_parser("custom")
    for flag in ("--source", "--build", "--toolchain", "--tool", "--example", "--runner",
                 "--target-json", "--machine"):
        cu.add_argument(flag, required=True)
    cu.add_argument("-D", dest="define", action="append", default=[], metavar="K=V")
    cu.add_argument("--qemu", default="qemu-system-arm")
    cu.add_argument("--size", default="arm-none-eabi-size")
    cu.add_argument("--nm", default="arm-none-eabi-nm")
    cu.add_argument("--size-delta", action="store_true",
                    help="also link the plan without the kernels and print the size difference")
    cu.add_argument("--timeout", type=int, default=120)
    cu.add_argument("--tolerance", type=float, default=1e-5)
    fw = sub.add_parser("firmware")
    fw.add_argument("--build", required=True)
    fw.add_argument("--target", required=True)
    fw.add_argument("--machine", required=True)
    fw.add_argument("--qemu", default="qemu-system-arm")
    fw.add_argument("--timeout", type=int, default=120)
    ct = sub.add_parser("ctest")
    ct.add_argument("--build", required=True)
    ct.add_argument("-R", dest="regex", help="only the tests matching this regex")
    ct.add_argument("--qemu-cpu", help="QEMU_CPU for qemu-aarch64, e.g. cortex-a53 (no dot product)")
    args = parser.parse_args()
    return {"build": cmd_build, "demo": cmd_demo, "images": cmd_images, "int8": cmd_int8,
            "firmware": cmd_firmware, "custom": cmd_custom, "ctest": cmd_ctest}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
