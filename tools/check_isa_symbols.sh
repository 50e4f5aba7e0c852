#!/usr/bin/env bash
# check_isa_symbols.sh [--nm NM] [--object OBJ]... LIBRARY
#
# Checks the per-ISA GEMM objects of libbaton_kernels.a (by default the x86-64
# ones, gemm_avx2.cc.o, gemm_avx512.cc.o, gemm_avx512vnni.cc.o; aarch64 builds
# name gemm_neon_dotprod.cc.o with --object; see gemm/gemm_isa.inc). Each may
# define exactly one external symbol, its isa_*::kImpl table. Any other
# external definition, and in particular a weak one (an inline function or
# template instance the linker may pick over the portable copy), could put
# AVX instructions on a path that runs on CPUs without them.
#
# Sanitizer builds: clang's -fsanitize=function (part of -fsanitize=undefined)
# adds weak typeinfo objects of function types (_ZTIF*, _ZTSF*, nm type V)
# to every object. They are data, so no AVX instruction can come with them:
# the check allows them and still rejects every other symbol.
#
# Exit status: 0 when clean, 1 on a stray symbol or a missing object, 2 on
# usage errors.
set -euo pipefail

nm_tool="${NM:-nm}"
lib=""
objects=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nm) nm_tool="$2"; shift 2 ;;
    --object) objects+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) lib="$1"; shift ;;
  esac
done
[[ -n "$lib" ]] || { echo "usage: check_isa_symbols.sh [--nm NM] [--object OBJ]... LIBRARY" >&2; exit 2; }
[[ ${#objects[@]} -gt 0 ]] || objects=(gemm_avx2.cc.o gemm_avx512.cc.o gemm_avx512vnni.cc.o)

status=0
for obj in "${objects[@]}"; do
  # "lib.a:member: address type name" for every external definition.
  defs=$("$nm_tool" -A --defined-only --extern-only "$lib" | awk -v o="$obj" -F: '$2 == o')
  if [[ -z "$defs" ]]; then
    echo "check_isa_symbols: $lib has no $obj (or it defines nothing)" >&2
    status=1
    continue
  fi
  ns=${obj%.cc.o}
  ns=isa_${ns#gemm_}
  while IFS= read -r line; do
    sym=${line##* }
    type=${line% *}
    type=${type##* }
    want="_ZN5baton7kernels${#ns}${ns}5kImplE"
    if [[ "$type" == "V" && "$sym" =~ ^_ZT[IS]F ]]; then
      continue  # typeinfo of a function type (-fsanitize=function): data
    fi
    if [[ "$sym" != "$want" ]]; then
      echo "check_isa_symbols: $obj defines $sym ($line); only $want is allowed" >&2
      status=1
    fi
  done <<< "$defs"
done
[[ $status -eq 0 ]] && echo "check_isa_symbols: per-ISA objects export only their kImpl"
exit $status
