/* Message registers, invocation replies and the error words of a failed
 * invocation (message.h, invocation.h): the small library every object's
 * invocations use to read their arguments and answer. */
#include <arch/context.h>
#include <invocation.h>
#include <message.h>

word_t syscall_error_words[SYSCALL_ERROR_MAX_WORDS];
word_t syscall_error_length;

word_t get_mr_from_buffer(struct tcb *t, word_t i)
{
    word_t *buf = ipc_buffer_kptr(t);
    return buf ? buf[BUF_MSG + i] : 0;
}

void set_mr(struct tcb *t, word_t i, word_t v)
{
    if (i < NUM_MSG_REGISTERS) {
        t->ctx.x[REG_A2 + i] = v;
        return;
    }
    word_t *buf = ipc_buffer_kptr(t);
    if (buf)
        buf[BUF_MSG + i] = v;
}

/* The reply length: at most the register words without an IPC buffer. */
static word_t clamp_length(struct tcb *t, word_t n)
{
    return (n > NUM_MSG_REGISTERS && !ipc_buffer_kptr(t)) ? NUM_MSG_REGISTERS : n;
}

void reply_success(struct tcb *t, word_t n)
{
    t->ctx.x[REG_A0] = 0;
    t->ctx.x[REG_A1] = msginfo_new(0, 0, 0, clamp_length(t, n));
}

void reply_error(struct tcb *t, struct syscall_error e)
{
    /* Read once into a local: set_mr's stores could alias the global as far
     * as the compiler knows, and a bound re-read in every iteration is one
     * the WCET analysis cannot see. The error writers never exceed the
     * maximum; the clamp states it in the code. */
    word_t n = syscall_error_length;
    if (n > SYSCALL_ERROR_MAX_WORDS)
        n = SYSCALL_ERROR_MAX_WORDS;
    for (word_t i = 0; i < n; i++)
        set_mr(t, i, syscall_error_words[i]);
    t->ctx.x[REG_A0] = 0;
    t->ctx.x[REG_A1] = msginfo_new(e.code, 0, 0, clamp_length(t, n));
}

struct syscall_error failed_lookup_error(bool source, const struct lookup_failure *f)
{
    struct syscall_error e = {ERR_FAILED_LOOKUP};
    syscall_error_length = 2;
    syscall_error_words[0] = source;
    syscall_error_words[1] = (word_t)f->type + 1;
    switch (f->type) {
    case LOOKUP_INVALID_ROOT:
        break;
    case LOOKUP_MISSING_CAPABILITY:
        syscall_error_words[2] = f->bits_left;
        syscall_error_length = 3;
        break;
    case LOOKUP_DEPTH_MISMATCH:
        syscall_error_words[2] = f->bits_left;
        syscall_error_words[3] = f->bits_found;
        syscall_error_length = 4;
        break;
    case LOOKUP_GUARD_MISMATCH:
        syscall_error_words[2] = f->bits_left;
        syscall_error_words[3] = f->guard_found;
        syscall_error_words[4] = f->bits_found;
        syscall_error_length = 5;
        break;
    }
    return e;
}
