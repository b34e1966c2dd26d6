/* The protocol between pam_mpin.so (pam/Module: Embedded Swift, loaded by sshd, sudo, login)
 * and mpin-pam-helper (Sources/mpin-pam-helper: Swift, one process per PAM call). Both import
 * this file as a Clang module (the module through pam/Module/module.modulemap, the helper as
 * CPAMProtocol), which also gives the helper PAM's constants (from the headers only: the
 * helper does not link libpam).
 *
 * The channel is one AF_UNIX stream socket, the helper's file descriptor 0. Each message is
 * a frame: a type byte, the payload length as 4 bytes big-endian, then the payload (at most
 * MPIN_PAM_MAX_PAYLOAD bytes). Styles, items and return codes are PAM's own numbers.
 *
 *   module -> helper   START     a call byte (MPIN_PAM_CALL_*), then the flags libpam passed
 *                                to pam_sm_* (PAM_SILENT, ...) as 4 bytes big-endian, then
 *                                each argument of the pam.d line followed by a NUL
 *   helper -> module   CONVERSE  a style byte (PAM_PROMPT_ECHO_OFF, PAM_PROMPT_ECHO_ON,
 *                                PAM_ERROR_MSG, PAM_TEXT_INFO), then the text
 *                      GET_ITEM  an item byte: PAM_USER (pam_get_user), PAM_SERVICE,
 *                                PAM_RHOST, PAM_TTY or PAM_AUTHTOK
 *                      LOG       a syslog priority byte (LOG_ERR .. LOG_DEBUG), then the line
 *                      WATCHDOG  4 bytes big-endian: how many milliseconds the helper may now
 *                                stay silent before the module stops it (time the module spends
 *                                in the conversation does not count)
 *                      RESULT    the PAM return code, one byte; the helper's last frame
 *   module -> helper   REPLY     the answer to CONVERSE or GET_ITEM: a status byte
 *                                (MPIN_PAM_ANSWERED, MPIN_PAM_NO_ANSWER, or for CONVERSE
 *                                MPIN_PAM_CONVERSATION_FAILED), then the text
 */
#ifndef MPIN_PAM_PROTOCOL_H
#define MPIN_PAM_PROTOCOL_H

#include <security/_pam_types.h>

enum {
    MPIN_PAM_FRAME_START = 'S',
    MPIN_PAM_FRAME_CONVERSE = 'C',
    MPIN_PAM_FRAME_GET_ITEM = 'I',
    MPIN_PAM_FRAME_LOG = 'L',
    MPIN_PAM_FRAME_WATCHDOG = 'W',
    MPIN_PAM_FRAME_RESULT = 'E',
    MPIN_PAM_FRAME_REPLY = 'R',
};

enum {
    MPIN_PAM_CALL_AUTHENTICATE = 'a',
    MPIN_PAM_CALL_ACCOUNT = 'm',
    /* pam_sm_chauthtok: a registered user's new PIN. */
    MPIN_PAM_CALL_CHAUTHTOK = 'p',
};

enum {
    MPIN_PAM_ANSWERED = 0,
    MPIN_PAM_NO_ANSWER = 1,
    /* The application has no conversation function, or it returned an error (sudo -n, a
     * program without a terminal): nobody can be asked (pam_mpin(8), PAM RETURN CODES). */
    MPIN_PAM_CONVERSATION_FAILED = 2,
};

/* A frame's header: type and length. */
#define MPIN_PAM_HEADER_SIZE 5
/* The flags in a START frame, after the call byte. */
#define MPIN_PAM_FLAGS_SIZE 4
/* PAM's own limit on a message is 512 bytes; log lines are cut at 2 KiB; a pam.d line is
 * shorter than this too. */
#define MPIN_PAM_MAX_PAYLOAD 16384
/* How long the helper may stay silent before its first WATCHDOG frame (it reads its
 * configuration and the store, waiting at most a second for the store's lock). */
#define MPIN_PAM_FIRST_WATCHDOG_MS 10000
/* The most a WATCHDOG frame may ask for: device_timeout (at most 600 s) plus timeout (at most
 * 300 s) plus a margin. */
#define MPIN_PAM_MAX_WATCHDOG_MS 960000

#endif
