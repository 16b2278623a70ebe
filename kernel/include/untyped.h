/* Untyped memory helpers for the rest of the kernel (kernel/object/untyped.c).
 * Untyped_Retype itself is reached through invoke_untyped
 * (invocation.h); object creation through create_object (objecttype.h). */
#ifndef KAIROS_UNTYPED_H
#define KAIROS_UNTYPED_H

#include <config.h>
#include <object.h>

#if CONFIG_INVARIANT_CHECKS
/* For the invariant checker: the bytes that the objects made from the
 * untyped in `slot` occupy, each object counted once however many caps name
 * it, and a child untyped counted whole (what was made from it lies inside
 * it). Never more than the untyped's watermark: objects come from below the
 * watermark and never overlap. Linear in the number of the untyped's
 * descendants. */
word_t untyped_used_bytes(const cte_t *slot);
#endif

#endif
