/* A PAM application for the integration tests: one pam_authenticate with a PIN, counting this
 * process's threads (/proc/self/task) before, after pam_authenticate and after pam_end, so
 * the tests can check that pam_mpin.so leaves no thread behind in its host.
 *
 *   pam-thread-check SERVICE USER PIN   prints "rc=N threads=B,A,E", exits 0 on PAM_SUCCESS */
#include <dirent.h>
#include <security/pam_appl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int answer(int count, const struct pam_message **messages, struct pam_response **responses, void *pin) {
    struct pam_response *replies = calloc((size_t)count, sizeof *replies);
    if (replies == NULL) return PAM_BUF_ERR;
    for (int i = 0; i < count; i++) {
        if (messages[i]->msg_style == PAM_PROMPT_ECHO_OFF) replies[i].resp = strdup((const char *)pin);
    }
    *responses = replies;
    return PAM_SUCCESS;
}

static int threads(void) {
    DIR *tasks = opendir("/proc/self/task");
    if (tasks == NULL) return -1;
    int count = 0;
    for (struct dirent *entry; (entry = readdir(tasks)) != NULL;) {
        if (entry->d_name[0] != '.') count++;
    }
    closedir(tasks);
    return count;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: pam-thread-check SERVICE USER PIN\n");
        return 2;
    }
    struct pam_conv conversation = { answer, argv[3] };
    pam_handle_t *handle = NULL;
    int before = threads();
    int rc = pam_start(argv[1], argv[2], &conversation, &handle);
    if (rc == PAM_SUCCESS) rc = pam_authenticate(handle, 0);
    int after = threads();
    pam_end(handle, rc);
    int ended = threads();
    printf("rc=%d threads=%d,%d,%d\n", rc, before, after, ended);
    return rc == PAM_SUCCESS ? 0 : 1;
}
