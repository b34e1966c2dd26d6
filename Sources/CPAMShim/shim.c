#include "mpin_pam_shim.h"

#include <security/pam_ext.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

int mpin_pam_converse(pam_handle_t *pamh, int style, const char *message, char **response) {
    const struct pam_conv *conv = NULL;
    struct pam_message msg;
    const struct pam_message *msgs[1];
    struct pam_response *resp = NULL;
    int rc;

    if (response != NULL) *response = NULL;
    rc = pam_get_item(pamh, PAM_CONV, (const void **)&conv);
    if (rc != PAM_SUCCESS) return rc;
    if (conv == NULL || conv->conv == NULL) return PAM_CONV_ERR;

    msg.msg_style = style;
    msg.msg = message;
    msgs[0] = &msg;
    rc = conv->conv(1, msgs, &resp, conv->appdata_ptr);
    if (rc != PAM_SUCCESS) {
        if (resp != NULL) { mpin_pam_wipe_free(resp->resp); free(resp); }
        return rc;
    }
    if (resp != NULL) {
        if (response != NULL) *response = resp->resp;
        else mpin_pam_wipe_free(resp->resp);
        free(resp);
    }
    return PAM_SUCCESS;
}

void mpin_pam_log(pam_handle_t *pamh, int priority, const char *line) {
    pam_syslog(pamh, priority, "%s", line);
}

const char *mpin_pam_user(pam_handle_t *pamh, int *status) {
    const char *user = NULL;
    *status = pam_get_user(pamh, &user, NULL);
    return *status == PAM_SUCCESS ? user : NULL;
}

const char *mpin_pam_authtok(pam_handle_t *pamh) {
    const void *item = NULL;
    if (pam_get_item(pamh, PAM_AUTHTOK, &item) != PAM_SUCCESS) return NULL;
    return (const char *)item;
}

void mpin_pam_wipe_free(char *secret) {
    if (secret == NULL) return;
    explicit_bzero(secret, strlen(secret));
    free(secret);
}

const char *mpin_pam_string_item(pam_handle_t *pamh, int item_type) {
    const void *item = NULL;
    if (item_type == PAM_AUTHTOK || item_type == PAM_OLDAUTHTOK) return NULL;
    if (pam_get_item(pamh, item_type, &item) != PAM_SUCCESS) return NULL;
    return (const char *)item;
}
