/* SchedControl_ConfigureFlags: the only way to give a scheduling context
 * time. Checks in seL4's order (seL4's decodeSchedControl_ConfigureFlags);
 * the perform step is sched_context_configure (schedcontext.c). */
#include <invocation.h>
#include <schedcontext.h>
#include <thread.h>

/* ConfigureFlags, decoded: the context and its new parameters (µs). */
struct sched_control_op {
    struct sched_context *sc;
    word_t budget, period, extra_refills, badge, flags;
};

/* Validates the invocation and fills *op; changes nothing. */
static struct syscall_error decode_sched_control(const struct invocation *inv, struct sched_control_op *op)
{
    if (inv->label != INV_SCHED_CONTROL_CONFIGURE_FLAGS)
        return error0(ERR_ILLEGAL_OPERATION);
    /* seL4 checks the extra cap before the length. */
    if (inv->n_extra < 1 || inv->length < 5)
        return error0(ERR_TRUNCATED_MESSAGE);
    cap_t c = inv->extra[0];
    if (cap_type(c) != CAP_SCHED_CONTEXT)
        return error1(ERR_INVALID_CAPABILITY, 1);
    word_t budget = get_mr(inv->caller, 0);
    word_t period = get_mr(inv->caller, 1);
    word_t extra_refills = get_mr(inv->caller, 2);
    if (budget > REFILL_MAX_PERIOD_US || budget < REFILL_MIN_BUDGET_US)
        return range_error(REFILL_MIN_BUDGET_US, REFILL_MAX_PERIOD_US);
    if (period > REFILL_MAX_PERIOD_US || period < REFILL_MIN_BUDGET_US)
        return range_error(REFILL_MIN_BUDGET_US, REFILL_MAX_PERIOD_US);
    if (budget > period)
        return range_error(REFILL_MIN_BUDGET_US, period);
    /* extra_refills + 2 > the most this context may hold, written so a huge
     * extra_refills cannot wrap. seL4 takes the object's capacity; Kairos
     * also caps it at CONFIG_MAX_REFILLS and reports the range for that
     * bound, as seL4 would for an object of that capacity. */
    word_t max_refills = refill_max_for_size(cap_sched_context_size_bits(c));
    if (extra_refills > max_refills - REFILL_MIN_REFILLS)
        return range_error(0, max_refills - REFILL_MIN_REFILLS);
    struct sched_context *sc = sc_from_cap(c);
    /* Kairos: the release queue holds one thread per sporadic SC, up to
     * CONFIG_MAX_SPORADIC_SCS; one more sporadic SC is refused. */
    if (budget != period && !sc_waits_for_release(sc) && !sched_admit_sporadic())
        return error1(ERR_NOT_ENOUGH_MEMORY, 0);
    op->sc = sc;
    op->budget = budget;
    op->period = period;
    op->extra_refills = extra_refills;
    op->badge = get_mr(inv->caller, 3);
    op->flags = get_mr(inv->caller, 4);
    return no_error();
}

struct syscall_error invoke_sched_control(struct invocation *inv)
{
    struct sched_control_op op;
    struct syscall_error e = decode_sched_control(inv, &op);
    if (e.code != ERR_NONE)
        return e;
    /* Cannot fail. */
    sched_context_configure(op.sc, op.budget, op.period, op.extra_refills, op.badge, op.flags);
    return no_error();
}
