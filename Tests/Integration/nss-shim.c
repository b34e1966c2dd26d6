/* A name service for the integration tests, loaded with LD_PRELOAD into mpin-pam-helper and
 * mpinctl (lib.sh: nss_setup): getpwnam_r answers from the passwd(5) file MPIN_TEST_PASSWD
 * first, then from the system's name service, so that the suites' users (alice, carol, ...)
 * exist without a change to /etc. With MPIN_TEST_NSS_NOCASE set, names are compared without
 * regard to ASCII case, as sssd with case_sensitive = false and winbind do: getpwnam("ALICE")
 * answers alice's entry, whose pw_name is "alice".
 *
 * Groups (require_group and exempt_group, pam_mpin(8)): getgrnam_r and getgrouplist answer from
 * the group(5) file MPIN_TEST_GROUP first (getgrouplist adds the groups of that file that list
 * the user to the system's answer), so that a test user can be put in groups without a change
 * to /etc. MPIN_TEST_NSS_FAIL=getgrnam makes getgrnam_r fail with EIO, as a name service whose
 * server is down does; MPIN_TEST_NSS_FAIL=getgrouplist makes getgrouplist return -1 without
 * asking for a larger buffer. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
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

typedef int (*getgrnam_r_fn)(const char *, struct group *, char *, size_t, struct group **);
typedef int (*getgrouplist_fn)(const char *, gid_t, gid_t *, int *);

static int failing(const char *what) {
    const char *fail = getenv("MPIN_TEST_NSS_FAIL");
    return fail != NULL && strcmp(fail, what) == 0;
}

int getgrnam_r(const char *name, struct group *grp, char *buf, size_t buflen, struct group **result) {
    *result = NULL;
    if (failing("getgrnam")) return EIO;
    const char *file = getenv("MPIN_TEST_GROUP");
    FILE *f = file != NULL ? fopen(file, "re") : NULL;
    if (f != NULL) {
        struct group entry, *g;
        char line[1024];
        int rc = ENOENT;
        while (fgetgrent_r(f, &entry, line, sizeof line, &g) == 0) {
            if (strcmp(g->gr_name, name) != 0) continue;
            /* Name and gid only: the module asks for nothing else. */
            size_t at = 0;
            *grp = *g;
            grp->gr_mem = NULL;
            if ((grp->gr_name = place(g->gr_name, buf, buflen, &at)) == NULL ||
                (grp->gr_passwd = place(g->gr_passwd, buf, buflen, &at)) == NULL) {
                rc = ERANGE;
            } else {
                *result = grp;
                rc = 0;
            }
            break;
        }
        fclose(f);
        if (rc != ENOENT) return rc;
    }
    getgrnam_r_fn next = (getgrnam_r_fn)dlsym(RTLD_NEXT, "getgrnam_r");
    return next == NULL ? ENOENT : next(name, grp, buf, buflen, result);
}

int getgrouplist(const char *user, gid_t group, gid_t *groups, int *ngroups) {
    if (failing("getgrouplist")) return -1;
    getgrouplist_fn next = (getgrouplist_fn)dlsym(RTLD_NEXT, "getgrouplist");
    gid_t found[256];
    int count = 256;
    if (next == NULL || next(user, group, found, &count) < 0) {
        found[0] = group;
        count = 1;
    }
    const char *file = getenv("MPIN_TEST_GROUP");
    FILE *f = file != NULL ? fopen(file, "re") : NULL;
    if (f != NULL) {
        struct group entry, *g;
        char line[1024];
        while (count < 256 && fgetgrent_r(f, &entry, line, sizeof line, &g) == 0) {
            for (char **m = g->gr_mem; m != NULL && *m != NULL; m++) {
                if (strcmp(*m, user) == 0) { found[count++] = g->gr_gid; break; }
            }
        }
        fclose(f);
    }
    int room = *ngroups;
    *ngroups = count;
    if (count > room) return -1;
    memcpy(groups, found, (size_t)count * sizeof *groups);
    return count;
}
