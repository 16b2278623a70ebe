/* Kairos user library: fixed-width scalar types of the seL4 API (riscv64). */
#ifndef SEL4_SIMPLE_TYPES_H
#define SEL4_SIMPLE_TYPES_H

typedef signed char seL4_Int8;
typedef unsigned char seL4_Uint8;
typedef signed short seL4_Int16;
typedef unsigned short seL4_Uint16;
typedef signed int seL4_Int32;
typedef unsigned int seL4_Uint32;
typedef signed long seL4_Int64;
typedef unsigned long seL4_Uint64;

typedef seL4_Int8 seL4_Bool;
#define seL4_True 1
#define seL4_False 0

#define seL4_Null ((void *)0)

#define SEL4_WORD_IS_UINT64 1
#define _seL4_word_fmt l
#define SEL4_PRIu_word "lu"
#define SEL4_PRIx_word "lx"
#define SEL4_PRIi_word "li"
#define SEL4_PRId_word "ld"

#define LIBSEL4_BIT(n) (1ul << (n))
#define LIBSEL4_INLINE static inline
#define LIBSEL4_INLINE_FUNC static inline __attribute__((__unused__))

#endif /* SEL4_SIMPLE_TYPES_H */
