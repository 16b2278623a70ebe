#!/bin/sh
# Build the decode-purity harness (decode_pure.c): $1 = output binary.
# The kernel's object files (expose.c) and the lookup, derivation,
# message and ASID-table code they use, compiled for the host with ASan and UBSan; what
# only perform steps call stays undefined (a decoder calling it crashes).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
exec clang -std=c11 -O1 -g -Wall -Wextra -Werror -DKAIROS_FLAVOUR_RELEASE \
    -I"$here/include" -I"$root/tests/host/fuzz/include" -I"$root/kernel/include" -I"$root/kernel/arch/riscv/include" \
    -fsanitize=address,undefined -fno-sanitize-recover=all \
    "$here/decode_pure.c" "$here/expose.c" "$root/kernel/kernel/cspace.c" "$root/kernel/kernel/cdt.c" \
    "$root/kernel/object/objecttype.c" "$root/kernel/arch/riscv/object/objecttype.c" \
    "$root/kernel/kernel/message.c" "$root/kernel/arch/riscv/object/asid.c" -fno-pie -no-pie -Wl,--unresolved-symbols=ignore-all -o "$1"
