/* Small non-variadic wrappers around libpam for the Swift module (Swift cannot call
 * variadic C functions, and the conversation is a C callback). */
#ifndef MPIN_PAM_SHIM_H
#define MPIN_PAM_SHIM_H

#include <security/pam_appl.h>
#include <security/pam_modules.h>
#include <stddef.h>

/* Asks one question through the application's conversation function. On PAM_SUCCESS,
 * *response is a malloc'd string (or NULL) the caller must wipe with mpin_pam_wipe_free. */
int mpin_pam_converse(pam_handle_t *pamh, int style, const char *message, char **response);

/* Logs one line through pam_syslog (facility LOG_AUTHPRIV, prefixed with the service). */
void mpin_pam_log(pam_handle_t *pamh, int priority, const char *line);

/* The user name PAM knows (asking through the conversation if needed), or NULL. */
const char *mpin_pam_user(pam_handle_t *pamh, int *status);

/* PAM_AUTHTOK as set by an earlier module, or NULL. Never freed by the caller. */
const char *mpin_pam_authtok(pam_handle_t *pamh);

/* A string item PAM knows (PAM_SERVICE, PAM_RHOST, PAM_TTY), or NULL; never a token.
 * Never freed by the caller. */
const char *mpin_pam_string_item(pam_handle_t *pamh, int item_type);
/* Overwrites a NUL-terminated secret in a way the compiler keeps, then frees it. */
void mpin_pam_wipe_free(char *secret);

#endif
