/* A name service for the integration tests, loaded with LD_PRELOAD into mpin-pam-helper and
 * mpinctl (lib.sh: nss_setup): getpwnam_r answers from the passwd(5) file MPIN_TEST_PASSWD
 * first, then from the system's name service, so that the suites' users (alice, carol, ...)
 * exist without a change to /etc. With MPIN_TEST_NSS_NOCASE set, names are compared without
 * regard to ASCII case, as sssd with case_sensitive = false and winbind do: getpwnam("ALICE")
 * answers alice's entry, whose pw_name is "alice". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef int (*getpwnam_r_fn)(const char *, struct passwd *, char *, size_t, struct passwd **);

/* Copies s into buf at *at; NULL when it does not fit. */
static char *place(const char *s, char *buf, size_t buflen, size_t *at) {
    size_t n = strlen(s) + 1;
    if (*at + n > buflen) return NULL;
    char *out = buf + *at;
    memcpy(out, s, n);
    *at += n;
    return out;
}

/* 0 and *result set when found in the file, ENOENT when not there, ERANGE when buf is short. */
static int from_file(const char *file, const char *name, struct passwd *pwd, char *buf, size_t buflen,
                     struct passwd **result) {
    FILE *f = fopen(file, "re");
    if (f == NULL) return ENOENT;
    int nocase = getenv("MPIN_TEST_NSS_NOCASE") != NULL;
    struct passwd entry, *p;
    char line[1024];
    int rc = ENOENT;
    while (fgetpwent_r(f, &entry, line, sizeof line, &p) == 0) {
        if ((nocase ? strcasecmp(p->pw_name, name) : strcmp(p->pw_name, name)) != 0) continue;
        size_t at = 0;
        *pwd = *p;
        if ((pwd->pw_name = place(p->pw_name, buf, buflen, &at)) == NULL ||
            (pwd->pw_passwd = place(p->pw_passwd, buf, buflen, &at)) == NULL ||
            (pwd->pw_gecos = place(p->pw_gecos, buf, buflen, &at)) == NULL ||
            (pwd->pw_dir = place(p->pw_dir, buf, buflen, &at)) == NULL ||
            (pwd->pw_shell = place(p->pw_shell, buf, buflen, &at)) == NULL) {
            rc = ERANGE;
        } else {
            *result = pwd;
            rc = 0;
        }
        break;
    }
    fclose(f);
    return rc;
}

int getpwnam_r(const char *name, struct passwd *pwd, char *buf, size_t buflen, struct passwd **result) {
    *result = NULL;
    const char *file = getenv("MPIN_TEST_PASSWD");
    if (file != NULL) {
        int rc = from_file(file, name, pwd, buf, buflen, result);
        if (rc != ENOENT) return rc;
    }
    getpwnam_r_fn next = (getpwnam_r_fn)dlsym(RTLD_NEXT, "getpwnam_r");
    return next == NULL ? ENOENT : next(name, pwd, buf, buflen, result);
}
