#!/bin/sh
# Build the decode-layer fuzzer (tests/host/fuzz/fuzz_decode.c) with the
# kernel's sources: $1 = output binary, $2 = "fuzz" (libFuzzer, ASan, UBSan)
# or "cov" (the same sources with clang's coverage instrumentation and a
# main that runs the files given on the command line, for llvm-cov), or
# "selftest" (ASan and UBSan, a main that builds one hand-made state and
# runs the invariant checker on it).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=$1
mode=${2:-fuzz}
srcs="$here/fuzz_decode.c $root/kernel/object/cnode.c $root/kernel/kernel/cspace.c $root/kernel/kernel/cdt.c
      $root/kernel/object/objecttype.c $root/kernel/object/untyped.c $root/kernel/arch/riscv/object/objecttype.c
      $root/kernel/kernel/invariants.c"
flags="-std=c11 -O1 -g -Wall -Wextra -Werror -DKAIROS_FLAVOUR_CHECK -I$here/include -I$root/kernel/include
       -I$root/kernel/arch/riscv/include"
case $mode in
fuzz) exec clang $flags -fsanitize=address,undefined,fuzzer -fno-sanitize-recover=all $srcs -o "$out" ;;
selftest) exec clang $flags -fsanitize=address,undefined -fno-sanitize-recover=all -DINVARIANT_SELFTEST $srcs -o "$out" ;;
cov) exec clang $flags -fprofile-instr-generate -fcoverage-mapping -DFUZZ_STANDALONE_MAIN $srcs -o "$out" ;;
*) echo "build.sh: mode must be fuzz, cov or selftest" >&2; exit 2 ;;
esac
