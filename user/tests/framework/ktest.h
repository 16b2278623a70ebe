/*
 * Kairos on-target test framework.
 *
 *     #include <ktest.h>
 *
 *     KTEST(ipc, call_reply) {
 *         KASSERT(x != 0);
 *         KASSERT_EQ(seL4_GetMR(0), 42);
 *     }
 *
 * Tests live in the ktest_table link section and run one after another
 * in link order (source order within a file).  A failing assertion ends
 * the current test at once (also from helper functions) and the runner
 * goes on with the next.  Output, one line per event:
 *
 *     ktest: <area>/<name>: RUN
 *     ktest: <area>/<name>: PASS
 *     ktest: <area>/<name>: FAIL <file>:<line>: <message>
 *     ...
 *     <N> passed, <N> failed
 *     kairos-result: PASS | kairos-result: FAIL (<reason>)
 *
 * Selection: the boot argument ktest=<pattern>[,<pattern>...] (from the
 * device tree's /chosen/bootargs; QEMU -append) runs only matching
 * tests: "area/name" exactly, "area/pre*" with a trailing wildcard, or
 * "area" alone for the whole area.
 */
#ifndef KTEST_H
#define KTEST_H

#include <stdbool.h>
#include <stdint.h>
#include <kairos/kairos.h>

typedef struct ktest {
    const char *area;
    const char *name;
    void (*fn)(void);
    const char *file;
    int line;
} ktest_t;

#define KTEST(area, name)                                                           \
    static void ktest_fn__##area##__##name(void);                                   \
    static const ktest_t ktest_desc__##area##__##name                               \
        __attribute__((used, section("ktest_table"), aligned(8))) = {               \
            #area, #name, ktest_fn__##area##__##name, __FILE__, __LINE__};          \
    static void ktest_fn__##area##__##name(void)

/* Fail the running test with a printf-style message; does not return. */
__attribute__((noreturn, format(printf, 3, 4))) void ktest_fail(const char *file, int line,
                                                                const char *fmt, ...);

__attribute__((noreturn)) void ktest_fail_eq(const char *file, int line, const char *op,
                                             const char *a_expr, const char *b_expr,
                                             uint64_t a, uint64_t b);

#define KASSERT(cond)                                                               \
    do {                                                                            \
        if (!(cond)) {                                                              \
            ktest_fail(__FILE__, __LINE__, "KASSERT(%s)", #cond);                   \
        }                                                                           \
    } while (0)

#define KASSERT_MSG(cond, ...)                                                      \
    do {                                                                            \
        if (!(cond)) {                                                              \
            ktest_fail(__FILE__, __LINE__, __VA_ARGS__);                            \
        }                                                                           \
    } while (0)

/* Compare two integer (or pointer) values as 64-bit words. */
#define KASSERT_EQ(a, b)                                                            \
    do {                                                                            \
        uint64_t ktest_a_ = (uint64_t)(a);                                          \
        uint64_t ktest_b_ = (uint64_t)(b);                                          \
        if (ktest_a_ != ktest_b_) {                                                 \
            ktest_fail_eq(__FILE__, __LINE__, "==", #a, #b, ktest_a_, ktest_b_);    \
        }                                                                           \
    } while (0)

#define KASSERT_NE(a, b)                                                            \
    do {                                                                            \
        uint64_t ktest_a_ = (uint64_t)(a);                                          \
        uint64_t ktest_b_ = (uint64_t)(b);                                          \
        if (ktest_a_ == ktest_b_) {                                                 \
            ktest_fail_eq(__FILE__, __LINE__, "!=", #a, #b, ktest_a_, ktest_b_);    \
        }                                                                           \
    } while (0)

/* Unconditional failure. */
#define KFAIL(...) ktest_fail(__FILE__, __LINE__, __VA_ARGS__)

/* The running test ("area/name"), for messages. */
const ktest_t *ktest_current(void);

/* Does "area/name" match a filter (the syntax of ktest=...)? */
bool ktest_filter_matches(const char *filter, const char *area, const char *name);

#endif /* KTEST_H */
