/* pam_mpin.so: M-Pin's PAM entry points.
 *
 * The login itself (configuration, the store, the M-Pin protocol over libcurl, the crypto) is
 * Swift, in mpin-pam-helper, which this module runs once per call, as pam_unix runs
 * unix_chkpwd. So sshd, sudo and login map only this small module, not a statically linked
 * Swift runtime (issue 13: 6 MB per sshd connection before), and a crash or a hang in the
 * login costs one failed call, never the caller's process. This file only relays, over the
 * protocol in Sources/CPAMProtocol/mpin_pam_protocol.h: the helper's questions to the
 * conversation, its log lines to pam_syslog, its result to libpam.
 *
 * Like every PAM module it lives inside someone else's process: it prints nothing, leaves no
 * thread and no child behind, keeps the caller's signal dispositions (SIGCHLD is set to the
 * default only while its child runs, as pam_unix does) and never blocks past the helper's
 * announced budget; it wipes the answers it relays (PINs) before freeing them. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <security/pam_ext.h>
#include <security/pam_modules.h>

#include "mpin_pam_protocol.h"

/* Where the helper is installed; `helper=PATH` on the pam.d line overrides it. */
#ifndef MPIN_PAM_HELPER
#define MPIN_PAM_HELPER "/usr/libexec/mpin/mpin-pam-helper"
#endif

/* After its RESULT frame the helper exits at once; it gets this long before it is killed. */
#define EXIT_GRACE_MS 2000

struct helper {
    pid_t pid;
    int fd;
    int64_t deadline_ms;  /* CLOCK_MONOTONIC; the helper is stopped when it is silent past this */
};

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint32_t load_be32(const unsigned char *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void wipe_free(char *secret) {
    if (secret == NULL) return;
    explicit_bzero(secret, strlen(secret));
    free(secret);
}

/* The helper named on the line (helper=PATH), else the installed one. */
static const char *helper_path(int argc, const char **argv) {
    const char *path = MPIN_PAM_HELPER;
    for (int i = 0; i < argc; i++)
        if (argv[i] != NULL && strncmp(argv[i], "helper=", 7) == 0) path = argv[i] + 7;
    return path;
}

/* The helper runs with the caller's privileges (root in sshd and sudo), so it must be a file
 * only root, or the caller itself, can have written: an absolute path to a regular file,
 * owned by root or the effective user, writable by nobody else. */
static int helper_trusted(pam_handle_t *pamh, const char *path) {
    struct stat st;
    if (path[0] != '/') {
        pam_syslog(pamh, LOG_ERR, "helper=%s: not an absolute path", path);
        return 0;
    }
    if (stat(path, &st) != 0) {
        pam_syslog(pamh, LOG_ERR, "cannot run %s: %m", path);
        return 0;
    }
    if (!S_ISREG(st.st_mode) || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 ||
        (st.st_uid != 0 && st.st_uid != geteuid())) {
        pam_syslog(pamh, LOG_ERR, "refusing to run %s: it must be a regular file owned by root "
                   "and writable only by its owner", path);
        return 0;
    }
    return 1;
}

/* Starts the helper with one end of a socket pair as its fd 0, /dev/null as stdout and
 * stderr, no other descriptor of the caller's, default signal handling, nothing blocked, and
 * an environment of its own (the caller's, under sudo, is partly the user's). */
static int start_helper(pam_handle_t *pamh, const char *path, struct helper *h) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        pam_syslog(pamh, LOG_ERR, "socketpair: %m");
        return -1;
    }
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, sv[1], 0);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

    char arg0[] = "mpin-pam-helper";
    char path_env[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
    /* A crash is reported by the module (exit status); Swift's backtracer would only add
     * seconds to a failed login. */
    char backtrace_env[] = "SWIFT_BACKTRACE=enable=no";
    char *child_argv[] = {arg0, NULL};
    char *child_env[] = {path_env, backtrace_env, NULL};
    int rc = posix_spawn(&h->pid, path, &actions, &attr, child_argv, child_env);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    close(sv[1]);
    if (rc != 0) {
        close(sv[0]);
        errno = rc;
        pam_syslog(pamh, LOG_ERR, "cannot run %s: %m", path);
        return -1;
    }
    h->fd = sv[0];
    return 0;
}

static int send_all(int fd, const void *data, size_t len) {
    const char *p = data;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* One frame: header, then the payload in two parts (a status byte and a text, either may be
 * empty), so that a PIN is never copied into another buffer. */
static int send_frame(int fd, unsigned char type, const void *first, size_t first_len,
                      const char *text, size_t text_len) {
    size_t len = first_len + text_len;
    unsigned char header[MPIN_PAM_HEADER_SIZE] = {
        type, (unsigned char)(len >> 24), (unsigned char)(len >> 16), (unsigned char)(len >> 8), (unsigned char)len};
    if (send_all(fd, header, sizeof header) != 0) return -1;
    if (first_len > 0 && send_all(fd, first, first_len) != 0) return -1;
    if (text_len > 0 && send_all(fd, text, text_len) != 0) return -1;
    return 0;
}

static int send_reply(int fd, const char *text) {
    unsigned char status = text != NULL ? MPIN_PAM_ANSWERED : MPIN_PAM_NO_ANSWER;
    size_t len = text != NULL ? strnlen(text, MPIN_PAM_MAX_PAYLOAD - 1) : 0;
    return send_frame(fd, MPIN_PAM_FRAME_REPLY, &status, 1, text, len);
}

/* Reads exactly len bytes, waiting no later than the helper's deadline. */
static int read_exact(struct helper *h, void *buf, size_t len, const char **why) {
    size_t got = 0;
    while (got < len) {
        int64_t left = h->deadline_ms - now_ms();
        if (left <= 0) {
            *why = "it did not answer in time";
            return -1;
        }
        struct pollfd pfd = {.fd = h->fd, .events = POLLIN};
        int n = poll(&pfd, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (n < 0 && errno != EINTR) {
            *why = "poll failed";
            return -1;
        }
        if (n <= 0) continue;
        ssize_t r = recv(h->fd, (char *)buf + got, len - got, 0);
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (r < 0 && errno != ECONNRESET) {
            *why = "read failed";
            return -1;
        }
        if (r <= 0) {
            /* ECONNRESET: it exited with our data unread. */
            *why = "it ended without a result";
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

/* One question through the application's conversation. On success *answer is malloc'd (or
 * NULL) and the caller wipes it. */
static int converse(pam_handle_t *pamh, int style, const char *text, char **answer) {
    const struct pam_conv *conv = NULL;
    struct pam_message msg = {.msg_style = style, .msg = text};
    const struct pam_message *msgs[1] = {&msg};
    struct pam_response *resp = NULL;
    *answer = NULL;
    int rc = pam_get_item(pamh, PAM_CONV, (const void **)&conv);
    if (rc != PAM_SUCCESS) return rc;
    if (conv == NULL || conv->conv == NULL) return PAM_CONV_ERR;
    rc = conv->conv(1, msgs, &resp, conv->appdata_ptr);
    if (resp != NULL) {
        if (rc == PAM_SUCCESS) *answer = resp->resp;
        else wipe_free(resp->resp);
        free(resp);
    }
    return rc;
}

static int is_result_code(int code) {
    switch (code) {
    case PAM_SUCCESS: case PAM_AUTH_ERR: case PAM_MAXTRIES: case PAM_PERM_DENIED:
    case PAM_USER_UNKNOWN: case PAM_IGNORE: case PAM_AUTHINFO_UNAVAIL: case PAM_SERVICE_ERR:
        return 1;
    default:
        return 0;
    }
}

/* Serves the helper's frames until its RESULT; returns the PAM code, or -1 (with *why). */
static int relay(pam_handle_t *pamh, struct helper *h, const char **why) {
    for (;;) {
        unsigned char header[MPIN_PAM_HEADER_SIZE];
        if (read_exact(h, header, sizeof header, why) != 0) return -1;
        uint32_t len = load_be32(header + 1);
        if (len > MPIN_PAM_MAX_PAYLOAD) {
            *why = "it sent an oversized frame";
            return -1;
        }
        unsigned char *payload = malloc(len + 1);
        if (payload == NULL) {
            *why = "out of memory";
            return -1;
        }
        if (read_exact(h, payload, len, why) != 0) {
            free(payload);
            return -1;
        }
        payload[len] = 0;
        const char *text = (const char *)payload + 1;
        int result = -2;  /* -2: keep going */
        int64_t asked = now_ms();
        char *answer = NULL;
        switch (header[0]) {
        case MPIN_PAM_FRAME_CONVERSE:
            if (len < 1 || payload[0] < PAM_PROMPT_ECHO_OFF || payload[0] > PAM_TEXT_INFO) {
                result = -1;
                break;
            }
            if (converse(pamh, payload[0], text, &answer) != PAM_SUCCESS) answer = NULL;
            /* Waiting for the user does not count against the helper's budget. */
            h->deadline_ms += now_ms() - asked;
            if (payload[0] == PAM_PROMPT_ECHO_OFF || payload[0] == PAM_PROMPT_ECHO_ON) {
                if (send_reply(h->fd, answer) != 0) result = -1;
            }
            wipe_free(answer);
            break;
        case MPIN_PAM_FRAME_GET_ITEM: {
            const char *value = NULL;
            if (len != 1) {
                result = -1;
                break;
            }
            if (payload[0] == PAM_USER) {
                if (pam_get_user(pamh, &value, NULL) != PAM_SUCCESS) value = NULL;
                h->deadline_ms += now_ms() - asked;
            } else if (payload[0] == PAM_SERVICE || payload[0] == PAM_RHOST || payload[0] == PAM_TTY ||
                       payload[0] == PAM_AUTHTOK) {
                const void *item = NULL;
                if (pam_get_item(pamh, payload[0], &item) == PAM_SUCCESS) value = item;
            } else {
                result = -1;
                break;
            }
            if (send_reply(h->fd, value) != 0) result = -1;
            break;
        }
        case MPIN_PAM_FRAME_LOG:
            if (len < 1 || payload[0] > LOG_DEBUG) {
                result = -1;
                break;
            }
            pam_syslog(pamh, payload[0], "%s", text);
            break;
        case MPIN_PAM_FRAME_WATCHDOG:
            if (len != 4 || load_be32(payload) > MPIN_PAM_MAX_WATCHDOG_MS) {
                result = -1;
                break;
            }
            h->deadline_ms = now_ms() + load_be32(payload);
            break;
        case MPIN_PAM_FRAME_RESULT:
            result = len == 1 && is_result_code(payload[0]) ? payload[0] : -1;
            break;
        default:
            result = -1;
        }
        explicit_bzero(payload, len);
        free(payload);
        if (result == -1) *why = "it broke the protocol";
        if (result != -2) return result;
    }
}

/* Waits for the helper to end; one that has not sent its result, or does not exit soon
 * after it, is killed. A helper another part of the process already reaped (ECHILD) is fine. */
static int reap(struct helper *h, int finished) {
    int status = 0;
    if (finished) {
        /* Its end of the socket closes when it exits: wait for that end of file. */
        int64_t until = now_ms() + EXIT_GRACE_MS;
        finished = 0;
        for (;;) {
            int64_t left = until - now_ms();
            struct pollfd pfd = {.fd = h->fd, .events = POLLIN};
            int n = left > 0 ? poll(&pfd, 1, (int)left) : 0;
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            char byte;
            ssize_t r = recv(h->fd, &byte, 1, 0);
            if (r < 0 && errno == EINTR) continue;
            finished = r == 0;
            break;
        }
    }
    if (!finished) kill(h->pid, SIGKILL);
    while (waitpid(h->pid, &status, 0) < 0) {
        if (errno != EINTR) return 0;
    }
    return status;
}

static int run_helper(pam_handle_t *pamh, unsigned char call, int argc, const char **argv) {
    const char *path = helper_path(argc, argv);
    if (!helper_trusted(pamh, path)) return PAM_SERVICE_ERR;

    /* The START frame: the call, then the arguments, each with its NUL. */
    size_t len = 1;
    for (int i = 0; i < argc; i++)
        if (argv[i] != NULL) len += strlen(argv[i]) + 1;
    if (len > MPIN_PAM_MAX_PAYLOAD) {
        pam_syslog(pamh, LOG_ERR, "the module's arguments are too long");
        return PAM_SERVICE_ERR;
    }
    char *start = malloc(len);
    if (start == NULL) return PAM_BUF_ERR;
    size_t at = 0;
    start[at++] = (char)call;
    for (int i = 0; i < argc; i++) {
        if (argv[i] == NULL) continue;
        size_t n = strlen(argv[i]) + 1;
        memcpy(start + at, argv[i], n);
        at += n;
    }

    struct sigaction default_chld = {.sa_handler = SIG_DFL}, saved_chld;
    sigemptyset(&default_chld.sa_mask);
    sigaction(SIGCHLD, &default_chld, &saved_chld);

    struct helper h = {.pid = -1, .fd = -1};
    int code = PAM_SERVICE_ERR;
    if (start_helper(pamh, path, &h) == 0) {
        /* A START that cannot be sent: the helper has already gone. */
        const char *why = "it ended without a result";
        int result = -1;
        h.deadline_ms = now_ms() + MPIN_PAM_FIRST_WATCHDOG_MS;
        if (send_frame(h.fd, MPIN_PAM_FRAME_START, NULL, 0, start, len) == 0) result = relay(pamh, &h, &why);
        int status = reap(&h, result >= 0);
        close(h.fd);
        if (result >= 0) {
            code = result;
        } else if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) {
            pam_syslog(pamh, LOG_ERR, "%s stopped: signal %d", path, WTERMSIG(status));
        } else {
            pam_syslog(pamh, LOG_ERR, "%s stopped: %s", path, why);
        }
    }
    sigaction(SIGCHLD, &saved_chld, NULL);
    free(start);
    return code;
}

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    return run_helper(pamh, MPIN_PAM_CALL_AUTHENTICATE, argc, argv);
}

PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh; (void)flags; (void)argc; (void)argv;
    return PAM_SUCCESS;
}

/* Refuses identities the store marks BLOCKED; no opinion (PAM_IGNORE) on anyone else. */
PAM_EXTERN int pam_sm_acct_mgmt(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    return run_helper(pamh, MPIN_PAM_CALL_ACCOUNT, argc, argv);
}
