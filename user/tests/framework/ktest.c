/*
 * Kairos on-target test runner: the main() of the ktest root task.
 */
#include "ktest.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "threads.h"

extern const ktest_t __start_ktest_table[];
extern const ktest_t __stop_ktest_table[];

#define KTEST_MAX 1024
#define KTEST_FILTER_MAX 256

static const ktest_t *order[KTEST_MAX];
static const ktest_t *current;
static jmp_buf failure_exit;

const ktest_t *ktest_current(void)
{
    return current;
}

void ktest_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    printf("ktest: %s/%s: FAIL %s:%d: ", current->area, current->name, file, line);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    longjmp(failure_exit, 1);
}

void ktest_fail_eq(const char *file, int line, const char *op, const char *a_expr,
                   const char *b_expr, uint64_t a, uint64_t b)
{
    ktest_fail(file, line, "KASSERT(%s %s %s): left 0x%llx (%lld), right 0x%llx (%lld)", a_expr,
               op, b_expr, (unsigned long long)a, (long long)a, (unsigned long long)b,
               (long long)b);
}

/* One pattern (no commas) against "area/name". */
static bool pattern_matches(const char *pat, size_t plen, const char *area, const char *name)
{
    char full[160];
    int n = snprintf(full, sizeof(full), "%s/%s", area, name);
    if (n < 0 || (size_t)n >= sizeof(full)) {
        return false;
    }
    if (plen > 0 && pat[plen - 1] == '*') {
        return strncmp(full, pat, plen - 1) == 0;
    }
    if (memchr(pat, '/', plen) == NULL) {
        /* "area" alone selects the whole area. */
        return strlen(area) == plen && strncmp(area, pat, plen) == 0;
    }
    return strlen(full) == plen && strncmp(full, pat, plen) == 0;
}

bool ktest_filter_matches(const char *filter, const char *area, const char *name)
{
    if (filter == NULL || filter[0] == '\0') {
        return true;
    }
    const char *p = filter;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        if (len > 0 && pattern_matches(p, len, area, name)) {
            return true;
        }
        if (end == NULL) {
            return false;
        }
        p = end + 1;
    }
}

/* Order: link order of files (first appearance in the table), then
 * source line.  The compiler is free to emit a file's tests in any
 * order, so the table is sorted rather than trusted. */
static size_t file_rank(const ktest_t *t)
{
    for (const ktest_t *u = __start_ktest_table; u < t; u++) {
        if (u->file == t->file || strcmp(u->file, t->file) == 0) {
            return (size_t)(u - __start_ktest_table);
        }
    }
    return (size_t)(t - __start_ktest_table);
}

static bool before(const ktest_t *a, const ktest_t *b)
{
    size_t ra = file_rank(a), rb = file_rank(b);
    return ra != rb ? ra < rb : a->line < b->line;
}

static size_t collect(void)
{
    size_t n = 0;
    for (const ktest_t *t = __start_ktest_table; t < __stop_ktest_table && n < KTEST_MAX; t++) {
        size_t i = n++;
        while (i > 0 && before(t, order[i - 1])) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = t;
    }
    return n;
}

static bool run_one(const ktest_t *t)
{
    current = t;
    printf("ktest: %s/%s: RUN\n", t->area, t->name);
    if (setjmp(failure_exit) != 0) {
        current = NULL;
        return false;
    }
    t->fn();
    if (!kairos_stack_intact()) {
        printf("ktest: %s/%s: FAIL %s:%d: stack overflow (64 KiB initial stack)\n", t->area,
               t->name, t->file, t->line);
        kairos_exit(false, "stack overflow");
    }
    printf("ktest: %s/%s: PASS\n", t->area, t->name);
    current = NULL;
    return true;
}

int main(void)
{
    static char filter[KTEST_FILTER_MAX];
    const char *args = kairos_bootargs();
    if (!kairos_arg_get(args, "ktest", filter, sizeof(filter))) {
        filter[0] = '\0';
    }

    size_t total = collect();
    size_t selected = 0;
    for (size_t i = 0; i < total; i++) {
        selected += ktest_filter_matches(filter, order[i]->area, order[i]->name);
    }
    printf("ktest: running %zu of %zu tests (filter \"%s\")\n", selected, total,
           filter[0] != '\0' ? filter : "*");

    unsigned passed = 0, failed = 0;
    const char *area = NULL;
    for (size_t i = 0; i < total; i++) {
        if (!ktest_filter_matches(filter, order[i]->area, order[i]->name)) {
            continue;
        }
        /* A new suite starts with nothing of the last one's made from the
         * pool (threads.h kt_suite_cleanup). */
        if (area != NULL && strcmp(area, order[i]->area) != 0 && !kt_suite_cleanup()) {
            printf("ktest: suite cleanup after %s failed\n", area);
            failed++;
        }
        area = order[i]->area;
        if (run_one(order[i])) {
            passed++;
        } else {
            failed++;
        }
    }

    printf("%u passed, %u failed\n", passed, failed);
    if (selected == 0) {
        kairos_exit(false, "no test matches the filter");
    }
    if (failed != 0) {
        static char reason[64];
        snprintf(reason, sizeof(reason), "%u test%s failed", failed, failed == 1 ? "" : "s");
        kairos_exit(false, reason);
    }
    kairos_exit(true, NULL);
}
