#!/usr/bin/env bash
# Install what building and testing Kairos needs, if it is missing. Idempotent:
# a second run changes nothing and takes a second. Debian packages (run as
# root) and a Python virtual environment in .venv with the tools package.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v riscv64-unknown-elf-gcc >/dev/null || need_apt+=(gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf)
command -v qemu-system-riscv64 >/dev/null || need_apt+=(qemu-system-misc)
[ -e /usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs ] || [ -e /usr/lib/picolibc/riscv64-unknown-elf/lib/picolibc.specs ] \
    || dpkg -s picolibc-riscv64-unknown-elf >/dev/null 2>&1 || need_apt+=(picolibc-riscv64-unknown-elf)
command -v dtc >/dev/null || need_apt+=(device-tree-compiler)
command -v spin >/dev/null || need_apt+=(spin)  # model checker for kairos ta
# Frama-C/WP with Why3 and CVC4: proofs of the generated scheduler code (make prove-tatoc).
command -v frama-c >/dev/null && command -v why3 >/dev/null && command -v cvc4 >/dev/null || need_apt+=(frama-c-base why3 cvc4)
command -v python3 >/dev/null || need_apt+=(python3 python3-venv)
# Host fuzzing of the decode layer (tests/test_host_fuzz.py): clang with
# libFuzzer (its runtime is in libclang-rt-14-dev) and llvm-cov.
command -v clang >/dev/null || need_apt+=(clang)
ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || need_apt+=(libclang-rt-14-dev)
command -v llvm-cov >/dev/null && command -v llvm-profdata >/dev/null || need_apt+=(llvm)
# Frama-C/WP proofs (make prove, docs/proofs.md): Frama-C and the provers
# it reaches through why3.
command -v frama-c >/dev/null || need_apt+=(frama-c-base)
command -v why3 >/dev/null || need_apt+=(why3)
command -v cvc4 >/dev/null || need_apt+=(cvc4)
command -v z3 >/dev/null || need_apt+=(z3)

if [ ${#need_apt[@]} -gt 0 ]; then
    echo "bootstrap: installing ${need_apt[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

stamp=.venv/.kairos-installed
# The test dependencies (tools[dev]) include pytest-xdist, which `make test`
# needs to run the suite on every core; a venv made before it was added lacks it.
if [ ! -x .venv/bin/python ] || [ ! -e "$stamp" ] || [ tools/pyproject.toml -nt "$stamp" ] \
    || ! .venv/bin/python -c 'import xdist' 2>/dev/null; then
    echo "bootstrap: setting up the Python environment in .venv"
    [ -x .venv/bin/python ] || python3 -m venv .venv
    .venv/bin/pip install -q --upgrade pip >/dev/null
    .venv/bin/pip install -q -e 'tools[dev]'
    touch "$stamp"
fi
