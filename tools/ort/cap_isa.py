#!/usr/bin/python3
"""A copy of the ONNX Runtime install whose MLAS kernels stop at a lower
instruction set: ONNX Runtime as it runs on a machine without AVX-512 (or
without AVX), measured on this one.

usage: cap_isa.py avx2|sse [--src DIR] [--dst DIR]

ONNX Runtime has no switch for this: MLAS, its CPU kernel library, picks its
kernels once, when the library loads, from CPUID and from XCR0 (which register
states the OS saves). This script copies the install (tools/ort/install.sh's
directory, $BATON_ORT_DIR or <repo>/build-ort; files hard-linked where it can)
and patches one instruction of the copy's libonnxruntime.so.1: in MLAS's
platform set-up, the `mov %eax,%eax` that follows `xgetbv` becomes
`and $IMM,%al`, so MLAS sees XCR0 without
  avx2: the AVX-512 states (bits 5-7): its AVX2+FMA kernels, as on a CPU
        without AVX-512;
  sse:  the AVX states too (bits 2, 5-7): its SSE kernels, as on a CPU
        without AVX.
(xgetbv clears the upper halves of RAX and RDX in 64-bit mode, so the replaced
zero-extension did nothing.) The instruction is found by its surrounding
bytes, which must occur exactly once; otherwise the script refuses (another
ONNX Runtime build). Only MLAS is capped: ONNX Runtime's own CPUID probe
(used by a few non-MLAS kernels, none on the float CNN path) still sees the
whole CPU.

The copy goes to DST (default: <SRC>-<cap>) and is reused when it is already
a patched copy of the same library. Prints DST. As a module:
    import cap_isa; d = cap_isa.capped_copy("avx2")   # then BATON_ORT_DIR=d
"""
import argparse
import hashlib
import json
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import ort_ref  # noqa: E402

LIBRARY = os.path.join("node_modules", "onnxruntime-node", "bin", "napi-v6", "linux", "x64",
                       "libonnxruntime.so.1")
# xor %ecx,%ecx; xgetbv; mov %eax,%eax; shl $32,%rdx; or %rax,%rdx; not %rax;
# mov %rdx,%r8: MLAS_PLATFORM's read of XCR0 (onnxruntime 1.30.0, x86-64).
# The other two xgetbv of the library (ORT's CPUID probe, cpuinfo) differ in
# the instructions around it.
SITE = bytes.fromhex("31c9" "0f01d0" "89c0" "48c1e220" "4809c2" "48f7d0" "4989d0")
MOV_OFFSET = 5  # where `mov %eax,%eax` (89 c0) starts inside SITE
# XCR0 bits kept: x87, SSE, AVX, MPX (0-4) / x87, SSE, MPX.
CAPS = {"avx2": 0x1F, "sse": 0x1B}
MARKER = ".baton-cap.json"


class CapError(RuntimeError):
    pass


def _sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def patch(data, cap):
    """Returns `data` (the library's bytes) with MLAS's XCR0 read capped."""
    if cap not in CAPS:
        raise CapError(f"unknown cap {cap!r}; one of {', '.join(CAPS)}")
    at = data.find(SITE)
    if at < 0 or data.find(SITE, at + 1) >= 0:
        raise CapError("MLAS's XCR0 read not found exactly once in libonnxruntime.so.1 "
                       f"({'absent' if at < 0 else 'ambiguous'}); this script knows "
                       "onnxruntime-node 1.30.0 on x86-64")
    out = bytearray(data)
    out[at + MOV_OFFSET:at + MOV_OFFSET + 2] = bytes([0x24, CAPS[cap]])  # and $imm8,%al
    return bytes(out)


def capped_copy(cap, src=None, dst=None):
    """Makes (or reuses) the capped copy of the install in `src`; returns its
    directory, for BATON_ORT_DIR. Raises CapError, ort_ref.OrtNotInstalled."""
    src = os.path.abspath(src or ort_ref.ort_dir())
    dst = os.path.abspath(dst or f"{src.rstrip(os.sep)}-{cap}")
    if dst == src:
        raise CapError("the capped copy cannot replace the install itself")
    lib = os.path.join(src, LIBRARY)
    if not os.path.exists(lib):
        raise ort_ref.OrtNotInstalled(f"no {LIBRARY} in {src}; run tools/ort/install.sh")
    want = {"cap": cap, "source_sha256": _sha256(lib)}
    marker = os.path.join(dst, MARKER)
    if os.path.exists(marker):
        with open(marker) as f:
            if json.load(f) == want:
                return dst
    with open(lib, "rb") as f:
        patched = patch(f.read(), cap)
    if os.path.exists(dst):
        shutil.rmtree(dst)

    def link_or_copy(s, d):
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)

    shutil.copytree(src, dst, symlinks=True, copy_function=link_or_copy)
    out = os.path.join(dst, LIBRARY)
    os.unlink(out)  # a hard link to the original: never write through it
    with open(out, "wb") as f:
        f.write(patched)
    shutil.copymode(lib, out)
    with open(marker, "w") as f:
        json.dump(want, f)
    return dst


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cap", choices=sorted(CAPS))
    ap.add_argument("--src", help="the install to copy (default $BATON_ORT_DIR or build-ort)")
    ap.add_argument("--dst", help="where the copy goes (default SRC-CAP)")
    args = ap.parse_args(argv)
    try:
        print(capped_copy(args.cap, args.src, args.dst))
    except (CapError, ort_ref.OrtNotInstalled) as e:
        sys.exit(f"cap_isa.py: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
