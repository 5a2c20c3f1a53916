#!/usr/bin/env bash
# A function with vague linkage (an inline function, or a template instantiation that does not
# name an instruction set) defined in a translation unit compiled for AVX2 or AVX-512 has copies
# in the baseline units too, and the linker keeps one of them for the whole program. If it kept
# the AVX-512 copy, a machine without AVX-512 would fault in code the dispatcher thought safe.
# The lane kernels are written to define no such function of their own (docs/ARCHITECTURE.md);
# xsimd defines a few (its trigonometric range reduction). This checks, in the linked program,
# that every such shared function holds no VEX- or EVEX-encoded instruction: the baseline copy.
#
# Usage: shared_symbols_are_baseline.sh PROGRAM OBJECT...  (the SIMD objects of the library)
set -uo pipefail
program=$1
shift
failures=0 checked=0
linked=$(mktemp)
trap 'rm -f "$linked"' EXIT
nm "$program" >"$linked"
for object in "$@"; do
  case "$object" in
    *avx512f*) isa=avx512f ;;
    *avx2*) isa=avx2 ;;
    *) continue ;;
  esac
  # Weak or global functions (W, T) whose demangled name does not mention the object's ISA.
  while read -r mangled; do
    demangled=$(c++filt "$mangled")
    [[ $demangled == *"$isa"* ]] && continue
    grep -q " [TtWw] $mangled\$" "$linked" || continue  # not linked into this program
    checked=$((checked + 1))
    if objdump -d --no-show-raw-insn "--disassemble=$mangled" "$program" |
      grep -E $'\t''v[a-z0-9]+ |%[yz]mm' >/dev/null; then
      echo "FAIL: $demangled (from $(basename "$object")) is linked as a copy built for $isa"
      failures=$((failures + 1))
    fi
  done < <(nm --defined-only "$object" | awk '$2 == "W" || $2 == "T" {print $3}')
done
echo "shared functions checked: $checked, built for a wider instruction set: $failures"
exit $((failures > 0))
