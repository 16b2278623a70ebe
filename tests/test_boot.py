"""Boot protocol tests: plain root tasks built without the Kairos runtime, bad
boot inputs, and user faults. Each boots QEMU with a timeout through the same
runner as `kairos run`."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from conftest import compile_plain
from kairos.runner import run

PRELUDE = r"""
static void put(char c) {
    register long a0 asm("a0") = c; register long a7 asm("a7") = -12;
    asm volatile("ecall" :: "r"(a0), "r"(a7) : "memory");
}
static void puts_(const char *s) { while (*s) put(*s++); }
static void halt(void) {
    register long a7 asm("a7") = -14;
    asm volatile("ecall" :: "r"(a7) : "memory");
    for (;;) {}
}
static void puthex(unsigned long v) {
    puts_("0x");
    for (int i = 60; i >= 0; i -= 4) put("0123456789abcdef"[(v >> i) & 15]);
}
"""

HELLO = PRELUDE + r"""
void _start(void) { puts_("plain root task says hello\n"); halt(); }
"""


def boot(kernel: Path, elf: Path | None, **kw):
    kw.setdefault("timeout", 30)
    return run(elf, kernel=kernel, **kw)


def test_plain_gcc_root_task_prints_and_halts(debug_kernel, cross_gcc, tmp_path):
    elf = compile_plain(tmp_path, "hello", HELLO)
    r = boot(debug_kernel, elf, expect=r"^plain root task says hello$")
    assert r.passed, r.output
    assert "halting" not in r.output or r.output.index("hello") < r.output.index("halting")


def test_debug_halt_powers_qemu_off(debug_kernel, cross_gcc, tmp_path):
    elf = compile_plain(tmp_path, "hello", HELLO)
    r = boot(debug_kernel, elf, expect=r"debug halt requested by thread \"rootserver\"")
    assert r.passed, r.output


def test_registers_at_entry_follow_sel4(debug_kernel, cross_gcc, tmp_path):
    # a0 = BootInfo (the page after the IPC buffer, after the image), every other register 0.
    src = PRELUDE + r"""
    extern char _end[];
    void __attribute__((naked)) _start(void) {
        asm volatile(
            "mv s0, a0\n"
            "or t0, sp, gp\n or t0, t0, tp\n or t0, t0, ra\n or t0, t0, a1\n or t0, t0, a7\n"
            "or t0, t0, s11\n or t0, t0, t6\n"
            "mv a0, s0\n mv a1, t0\n j cmain\n");
    }
    char stack[4096] __attribute__((aligned(16)));
    void cmain2(unsigned long bi, unsigned long others) {
        unsigned long image_end = ((unsigned long)_end + 4095) & ~4095ul;
        puts_("bootinfo "); puthex(bi); puts_(" expected "); puthex(image_end + 4096);
        puts_(others ? " regs-nonzero\n" : " regs-zero\n");
        halt();
    }
    void __attribute__((naked)) cmain(void) {
        asm volatile("la sp, stack + 4096\n j cmain2\n");
    }
    """
    elf = compile_plain(tmp_path, "regs", src)
    r = boot(debug_kernel, elf, expect=r"regs-(zero|nonzero)")
    assert r.passed, r.output
    line = next(l for l in r.lines if l.startswith("bootinfo "))
    parts = line.split()
    assert parts[1] == parts[3], line
    assert parts[4] == "regs-zero", line


def test_user_page_fault_is_reported_without_kernel_crash(debug_kernel, cross_gcc, tmp_path):
    src = PRELUDE + r"""
    void _start(void) {
        puts_("about to fault\n");
        *(volatile long *)0x12345678 = 1;
        puts_("survived?\n");
        halt();
    }
    """
    elf = compile_plain(tmp_path, "pf", src)
    r = boot(debug_kernel, elf, expect=r"no fault handler: thread suspended", timeout=20)
    assert r.passed, r.output
    assert 'KAIROS FAULT: thread "rootserver": VM fault (store)' in r.output
    assert "address 0x0000000012345678" in r.output
    assert "survived" not in r.output
    assert "PANIC" not in r.output


def test_illegal_instruction_is_reported(debug_kernel, cross_gcc, tmp_path):
    src = PRELUDE + r"""
    void _start(void) {
        puts_("about to execute an illegal instruction\n");
        asm volatile(".word 0");
        halt();
    }
    """
    elf = compile_plain(tmp_path, "ill", src)
    r = boot(debug_kernel, elf, expect=r"no fault handler: thread suspended", timeout=20)
    assert r.passed, r.output
    assert "user exception (illegal instruction, scause 2)" in r.output


def test_unknown_syscall_and_send_ipi_fault(debug_kernel, cross_gcc, tmp_path):
    src = PRELUDE + r"""
    void _start(void) {
        register long a7 asm("a7") = -18;  /* DebugSendIPI: unknown on one core */
        asm volatile("ecall" :: "r"(a7) : "memory");
        halt();
    }
    """
    elf = compile_plain(tmp_path, "ipi", src)
    r = boot(debug_kernel, elf, expect=r"no fault handler", timeout=20)
    assert r.passed, r.output
    assert "unknown system call (number -18)" in r.output


def test_segments_sharing_a_page_and_large_alignment_load(debug_kernel, cross_gcc, tmp_path):
    src = PRELUDE + r"""
    static const char message[] = "rodata ok";
    char data_bytes[6] = "data!";
    long zeroes[2000];
    void _start(void) {
        int ok = data_bytes[0] == 'd' && data_bytes[4] == '!';
        for (int i = 0; i < 2000; i++) ok &= zeroes[i] == 0;
        zeroes[1999] = 5;
        puts_(message); puts_(ok ? " all-ok\n" : " BAD\n");
        halt();
    }
    """
    for flags in ([], ["-Wl,-z,max-page-size=0x10000"], ["-Wl,-N"]):
        elf = compile_plain(tmp_path, "layout", src, *flags)
        r = boot(debug_kernel, elf, expect=r"all-ok|BAD", timeout=20)
        assert r.passed and "all-ok" in r.output, (flags, r.output)


# ---- bad boot input: a clear message and a clean halt, never a hang ----

def expect_boot_failure(kernel: Path, elf: Path | None, message: str) -> None:
    r = boot(kernel, elf, expect=r"kairos: boot failed", timeout=20)
    assert r.passed, r.output
    assert message in r.output, r.output


def test_no_initrd(debug_kernel):
    expect_boot_failure(debug_kernel, None, "no root task")


def test_initrd_not_an_elf(debug_kernel, tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"this is not an ELF file at all" * 10)
    expect_boot_failure(debug_kernel, junk, "root task ELF")


def test_truncated_elf(debug_kernel, cross_gcc, tmp_path):
    elf = compile_plain(tmp_path, "hello", HELLO)
    data = elf.read_bytes()
    cut = tmp_path / "cut.elf"
    cut.write_bytes(data[: len(data) // 3 if len(data) > 3000 else 200])
    expect_boot_failure(debug_kernel, cut, "root task ELF")


def test_wrong_architecture_elf(debug_kernel, tmp_path):
    elf = compile_plain(tmp_path, "hello", HELLO)
    data = bytearray(elf.read_bytes())
    struct.pack_into("<H", data, 18, 62)  # EM_X86_64
    bad = tmp_path / "x86.elf"
    bad.write_bytes(bytes(data))
    expect_boot_failure(debug_kernel, bad, "root task ELF")


def test_position_independent_elf(debug_kernel, cross_gcc, tmp_path):
    # The bare-metal toolchain cannot link a PIE, so mark a valid ELF as ET_DYN:
    # the kernel must refuse it on the type alone.
    elf = compile_plain(tmp_path, "pie", HELLO)
    data = bytearray(elf.read_bytes())
    struct.pack_into("<H", data, 16, 3)  # e_type = ET_DYN
    pie = tmp_path / "pie.elf"
    pie.write_bytes(bytes(data))
    expect_boot_failure(debug_kernel, pie, "ET_DYN")


def test_segment_above_user_top(debug_kernel, cross_gcc, tmp_path):
    elf = compile_plain(tmp_path, "high", HELLO, "-Wl,-Ttext=0x4000000000")
    expect_boot_failure(debug_kernel, elf, "root task ELF")


def test_ipc_buffer_and_bootinfo_would_cross_user_top(debug_kernel, cross_gcc, tmp_path):
    # The image itself ends below seL4_UserTop (0x3ffffff000), the IPC buffer
    # and BootInfo pages after it do not.
    elf = compile_plain(tmp_path, "edge", HELLO, "-Wl,-Ttext=0x3fffffd000", "-Wl,-N")
    expect_boot_failure(debug_kernel, elf, "seL4_UserTop")


def test_overlapping_segments(debug_kernel, cross_gcc, tmp_path):
    src = PRELUDE + r"""
    long big[4096] = {1};
    void _start(void) { puts_("x"); halt(); }
    """
    elf = compile_plain(tmp_path, "ovl", src)
    data = bytearray(elf.read_bytes())
    phoff = struct.unpack_from("<Q", data, 32)[0]
    phnum = struct.unpack_from("<H", data, 56)[0]
    loads = [i for i in range(phnum) if struct.unpack_from("<I", data, phoff + 56 * i)[0] == 1]
    assert len(loads) >= 2
    first, second = loads[0], loads[1]
    vaddr0 = struct.unpack_from("<Q", data, phoff + 56 * first + 16)[0]
    for off in (16, 24):  # p_vaddr, p_paddr of the second load: on top of the first
        struct.pack_into("<Q", data, phoff + 56 * second + off, vaddr0)
    bad = tmp_path / "overlap.elf"
    bad.write_bytes(bytes(data))
    expect_boot_failure(debug_kernel, bad, "overlap")
