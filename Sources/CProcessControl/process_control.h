/* prctl(2) is variadic, which Swift cannot call: these wrappers give MPinPOSIX the two calls
 * it needs (ProcessHardening.swift). Header only; nothing to link. */
#ifndef MPIN_PROCESS_CONTROL_H
#define MPIN_PROCESS_CONTROL_H

#include <sys/prctl.h>

/* prctl(PR_SET_DUMPABLE, value): 0 means no core file and no ptrace or /proc/PID/mem access
 * by the process's own user. 0, or -1 with errno. */
static inline int mpin_set_dumpable(int value) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)value, 0UL, 0UL, 0UL);
}

/* prctl(PR_GET_DUMPABLE): 0 or 1 (2 with suid_dumpable = 2), or -1 with errno. */
static inline int mpin_get_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);
}

#endif
