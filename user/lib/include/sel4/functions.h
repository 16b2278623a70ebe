/*
 * Kairos user library: access to the calling thread's IPC buffer.
 *
 * The buffer's address is kept in the ordinary global __sel4_ipc_buffer
 * (not thread-local); the root-task runtime sets it from
 * BootInfo->ipcBuffer before main().  A program that starts further
 * threads sharing this image must give each its own copy of this
 * library's state or switch the pointer itself.
 */
#ifndef SEL4_FUNCTIONS_H
#define SEL4_FUNCTIONS_H

#include <sel4/types.h>

extern seL4_IPCBuffer *__sel4_ipc_buffer;

LIBSEL4_INLINE_FUNC void seL4_SetIPCBuffer(seL4_IPCBuffer *ipc_buffer)
{
    __sel4_ipc_buffer = ipc_buffer;
}

LIBSEL4_INLINE_FUNC seL4_IPCBuffer *seL4_GetIPCBuffer(void)
{
    return __sel4_ipc_buffer;
}

LIBSEL4_INLINE_FUNC seL4_Word seL4_GetMR(int i)
{
    return __sel4_ipc_buffer->msg[i];
}

LIBSEL4_INLINE_FUNC void seL4_SetMR(int i, seL4_Word mr)
{
    __sel4_ipc_buffer->msg[i] = mr;
}

LIBSEL4_INLINE_FUNC seL4_Word seL4_GetUserData(void)
{
    return __sel4_ipc_buffer->userData;
}

LIBSEL4_INLINE_FUNC void seL4_SetUserData(seL4_Word data)
{
    __sel4_ipc_buffer->userData = data;
}

LIBSEL4_INLINE_FUNC seL4_Word seL4_GetBadge(int i)
{
    return __sel4_ipc_buffer->caps_or_badges[i];
}

LIBSEL4_INLINE_FUNC seL4_CPtr seL4_GetCap(int i)
{
    return (seL4_CPtr)__sel4_ipc_buffer->caps_or_badges[i];
}

LIBSEL4_INLINE_FUNC void seL4_SetCap(int i, seL4_CPtr cptr)
{
    __sel4_ipc_buffer->caps_or_badges[i] = (seL4_Word)cptr;
}

LIBSEL4_INLINE_FUNC void seL4_GetCapReceivePath(seL4_CPtr *receiveCNode,
                                                seL4_CPtr *receiveIndex,
                                                seL4_Word *receiveDepth)
{
    seL4_IPCBuffer *b = __sel4_ipc_buffer;
    if (receiveCNode != seL4_Null) {
        *receiveCNode = b->receiveCNode;
    }
    if (receiveIndex != seL4_Null) {
        *receiveIndex = b->receiveIndex;
    }
    if (receiveDepth != seL4_Null) {
        *receiveDepth = b->receiveDepth;
    }
}

LIBSEL4_INLINE_FUNC void seL4_SetCapReceivePath(seL4_CPtr receiveCNode,
                                                seL4_CPtr receiveIndex,
                                                seL4_Word receiveDepth)
{
    seL4_IPCBuffer *b = __sel4_ipc_buffer;
    b->receiveCNode = receiveCNode;
    b->receiveIndex = receiveIndex;
    b->receiveDepth = receiveDepth;
}

#endif /* SEL4_FUNCTIONS_H */
