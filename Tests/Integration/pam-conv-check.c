/* A PAM application for the integration tests (hosts-tests.sh): one pam_authenticate with a
 * conversation of the test's choosing, recording what reaches it, in order and with the time,
 * so that the tests can show what a host without a terminal, a greeter or a lock screen would
 * get (pam_mpin(8), DEVICE MODE).
 *
 *   pam-conv-check [-s] [-t TTY] [-r HOST] SERVICE USER MODE [ANSWER...]
 *
 *   MODE none          no conversation function at all (struct pam_conv with conv NULL)
 *   MODE fail          a conversation that fails every call (PAM_CONV_ERR)
 *   MODE noprompt      messages are recorded, prompts fail, as sudo -n's conversation does
 *   MODE record        messages are recorded, prompts are recorded and answered with the
 *                      ANSWERs in order (an empty answer once they run out)
 *   -s                 PAM_SILENT in pam_authenticate's flags
 *   -t TTY             PAM_TTY (a QR code is drawn only for a terminal)
 *   -r HOST            PAM_RHOST (a remote login, as sshd's)
 *
 * Each message is printed (and flushed) as it arrives: "msg t=MS style=STYLE" and then its
 * text, each line prefixed with "| ". MS is milliseconds since just before pam_authenticate.
 * At the end: "rc=N t=MS" with pam_authenticate's return code; the exit status is 0 on
 * PAM_SUCCESS, 1 otherwise, 2 for a usage or setup error. */
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct timespec started;
static char **answers;
static int answers_left;
static int prompts_fail;

static long elapsed_ms(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - started.tv_sec) * 1000 + (now.tv_nsec - started.tv_nsec) / 1000000;
}

static const char *style_name(int style) {
    switch (style) {
    case PAM_PROMPT_ECHO_OFF: return "PROMPT_ECHO_OFF";
    case PAM_PROMPT_ECHO_ON: return "PROMPT_ECHO_ON";
    case PAM_ERROR_MSG: return "ERROR_MSG";
    case PAM_TEXT_INFO: return "TEXT_INFO";
    default: return "OTHER";
    }
}

static void record(const struct pam_message *m) {
    printf("msg t=%ld style=%s\n| ", elapsed_ms(), style_name(m->msg_style));
    for (const char *c = m->msg; c != NULL && *c != '\0'; c++) {
        putchar(*c);
        if (*c == '\n') fputs("| ", stdout);
    }
    putchar('\n');
    fflush(stdout);
}

static int fail_all(int count, const struct pam_message **messages, struct pam_response **responses, void *data) {
    (void)count; (void)messages; (void)responses; (void)data;
    return PAM_CONV_ERR;
}

static int converse(int count, const struct pam_message **messages, struct pam_response **responses, void *data) {
    (void)data;
    struct pam_response *replies = calloc((size_t)count, sizeof *replies);
    if (replies == NULL) return PAM_BUF_ERR;
    for (int i = 0; i < count; i++) {
        record(messages[i]);
        int style = messages[i]->msg_style;
        if (style != PAM_PROMPT_ECHO_OFF && style != PAM_PROMPT_ECHO_ON) continue;
        if (prompts_fail) {
            for (int j = 0; j < i; j++) free(replies[j].resp);
            free(replies);
            return PAM_CONV_ERR;
        }
        const char *answer = "";
        if (answers_left > 0) {
            answer = *answers++;
            answers_left--;
        }
        replies[i].resp = strdup(answer);
    }
    *responses = replies;
    return PAM_SUCCESS;
}

int main(int argc, char **argv) {
    int flags = 0;
    const char *tty = NULL, *rhost = NULL;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (strcmp(argv[i], "-s") == 0) flags |= PAM_SILENT;
        else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc) tty = argv[++i];
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) rhost = argv[++i];
        else break;
    }
    if (argc - i < 3) {
        fprintf(stderr, "usage: pam-conv-check [-s] [-t TTY] [-r HOST] SERVICE USER none|fail|noprompt|record [ANSWER...]\n");
        return 2;
    }
    const char *service = argv[i], *user = argv[i + 1], *mode = argv[i + 2];
    answers = argv + i + 3;
    answers_left = argc - i - 3;
    struct pam_conv conversation = {NULL, NULL};
    if (strcmp(mode, "fail") == 0) conversation.conv = fail_all;
    else if (strcmp(mode, "noprompt") == 0) { conversation.conv = converse; prompts_fail = 1; }
    else if (strcmp(mode, "record") == 0) conversation.conv = converse;
    else if (strcmp(mode, "none") != 0) { fprintf(stderr, "unknown mode %s\n", mode); return 2; }

    pam_handle_t *pamh = NULL;
    if (pam_start(service, user, &conversation, &pamh) != PAM_SUCCESS) { fprintf(stderr, "pam_start failed\n"); return 2; }
    if (tty != NULL && pam_set_item(pamh, PAM_TTY, tty) != PAM_SUCCESS) { fprintf(stderr, "PAM_TTY not set\n"); return 2; }
    if (rhost != NULL && pam_set_item(pamh, PAM_RHOST, rhost) != PAM_SUCCESS) { fprintf(stderr, "PAM_RHOST not set\n"); return 2; }
    clock_gettime(CLOCK_MONOTONIC, &started);
    int rc = pam_authenticate(pamh, flags);
    printf("rc=%d t=%ld\n", rc, elapsed_ms());
    fflush(stdout);
    pam_end(pamh, rc);
    return rc == PAM_SUCCESS ? 0 : 1;
}
