/* The seL4 MCS riscv64 user ABI as seen from inside the kernel: the numbers user
 * programs depend on (libsel4's generated headers for an MCS, non-SMP riscv64
 * build). Kernel-side names; the user library has its own header with
 * seL4's names. The system-call numbers are shared with it (uapi/). */
#ifndef KAIROS_ABI_H
#define KAIROS_ABI_H

#include <types.h>
#include <uapi/kairos/debug_calls.h>
#include <uapi/kairos/sel4_syscalls.h>

/* seL4_Error. */
enum error_code {
    ERR_NONE = 0,
    ERR_INVALID_ARGUMENT = 1,
    ERR_INVALID_CAPABILITY = 2,
    ERR_ILLEGAL_OPERATION = 3,
    ERR_RANGE_ERROR = 4,
    ERR_ALIGNMENT_ERROR = 5,
    ERR_FAILED_LOOKUP = 6,
    ERR_TRUNCATED_MESSAGE = 7,
    ERR_DELETE_FIRST = 8,
    ERR_REVOKE_FIRST = 9,
    ERR_NOT_ENOUGH_MEMORY = 10,
};

/* Object types for Untyped_Retype. */
enum object_type {
    OBJ_UNTYPED = 0,
    OBJ_TCB = 1,
    OBJ_ENDPOINT = 2,
    OBJ_NOTIFICATION = 3,
    OBJ_CNODE = 4,
    OBJ_SCHED_CONTEXT = 5,
    OBJ_REPLY = 6,
    OBJ_GIGA_PAGE = 7,
    OBJ_SMALL_PAGE = 8,
    OBJ_LARGE_PAGE = 9,
    OBJ_PAGE_TABLE = 10,
    OBJ_TYPE_COUNT = 11,
};

/* Object sizes (log2 bytes). */
#define TCB_BITS 11
#define ENDPOINT_BITS 4
#define NOTIFICATION_BITS 6
#define REPLY_BITS 5
#define MIN_SCHED_CONTEXT_BITS 7
#define SLOT_BITS 5
#define PAGE_BITS 12
#define LARGE_PAGE_BITS 21
#define HUGE_PAGE_BITS 30
#define PAGE_TABLE_BITS 12
#define ASID_POOL_BITS 12
#define ASID_POOL_INDEX_BITS 9
#define NUM_ASID_POOLS_BITS 7
#define MIN_UNTYPED_BITS 4
#define MAX_UNTYPED_BITS 38
#define IPC_BUFFER_SIZE_BITS 10
#define REFILL_SIZE_BYTES 16

#define USER_TOP 0x3ffffff000ul
#define MSG_MAX_LENGTH 120
#define MSG_MAX_EXTRA_CAPS 3
#define NUM_MSG_REGISTERS 4
#define MAX_PRIO 255

/* Initial CNode slots of the root task. */
enum initial_slot {
    SLOT_NULL = 0,
    SLOT_INIT_TCB = 1,
    SLOT_INIT_CNODE = 2,
    SLOT_INIT_VSPACE = 3,
    SLOT_IRQ_CONTROL = 4,
    SLOT_ASID_CONTROL = 5,
    SLOT_INIT_ASID_POOL = 6,
    SLOT_BOOTINFO_FRAME = 9,
    SLOT_INIT_IPC_BUFFER = 10,
    SLOT_DOMAIN = 11,
    SLOT_INIT_SC = 14,
    NUM_INITIAL_CAPS = 16,
};

/* Extra BootInfo record ids. */
#define BOOTINFO_HEADER_PADDING 0
#define BOOTINFO_HEADER_FDT 6

/* The message info word: label 52 | capsUnwrapped 3 | extraCaps 2 | length 7. */
static inline word_t msginfo_new(word_t label, word_t unwrapped, word_t extra, word_t length)
{
    return (label << 12) | ((unwrapped & 7ul) << 9) | ((extra & 3ul) << 7) | (length & 0x7ful);
}
static inline word_t msginfo_label(word_t w) { return w >> 12; }
static inline word_t msginfo_unwrapped(word_t w) { return (w >> 9) & 7ul; }
static inline word_t msginfo_extra_caps(word_t w) { return (w >> 7) & 3ul; }
static inline word_t msginfo_length(word_t w)
{
    word_t len = w & 0x7ful;
    return len > MSG_MAX_LENGTH ? MSG_MAX_LENGTH : len; /* seL4 clamps, not rejects */
}

/* Fault labels. */
enum fault_label {
    FAULT_NULL = 0,
    FAULT_CAP = 1,
    FAULT_UNKNOWN_SYSCALL = 2,
    FAULT_USER_EXCEPTION = 3,
    FAULT_TIMEOUT = 5,
    FAULT_VM = 6,
};

/* BootInfo layout (libsel4's seL4_BootInfo): written field by field by boot.c. */
struct slot_region {
    word_t start, end;
};
struct untyped_desc {
    word_t paddr;
    u8 size_bits;
    u8 is_device;
    u8 padding[6];
};
struct bootinfo {
    word_t extra_len;
    word_t node_id;
    word_t num_nodes;
    word_t num_io_pt_levels;
    word_t ipc_buffer;
    struct slot_region empty;
    struct slot_region shared_frames;
    struct slot_region user_image_frames;
    struct slot_region user_image_paging;
    struct slot_region io_space_caps;
    struct slot_region extra_bi_pages;
    word_t init_thread_cnode_size_bits;
    word_t init_thread_domain;
    struct slot_region schedcontrol;
    struct slot_region untyped;
    struct untyped_desc untyped_list[230];
};
_Static_assert(sizeof(struct bootinfo) == 3864, "seL4_BootInfo is 3864 bytes");
_Static_assert(__builtin_offsetof(struct bootinfo, untyped_list) == 184, "untypedList at 184");
_Static_assert(__builtin_offsetof(struct bootinfo, schedcontrol) == 152, "schedcontrol at 152");

struct bootinfo_header {
    word_t id;
    word_t len;
};

/* IPC buffer: tag, msg[120], userData, caps_or_badges[3], receive path. */
struct ipc_buffer {
    word_t tag;
    word_t msg[MSG_MAX_LENGTH];
    word_t user_data;
    word_t caps_or_badges[MSG_MAX_EXTRA_CAPS];
    word_t receive_cnode;
    word_t receive_index;
    word_t receive_depth;
};
_Static_assert(sizeof(struct ipc_buffer) == 1024, "seL4_IPCBuffer is 1024 bytes");

/* The same layout as word offsets, for code that indexes the buffer as an
 * array of words (the kernel maps it as one): the only place they are
 * spelled. */
#define BUF_MSG 1             /* msg[0] */
#define BUF_CAPS 122          /* caps_or_badges[0] */
#define BUF_RECEIVE_CNODE 125
#define BUF_RECEIVE_INDEX 126
#define BUF_RECEIVE_DEPTH 127
#define BUF_WORDS 128
_Static_assert(__builtin_offsetof(struct ipc_buffer, msg) == BUF_MSG * sizeof(word_t), "msg at word 1");
_Static_assert(__builtin_offsetof(struct ipc_buffer, caps_or_badges) == BUF_CAPS * sizeof(word_t),
               "caps_or_badges at word 122");
_Static_assert(__builtin_offsetof(struct ipc_buffer, receive_cnode) == BUF_RECEIVE_CNODE * sizeof(word_t),
               "receiveCNode at word 125");
_Static_assert(__builtin_offsetof(struct ipc_buffer, receive_index) == BUF_RECEIVE_INDEX * sizeof(word_t),
               "receiveIndex at word 126");
_Static_assert(__builtin_offsetof(struct ipc_buffer, receive_depth) == BUF_RECEIVE_DEPTH * sizeof(word_t),
               "receiveDepth at word 127");
_Static_assert(sizeof(struct ipc_buffer) == BUF_WORDS * sizeof(word_t), "128 words");

#endif
