/* prctl(2) is variadic and capget(2) has no glibc wrapper, which Swift cannot call or declare:
 * these wrappers give MPinPOSIX the calls it needs (ProcessHardening.swift). Header only;
 * nothing to link. */
#ifndef MPIN_PROCESS_CONTROL_H
#define MPIN_PROCESS_CONTROL_H

#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <unistd.h>

/* prctl(PR_SET_DUMPABLE, value): 0 means no core file and no ptrace or /proc/PID/mem access
 * by the process's own user. 0, or -1 with errno. */
static inline int mpin_set_dumpable(int value) {
    return prctl(PR_SET_DUMPABLE, (unsigned long)value, 0UL, 0UL, 0UL);
}

/* prctl(PR_GET_DUMPABLE): 0 or 1 (2 with suid_dumpable = 2), or -1 with errno. */
static inline int mpin_get_dumpable(void) {
    return prctl(PR_GET_DUMPABLE, 0UL, 0UL, 0UL, 0UL);
}

/* prctl(PR_SET_PDEATHSIG, signal): the signal this process gets when its parent ends (0: none).
 * A resident mpin-pam-helper's idle child asks for SIGKILL, so that stopping the daemon leaves
 * no child waiting in accept(); it clears it once it serves a call. 0, or -1 with errno. */
static inline int mpin_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}

/* Whether CAP_IPC_LOCK is in this process's effective set: 1, 0, or -1 with errno. With it the
 * kernel does not apply RLIMIT_MEMLOCK, so locking every future mapping cannot make a later
 * allocation fail. */
static inline int mpin_has_ipc_lock(void) {
    struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    if (syscall(SYS_capget, &header, data) != 0) return -1;
    return (data[CAP_TO_INDEX(CAP_IPC_LOCK)].effective & CAP_TO_MASK(CAP_IPC_LOCK)) != 0;
}

/* mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT): every page of the process, now and later,
 * stays in memory once touched (never written to swap), without faulting in the whole binary
 * at start (MCL_ONFAULT, Linux 4.4). 0, or -1 with errno. */
static inline int mpin_lock_memory(void) {
    return mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT);
}

/* syslog is variadic: the line is always an argument, never a format (the resident
 * mpin-pam-helper's own log lines). */
static inline void mpin_syslog_line(int priority, const char *line) { syslog(priority, "%s", line); }

#endif
