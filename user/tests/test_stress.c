/* Stress: thousands of random capability operations, valid and invalid,
 * mixed across object types (retype, copy, mint, move, mutate, rotate,
 * delete, revoke, and invocations with random labels and arguments on
 * whatever the slots hold), run in the check flavour where the kernel's
 * invariant checker runs after every system call. Then everything is revoked
 * and the untyped must retype whole again: no memory lost.
 *
 * Slots: 96 slots from the middle of the BootInfo's empty region (other
 * suites use its start and its upper quarter). Memory: the smallest RAM
 * untyped of at least 2^20 bytes. The generator is seeded, so a failure
 * replays exactly. */
#include <ktest.h>
#include <sel4/sel4.h>
#include <stdio.h>

#define ROOT seL4_CapInitThreadCNode
#define N_SLOTS 96
#define N_OPS 4000

static uint64_t rng_state;
static uint64_t rnd(void)
{
    /* xorshift64*: small, deterministic, good enough to pick operations */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}
static seL4_Word pick(seL4_Word n) { return (seL4_Word)(rnd() % n); }

static seL4_CPtr base;
static seL4_CPtr untyped;
static seL4_Word untyped_bits;

/* Mostly a slot of ours; sometimes an out-of-range or odd cptr. */
static seL4_CPtr any_slot(void)
{
    switch (pick(16)) {
    case 0: return pick(1ul << 13);        /* any root slot: mostly empty, some initial caps */
    case 1: return rnd();                  /* garbage cptr */
    default: return base + pick(N_SLOTS);
    }
}

static seL4_Word any_depth(void) { return pick(8) == 0 ? pick(70) : 64; }

static void find_untyped(void)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    untyped = 0;
    for (seL4_Word i = 0; i < bi->untyped.end - bi->untyped.start; i++) {
        const seL4_UntypedDesc *u = &bi->untypedList[i];
        if (!u->isDevice && u->sizeBits >= 20 && u->sizeBits <= 24 && (!untyped || u->sizeBits < untyped_bits)) {
            untyped = bi->untyped.start + i;
            untyped_bits = u->sizeBits;
        }
    }
}

static unsigned long outcomes[16]; /* by seL4_Error, 0 = success */

static void count(seL4_Word e) { outcomes[e < 16 ? e : 15]++; }

static void random_operation(void)
{
    seL4_CapRights_t rights = {{pick(16)}};
    switch (pick(12)) {
    case 0:
    case 1: {
        /* The invoked cap must resolve (a failed lookup of the invoked cap
         * is a cap fault that would suspend this thread); arguments may be
         * anything. */
        seL4_CPtr src = pick(3) ? untyped : base + pick(N_SLOTS);
        if (seL4_DebugCapIdentify(src) == 4) /* an endpoint: the Call would wait for ever (IPC) */
            src = untyped;
        count(seL4_Untyped_Retype(src, pick(12), pick(26), ROOT, 0, 0, any_slot() & (pick(4) ? ~0ul : 0xff),
                                  1 + pick(3)));
        break;
    }
    case 2:
        count(seL4_CNode_Copy(ROOT, any_slot(), any_depth(), ROOT, pick(4) ? any_slot() : untyped, any_depth(),
                              rights));
        break;
    case 3:
        count(seL4_CNode_Mint(ROOT, any_slot(), any_depth(), ROOT, any_slot(), any_depth(), rights,
                              pick(2) ? pick(5) : rnd()));
        break;
    case 4:
        count(seL4_CNode_Move(ROOT, base + pick(N_SLOTS), 64, ROOT, base + pick(N_SLOTS), any_depth()));
        break;
    case 5:
        count(seL4_CNode_Mutate(ROOT, base + pick(N_SLOTS), 64, ROOT, base + pick(N_SLOTS), any_depth(), rnd()));
        break;
    case 6:
        count(seL4_CNode_Rotate(ROOT, base + pick(N_SLOTS), 64, pick(3), ROOT, base + pick(N_SLOTS), any_depth(),
                                pick(3), ROOT, base + pick(N_SLOTS), 64));
        break;
    case 7:
        count(seL4_CNode_Delete(ROOT, base + pick(N_SLOTS), any_depth()));
        break;
    case 8:
        count(seL4_CNode_Revoke(ROOT, base + pick(N_SLOTS), any_depth()));
        break;
    default: {
        /* A random invocation on whatever a slot of ours holds: random label
         * and message words, no extra caps (so nothing of the root's own
         * address space or CSpace can be handed in). */
        seL4_CPtr target = base + pick(N_SLOTS);
        seL4_Word label = pick(48);
        if (label == 12 || label == 13) /* TCB Suspend/Resume of a fresh thread: harmless, but keep it rare */
            label = 0;
        for (int i = 0; i < 6; i++)
            seL4_SetMR(i, pick(2) ? pick(300) : rnd());
        seL4_MessageInfo_t info = seL4_MessageInfo_new(label, 0, 0, pick(7));
        if (seL4_DebugCapIdentify(target) == 4) {
            /* An endpoint: a Call would wait for a receiver for ever (IPC,
             * issue 5). NBSend is dropped when nobody waits. */
            seL4_NBSend(target, info);
            count(0);
            break;
        }
        count(seL4_MessageInfo_get_label(seL4_Call(target, info)));
        break;
    }
    }
}

KTEST(stress, random_capability_operations_lose_no_memory)
{
    seL4_BootInfo *bi = kairos_bootinfo();
    base = bi->empty.start + (bi->empty.end - bi->empty.start) / 2;
    for (seL4_Word i = 0; i < N_SLOTS; i++)
        KASSERT_EQ(seL4_DebugCapIdentify(base + i), 0);
    find_untyped();
    KASSERT_MSG(untyped != 0, "no RAM untyped of 2^20..2^24 bytes");
    rng_state = 0x6b616972 ^ untyped_bits; /* "kair" */
    printf("stress: %d random operations on slots [%lu, %lu) and untyped %lu (2^%lu bytes)\n", N_OPS,
           (unsigned long)base, (unsigned long)(base + N_SLOTS), (unsigned long)untyped,
           (unsigned long)untyped_bits);
    for (int op = 0; op < N_OPS; op++)
        random_operation();
    printf("stress: outcomes by seL4_Error:");
    for (int e = 0; e < 11; e++)
        printf(" %d:%lu", e, outcomes[e]);
    printf("\n");
    /* Both halves of the space were exercised: many operations succeeded
     * (objects really were made, copied, moved and deleted) and many were
     * refused with errors. */
    KASSERT(outcomes[0] >= N_OPS / 10);
    KASSERT(N_OPS - outcomes[0] >= N_OPS / 10);

    /* Everything made from the untyped goes with one revoke; caps that came
     * from elsewhere (copies of initial caps, moved or minted) go by delete. */
    KASSERT_EQ(seL4_CNode_Revoke(ROOT, untyped, 64), seL4_NoError);
    for (seL4_Word i = 0; i < N_SLOTS; i++)
        KASSERT_EQ(seL4_CNode_Delete(ROOT, base + i, 64), seL4_NoError);
    for (seL4_Word i = 0; i < N_SLOTS; i++)
        KASSERT_EQ(seL4_DebugCapIdentify(base + i), 0);
    /* No memory lost: the untyped retypes into one untyped of its full size. */
    KASSERT_EQ(seL4_Untyped_Retype(untyped, seL4_UntypedObject, untyped_bits, ROOT, 0, 0, base, 1), seL4_NoError);
    KASSERT_EQ(seL4_DebugCapIdentify(base), 2);
    KASSERT_EQ(seL4_CNode_Revoke(ROOT, untyped, 64), seL4_NoError);
    KASSERT_EQ(seL4_DebugCapIdentify(base), 0);
}
