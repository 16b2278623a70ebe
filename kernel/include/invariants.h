/* The kernel invariant checker (check flavour only). After every system call
 * it walks every capability slot in the system and checks the derivation
 * tree and untyped memory; a violation halts the kernel with a report.
 * Slot storage (CNodes and TCBs) registers itself on creation and
 * unregisters on destruction so the checker can find every slot. */
#ifndef KAIROS_INVARIANTS_H
#define KAIROS_INVARIANTS_H

#include <config.h>
#include <object.h>

#if CONFIG_INVARIANT_CHECKS
void invariants_register_slots(cte_t *slots, word_t n);
void invariants_unregister_slots(cte_t *slots);
void invariants_check(const char *when);
/* Forget every registered slot array: the host fuzzer of the decode layer
 * (tests/host/fuzz) starts each input from a fresh boot state. */
void invariants_reset(void);
#else
static inline void invariants_register_slots(cte_t *slots, word_t n) { (void)slots; (void)n; }
static inline void invariants_unregister_slots(cte_t *slots) { (void)slots; }
static inline void invariants_check(const char *when) { (void)when; }
#endif

#endif
