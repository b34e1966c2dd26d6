/* What pam_mpin.so (Embedded Swift, pam/Module/*.swift) needs from C: libc, libpam's module
 * headers and the helper protocol (Sources/CPAMProtocol/mpin_pam_protocol.h, shared with the
 * helper). Swift cannot call a variadic function (pam_syslog, syscall, fcntl) or use a macro
 * that expands to an expression of types it does not import (SIG_DFL, errno), so those few
 * get a static inline wrapper here; everything else is called from Swift directly. */
#ifndef PAM_MPIN_SHIM_H
#define PAM_MPIN_SHIM_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <security/pam_ext.h>
#include <security/pam_modules.h>

#include "mpin_pam_protocol.h"

/* Where the helper is installed (the Makefile's HELPERDIR); `helper=PATH` on the pam.d line
 * overrides it. */
#ifndef MPIN_PAM_HELPER
#define MPIN_PAM_HELPER "/usr/libexec/mpin/mpin-pam-helper"
#endif
static inline const char *mpin_default_helper(void) { return MPIN_PAM_HELPER; }

/* Where the resident helper listens (mpin-pam-helper.socket); `helper_socket=PATH` on the
 * pam.d line overrides it. */
#ifndef MPIN_PAM_HELPER_SOCKET
#define MPIN_PAM_HELPER_SOCKET "/run/mpin/pam-helper.sock"
#endif
static inline const char *mpin_default_helper_socket(void) { return MPIN_PAM_HELPER_SOCKET; }

/* After its RESULT frame the helper exits at once; it gets this long before it is killed. */
#define MPIN_EXIT_GRACE_MS 2000

enum {
    MPIN_SOCKET_TYPE = SOCK_STREAM | SOCK_CLOEXEC,
    MPIN_CONNECT_TYPE = SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK,
    MPIN_SEND_FLAGS = MSG_NOSIGNAL,
    /* The helper and each directory above it: opened without following a symbolic link,
     * and without reading (O_PATH: a FIFO cannot block the open). */
    MPIN_OPEN_FILE = O_PATH | O_NOFOLLOW | O_CLOEXEC,
    MPIN_OPEN_DIR = O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC,
    MPIN_OPEN_ROOT = O_PATH | O_DIRECTORY | O_CLOEXEC,
    MPIN_OPEN_NULL = O_WRONLY,
    /* The configuration file, opened as the helper opens it (ConfigFile.swift: a FIFO must
     * not block); the store directory and its values, never through a symbolic link. */
    MPIN_OPEN_CONFIG = O_RDONLY | O_CLOEXEC | O_NONBLOCK,
    MPIN_OPEN_STORE = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
    MPIN_OPEN_VALUE = O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK,
    MPIN_CLOSE_ON_EXEC = O_CLOEXEC,
    MPIN_SIGNALS = _NSIG,
};

/* pam_syslog is variadic: the line is always an argument, never a format. */
static inline void mpin_syslog(pam_handle_t *pamh, int priority, const char *line) {
    pam_syslog(pamh, priority, "%s", line);
}

static inline int mpin_errno(void) { return errno; }

/* openat is variadic (the mode, unused here). */
static inline int mpin_openat(int dirfd, const char *name, int flags) { return openat(dirfd, name, flags); }

/* The uid of the process listening at the other end of a connected Unix socket, as the kernel
 * recorded it (SO_PEERCRED), or -1. */
static inline long long mpin_peer_uid(int fd) {
    struct ucred peer;
    socklen_t size = sizeof peer;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &size) != 0 || size != sizeof peer) return -1;
    return (long long)peer.uid;
}

/* connect's address is a transparent union under _GNU_SOURCE, which Swift cannot build. */
static inline int mpin_connect_unix(int fd, const struct sockaddr_un *address) {
    return connect(fd, (const struct sockaddr *)address, sizeof *address);
}

/* fcntl is variadic. Clears O_NONBLOCK (the connect was non-blocking, the relay polls). */
static inline int mpin_set_blocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
}

/* fcntl is variadic. A copy of fd at fd >= minimum, close-on-exec. */
static inline int mpin_dup_above(int fd, int minimum) { return fcntl(fd, F_DUPFD_CLOEXEC, minimum); }
/* Lets fd survive exec (needed when the helper is a script: its interpreter opens
 * /dev/fd/N). Async-signal-safe. */
static inline int mpin_keep_on_exec(int fd) { return fcntl(fd, F_SETFD, 0); }

/* execveat(fd, "", argv, envp, AT_EMPTY_PATH): runs the file fd was opened on, not whatever
 * its path names by now. syscall is variadic. Async-signal-safe. */
static inline int mpin_execveat(int fd, char *const argv[], char *const envp[]) {
    return (int)syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
}

/* SIGCHLD to the default while the helper runs (saved is restored afterwards): a host that
 * ignores SIGCHLD would have its children reaped by the kernel, the helper's status lost. */
static inline void mpin_sigchld_default(struct sigaction *saved) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGCHLD, &dfl, saved);
}
static inline void mpin_sigchld_restore(const struct sigaction *saved) { sigaction(SIGCHLD, saved, NULL); }

/* Every signal blocked in this thread (saved restores it): the child must not run one of the
 * host's handlers between fork and exec. */
static inline void mpin_block_signals(sigset_t *saved) {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, saved);
}
static inline void mpin_restore_signals(const sigset_t *saved) { pthread_sigmask(SIG_SETMASK, saved, NULL); }

/* In the child, before exec: signal sig to its default disposition (an ignored signal would
 * stay ignored across exec). Async-signal-safe. */
static inline void mpin_child_signal_default(int sig) {
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
}
/* In the child, before exec: nothing blocked. Async-signal-safe. */
static inline void mpin_child_unblock_signals(void) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

#endif
