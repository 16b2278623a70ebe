/* The capability derivation tree and slot operations. (Minimal first version:
 * insertion, parenthood and finality; deletion and revocation grow here.) */
#include <cdt.h>
#include <objecttype.h>
#include <kernel.h>

bool cdt_is_parent_of(const cte_t *parent, const cte_t *child)
{
    if (!(parent->mdb.next & MDB_REVOCABLE))
        return false;
    if (!same_region_as(parent->cap, child->cap))
        return false;
    switch (cap_type(parent->cap)) {
    case CAP_ENDPOINT:
    case CAP_NOTIFICATION: {
        word_t badge = cap_badge(parent->cap);
        if (badge == 0)
            return true;
        return badge == cap_badge(child->cap) && !(child->mdb.next & MDB_FIRST_BADGED);
    }
    default:
        return true;
    }
}

bool cdt_has_children(const cte_t *slot)
{
    const cte_t *next = mdb_next(slot);
    return next && cdt_is_parent_of(slot, next);
}

void cdt_insert_new_cap(cte_t *parent, cte_t *dest, cap_t c)
{
    cte_t *next = mdb_next(parent);
    dest->cap = c;
    dest->mdb.prev = (word_t)parent;
    dest->mdb.next = (word_t)next | MDB_REVOCABLE | MDB_FIRST_BADGED;
    if (next)
        next->mdb.prev = (word_t)dest;
    parent->mdb.next = (word_t)dest | (parent->mdb.next & MDB_FLAGS);
}

bool cdt_is_final_cap(const cte_t *slot)
{
    const cte_t *prev = mdb_prev(slot);
    const cte_t *next = mdb_next(slot);
    bool prev_same = prev && same_object_as(prev->cap, slot->cap);
    bool next_same = next && same_object_as(slot->cap, next->cap);
    return !prev_same && !next_same;
}

void cte_delete_one(cte_t *slot)
{
    cte_t *prev = mdb_prev(slot);
    cte_t *next = mdb_next(slot);
    if (prev)
        prev->mdb.next = (word_t)next | (prev->mdb.next & MDB_FLAGS);
    if (next) {
        next->mdb.prev = (word_t)prev;
        /* A child that follows its parent inherits the first-badged mark. */
        if (slot->mdb.next & MDB_FIRST_BADGED)
            next->mdb.next |= MDB_FIRST_BADGED;
    }
    slot->cap = cap_null();
    slot->mdb.prev = 0;
    slot->mdb.next = 0;
}
