/* A PAM application for the integration tests: one pam_authenticate with a PIN, counting this
 * process's threads (/proc/self/task) before, after pam_authenticate and after pam_end, so
 * the tests can check that pam_mpin.so leaves no thread behind in its host.
 *
 *   pam-thread-check SERVICE USER PIN        prints "rc=N threads=B,A,E", exits 0 on PAM_SUCCESS
 *   pam-thread-check SERVICE USER PIN host   the same as a busy host: before pam_authenticate
 *     it starts a thread of its own (allocating and freeing memory in a loop, so that the
 *     module forks while another thread may hold malloc's lock) and a child of its own that
 *     has already exited (a zombie, waited for with WNOWAIT), so that a module that waited for
 *     any child instead of its helper would take it. Afterwards it reaps that child itself.
 *     Prints "rc=N threads=B,A,E child=kept|lost others=none|some"; exits 0 on PAM_SUCCESS
 *     with the child kept (its exit status 42 seen here) and no other child left. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <security/pam_appl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

static atomic_int stop_busy;

static void *busy(void *unused) {
    (void)unused;
    while (!atomic_load(&stop_busy)) {
        void *p = malloc(4096);
        if (p != NULL) memset(p, 1, 4096);
        free(p);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4 && !(argc == 5 && strcmp(argv[4], "host") == 0)) {
        fprintf(stderr, "usage: pam-thread-check SERVICE USER PIN [host]\n");
        return 2;
    }
    int host = argc == 5;
    pthread_t thread;
    pid_t child = -1;
    if (host) {
        if (pthread_create(&thread, NULL, busy, NULL) != 0) return 2;
        child = fork();
        if (child < 0) return 2;
        if (child == 0) _exit(42);
        siginfo_t info;
        memset(&info, 0, sizeof info);
        if (waitid(P_PID, (id_t)child, &info, WEXITED | WNOWAIT) != 0) return 2;
    }
    struct pam_conv conversation = { answer, argv[3] };
    pam_handle_t *handle = NULL;
    int before = threads();
    int rc = pam_start(argv[1], argv[2], &conversation, &handle);
    if (rc == PAM_SUCCESS) rc = pam_authenticate(handle, 0);
    int after = threads();
    pam_end(handle, rc);
    int ended = threads();
    if (!host) {
        printf("rc=%d threads=%d,%d,%d\n", rc, before, after, ended);
        return rc == PAM_SUCCESS ? 0 : 1;
    }
    atomic_store(&stop_busy, 1);
    pthread_join(thread, NULL);
    int status = 0;
    int kept = waitpid(child, &status, WNOHANG) == child && WIFEXITED(status) && WEXITSTATUS(status) == 42;
    /* Nothing else may be left: the module's helper was reaped by the module. */
    int none = waitpid(-1, &status, WNOHANG) < 0 && errno == ECHILD;
    printf("rc=%d threads=%d,%d,%d child=%s others=%s\n", rc, before, after, ended, kept ? "kept" : "lost", none ? "none" : "some");
    return rc == PAM_SUCCESS && kept && none ? 0 : 1;
}
