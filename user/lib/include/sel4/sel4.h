/*
 * Kairos user library: the seL4 API (MCS, riscv64), umbrella header.
 *
 * Written for Kairos from the ABI facts of libsel4 (MCS riscv64); names follow seL4
 * so that seL4 programs compile unchanged against the parts covered.
 */
#ifndef SEL4_SEL4_H
#define SEL4_SEL4_H

#include <sel4/config.h>
#include <sel4/simple_types.h>
#include <sel4/types.h>
#include <sel4/errors.h>
#include <sel4/constants.h>
#include <sel4/invocation.h>
#include <sel4/bootinfo.h>
#include <sel4/functions.h>
#include <sel4/syscalls.h>
#include <sel4/faults.h>
#include <sel4/client.h>

#endif /* SEL4_SEL4_H */
