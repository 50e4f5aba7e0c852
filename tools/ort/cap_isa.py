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
ONNX Runtime build). x86-64 hosts only (elsewhere Node loads the package's
arm64 library, which this patch does not touch). Only MLAS is capped, and
only the low byte of XCR0: ONNX Runtime's own CPUID probe (used by a few
non-MLAS kernels, none on the float CNN path) still sees the whole CPU, and
on a CPU with AMX the avx2 copy keeps MLAS's AMX int8 GEMM (XCR0 bits 17-18).

The copy goes to DST (default: <SRC>-<cap>), built beside it and then renamed
into place, and is reused while its marker file matches: the cap, the imm8,
the install's library and the copy's patched library (re-hashed each time).
An existing DST without that marker is replaced only when it is empty. Prints
DST. As a module:
    import cap_isa; d = cap_isa.capped_copy("avx2")   # then BATON_ORT_DIR=d
"""
import argparse
import errno
import hashlib
import json
import os
import platform
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
# XCR0 bits kept of the low byte: x87, SSE, AVX, MPX (0-4), not the AVX-512
# states (5-7) / x87, SSE, MPX, not AVX (2) either.
CAPS = {"avx2": 0x1F, "sse": 0x1B}
MARKER = ".baton-cap.json"
# The cap ONNX Runtime gets beside each `baton run --isa` level (None: the
# install as it is), for the benchmark scripts' rows.
ISA_CAPS = {"auto": None, "avx512vnni": None, "avx512": None, "avx2": "avx2", "portable": "sse"}


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
    if platform.machine() not in ("x86_64", "AMD64"):
        raise CapError(f"x86-64 hosts only (this is {platform.machine()}): elsewhere the "
                       "package's own library for the host is loaded, not the patched x64 one")
    if cap not in CAPS:
        raise CapError(f"unknown cap {cap!r}; one of {', '.join(CAPS)}")
    src = os.path.abspath(src or ort_ref.ort_dir())
    dst = os.path.abspath(dst or f"{src.rstrip(os.sep)}-{cap}")
    if os.path.commonpath([src, dst]) in (src, dst):
        raise CapError(f"the copy {dst} and the install {src} must not contain each other")
    lib = os.path.join(src, LIBRARY)
    if not os.path.exists(lib):
        raise ort_ref.OrtNotInstalled(f"no {LIBRARY} in {src}; run tools/ort/install.sh")
    with open(lib, "rb") as f:
        original = f.read()
    patched = patch(original, cap)
    want = {"cap": cap, "imm8": CAPS[cap], "source_sha256": hashlib.sha256(original).hexdigest(),
            "patched_sha256": hashlib.sha256(patched).hexdigest()}
    out_rel = os.path.join(dst, LIBRARY)
    marker = os.path.join(dst, MARKER)
    if os.path.exists(marker):
        try:
            with open(marker) as f:
                have = json.load(f)
        except (OSError, ValueError):
            have = None
        package = os.path.join(dst, "node_modules", "onnxruntime-node", "package.json")
        if (have == want and os.path.exists(package) and os.path.exists(out_rel)
                and _sha256(out_rel) == want["patched_sha256"]):
            return dst
    elif os.path.exists(dst) and (not os.path.isdir(dst) or os.listdir(dst)):
        raise CapError(f"{dst} exists and is not a copy this script made ({MARKER} missing); "
                       "remove it or pass another --dst")

    def link_or_copy(s, d):
        try:
            os.link(s, d)
        except OSError:
            shutil.copy2(s, d)

    # Built beside DST, then renamed into place: a failed or concurrent run
    # never leaves a half-made copy behind a valid marker.
    tmp = f"{dst}.tmp-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        shutil.copytree(src, tmp, symlinks=True, copy_function=link_or_copy)
        out = os.path.join(tmp, LIBRARY)
        os.unlink(out)  # a hard link to the original: never write through it
        with open(out, "wb") as f:
            f.write(patched)
        shutil.copymode(lib, out)
        with open(os.path.join(tmp, MARKER), "w") as f:
            json.dump(want, f)
        if os.path.exists(dst):
            shutil.rmtree(dst)  # a stale copy (its marker checked above) or empty
        os.rename(tmp, dst)
    except OSError as e:
        # Another run renamed its copy into place first: keep that one.
        if e.errno not in (errno.EEXIST, errno.ENOTEMPTY) or not os.path.exists(marker):
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dst


def install_for_isa(isa):
    """The ONNX Runtime install to compare with Baton's `--isa isa`: the
    install itself, or its capped copy (made or reused). Raises CapError
    (an unknown level, or no copy possible: the reason), OrtNotInstalled."""
    if isa not in ISA_CAPS:
        raise CapError(f"no ONNX Runtime level for --isa {isa}; one of {', '.join(ISA_CAPS)}")
    cap = ISA_CAPS[isa]
    if cap is None:
        return ort_ref.ort_dir()
    try:
        return capped_copy(cap)
    except (OSError, ValueError) as e:
        raise CapError(f"cannot make the {cap} copy: {e}") from e


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cap", choices=sorted(CAPS))
    ap.add_argument("--src", help="the install to copy (default $BATON_ORT_DIR or build-ort)")
    ap.add_argument("--dst", help="where the copy goes (default SRC-CAP)")
    args = ap.parse_args(argv)
    try:
        print(capped_copy(args.cap, args.src, args.dst))
    except (CapError, ort_ref.OrtNotInstalled, OSError) as e:
        sys.exit(f"cap_isa.py: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
