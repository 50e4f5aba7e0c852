#!/usr/bin/env bash
# check_no_heap.sh [--nm NM] FILE...
#
# Proves that runtime libraries and firmware images use no heap, no C++
# exceptions and no RTTI. FILE may be a static library (.a), an object or a
# linked ELF. Every symbol is checked, referenced (nm type U) or defined:
#
#   heap        malloc free calloc realloc memalign aligned_alloc posix_memalign
#               valloc pvalloc, their newlib _r variants, sbrk/_sbrk/_sbrk_r
#   new/delete  operator new/new[]/delete/delete[] (_Znw* _Zna* _Zdl* _Zda*)
#   C++ ABI     __cxa_* (pure_virtual, guard_*, throw, allocate_exception,
#               atexit, begin_catch, ...), atexit, __register_exitproc
#   exceptions  __gxx_personality*, _Unwind_*, __aeabi_unwind_cpp_pr*,
#               std::__throw_* (_ZSt*__throw_*), std::terminate
#   RTTI        typeinfo and typeinfo names (_ZTI*, _ZTS*)
#
# Exit status: 0 when clean, 1 on any hit (each listed as file:member: sym),
# 2 on usage errors. NM defaults to $NM, then arm-none-eabi-nm, then nm.
set -euo pipefail

nm_tool="${NM:-}"
files=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nm) nm_tool="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) files+=("$1"); shift ;;
  esac
done
if [[ ${#files[@]} -eq 0 ]]; then
  echo "usage: check_no_heap.sh [--nm NM] FILE..." >&2
  exit 2
fi
if [[ -z "$nm_tool" ]]; then
  if command -v arm-none-eabi-nm >/dev/null 2>&1; then nm_tool=arm-none-eabi-nm; else nm_tool=nm; fi
fi

forbidden='^('
forbidden+='malloc|free|calloc|realloc|memalign|aligned_alloc|posix_memalign|valloc|pvalloc'
forbidden+='|_malloc_r|_free_r|_calloc_r|_realloc_r|_memalign_r|sbrk|_sbrk|_sbrk_r'
forbidden+='|_Zn[wa].*|_Zd[la].*'
forbidden+='|__cxa_.*|atexit|__register_exitproc'
forbidden+='|__gxx_personality.*|_Unwind_.*|__aeabi_unwind_cpp_pr.*'
forbidden+='|_ZSt[0-9]+__throw_.*|_ZSt9terminatev'
forbidden+='|_ZTI.*|_ZTS.*'
forbidden+=')$'

status=0
for f in "${files[@]}"; do
  if [[ ! -f "$f" ]]; then
    echo "check_no_heap: $f: no such file" >&2
    exit 2
  fi
  # -A: prefix every line with file[:member]. The symbol is the last field,
  # its type the one before it (undefined symbols have no address).
  if ! out=$("$nm_tool" -A "$f" 2>&1); then
    echo "check_no_heap: $nm_tool failed on $f: $out" >&2
    exit 2
  fi
  hits=$(awk -v re="$forbidden" '
    NF >= 2 {
      sym = $NF; type = $(NF - 1); where = $1
      sub(/:[0-9a-fA-F]*$/, "", where)  # drop ":" or ":<address>"
      if (sym ~ re) printf "  %s %s %s\n", where, (type == "U" ? "references" : "defines"), sym
    }' <<<"$out" | sort -u)
  if [[ -n "$hits" ]]; then
    echo "check_no_heap: FAIL: $f uses the heap, exceptions or RTTI:"
    echo "$hits"
    status=1
  else
    echo "check_no_heap: OK: $f"
  fi
done
exit $status
