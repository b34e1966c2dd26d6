// See mpin_tpm_shim.h for what this does and why tpm2-tss is loaded on first use.
//
// Written from the TCG's TSS 2.0 Enhanced System API (ESAPI) specification, tpm2-tss's headers
// (tss2_esys.h, tss2_tctildr.h, tss2_mu.h) and its ESAPI integration tests for sealing and
// unsealing with an authorisation value (test/integration/esys-unseal-password-auth.int.c,
// esys-create-session-auth.int.c), and TPM 2.0 Part 1 §17–19 (sessions, parameter encryption)
// and §19.7 (dictionary-attack protection). kanidm's unix daemon (tpm code in kanidm-hsm-crypto)
// showed the shape of a PIN-bound, TPM-sealed offline credential.

#include "mpin_tpm_shim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_mu.h>
#include <tss2/tss2_tctildr.h>

static struct {
    __typeof__(&Tss2_TctiLdr_Initialize) tcti_initialize;
    __typeof__(&Tss2_TctiLdr_Finalize) tcti_finalize;
    __typeof__(&Esys_Initialize) initialize;
    __typeof__(&Esys_Finalize) finalize;
    __typeof__(&Esys_CreatePrimary) create_primary;
    __typeof__(&Esys_Create) create;
    __typeof__(&Esys_Load) load;
    __typeof__(&Esys_Unseal) unseal;
    __typeof__(&Esys_FlushContext) flush;
    __typeof__(&Esys_TR_SetAuth) set_auth;
    __typeof__(&Esys_StartAuthSession) start_session;
    __typeof__(&Esys_TRSess_SetAttributes) session_attributes;
    __typeof__(&Esys_GetCapability) get_capability;
    __typeof__(&Esys_Free) free;
    __typeof__(&Tss2_MU_TPM2B_PUBLIC_Marshal) public_marshal;
    __typeof__(&Tss2_MU_TPM2B_PUBLIC_Unmarshal) public_unmarshal;
    __typeof__(&Tss2_MU_TPM2B_PRIVATE_Marshal) private_marshal;
    __typeof__(&Tss2_MU_TPM2B_PRIVATE_Unmarshal) private_unmarshal;
} api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded = 0;
static char load_failure[200];

struct mpin_tpm {
    TSS2_TCTI_CONTEXT *tcti;
    ESYS_CONTEXT *esys;
};

static void say(char *why, size_t size, const char *format, ...) {
    if (why == NULL || size == 0) return;
    va_list args;
    va_start(args, format);
    vsnprintf(why, size, format, args);
    va_end(args);
}

static void *open_library(const char *name) {
    void *library = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) snprintf(load_failure, sizeof load_failure, "cannot load %s (install tpm2-tss: libtss2-esys-3.0.2-0, libtss2-tctildr0)", name);
    return library;
}

// POSIX's way to turn dlsym's void * into a function pointer.
#define RESOLVE(library, field, symbol) \
    do { \
        *(void **)(&api.field) = dlsym(library, symbol); \
        if (api.field == NULL) { snprintf(load_failure, sizeof load_failure, "tpm2-tss has no %s", symbol); return; } \
    } while (0)

static void load_libraries(void) {
    // tpm2-tss logs its errors to stderr unless told otherwise; a failing TCTI would otherwise
    // print lines to mpinctl's terminal that say less than the message this shim returns.
    setenv("TSS2_LOG", "all+NONE", 0);
    void *tctildr = open_library("libtss2-tctildr.so.0");
    if (tctildr == NULL) return;
    void *esys = open_library("libtss2-esys.so.0");
    if (esys == NULL) return;
    void *mu = open_library("libtss2-mu.so.0");
    if (mu == NULL) return;
    RESOLVE(tctildr, tcti_initialize, "Tss2_TctiLdr_Initialize");
    RESOLVE(tctildr, tcti_finalize, "Tss2_TctiLdr_Finalize");
    RESOLVE(esys, initialize, "Esys_Initialize");
    RESOLVE(esys, finalize, "Esys_Finalize");
    RESOLVE(esys, create_primary, "Esys_CreatePrimary");
    RESOLVE(esys, create, "Esys_Create");
    RESOLVE(esys, load, "Esys_Load");
    RESOLVE(esys, unseal, "Esys_Unseal");
    RESOLVE(esys, flush, "Esys_FlushContext");
    RESOLVE(esys, set_auth, "Esys_TR_SetAuth");
    RESOLVE(esys, start_session, "Esys_StartAuthSession");
    RESOLVE(esys, session_attributes, "Esys_TRSess_SetAttributes");
    RESOLVE(esys, get_capability, "Esys_GetCapability");
    RESOLVE(esys, free, "Esys_Free");
    RESOLVE(mu, public_marshal, "Tss2_MU_TPM2B_PUBLIC_Marshal");
    RESOLVE(mu, public_unmarshal, "Tss2_MU_TPM2B_PUBLIC_Unmarshal");
    RESOLVE(mu, private_marshal, "Tss2_MU_TPM2B_PRIVATE_Marshal");
    RESOLVE(mu, private_unmarshal, "Tss2_MU_TPM2B_PRIVATE_Unmarshal");
    loaded = 1;
}

int mpin_tpm_open(const char *tcti, mpin_tpm **out, char *why, size_t why_size) {
    *out = NULL;
    pthread_once(&load_once, load_libraries);
    if (!loaded) { say(why, why_size, "%s", load_failure); return MPIN_TPM_UNAVAILABLE; }
    mpin_tpm *tpm = calloc(1, sizeof *tpm);
    if (tpm == NULL) { say(why, why_size, "out of memory"); return MPIN_TPM_ERROR; }
    TSS2_RC rc = api.tcti_initialize(tcti, &tpm->tcti);
    if (rc != TSS2_RC_SUCCESS) {
        say(why, why_size, "no TPM answers at \"%s\" (TCTI error 0x%x)", tcti, rc);
        free(tpm);
        return MPIN_TPM_UNAVAILABLE;
    }
    rc = api.initialize(&tpm->esys, tpm->tcti, NULL);
    if (rc != TSS2_RC_SUCCESS) {
        say(why, why_size, "the TPM at \"%s\" cannot be used (ESYS error 0x%x)", tcti, rc);
        api.tcti_finalize(&tpm->tcti);
        free(tpm);
        return MPIN_TPM_UNAVAILABLE;
    }
    *out = tpm;
    return MPIN_TPM_OK;
}

void mpin_tpm_close(mpin_tpm *tpm) {
    if (tpm == NULL) return;
    if (tpm->esys != NULL) api.finalize(&tpm->esys);
    if (tpm->tcti != NULL) api.tcti_finalize(&tpm->tcti);
    free(tpm);
}

// The label in the primary key's template: a key of our own, distinct from the SRK other
// software derives from the same hierarchy with an empty `unique`.
static const char primary_label[] = "mpin-pam offline logins";

// The primary storage key: ECC P-256, restricted decryption (a parent), never leaves the TPM,
// empty authorisation and noDA (using it as a parent is not a guess at anything). The TPM derives
// it from the owner hierarchy's seed and this template, so the same key comes back each time on
// this TPM and never on another; a TPM2_Clear (new seed) makes every object under it useless.
static TSS2_RC create_primary(mpin_tpm *tpm, ESYS_TR *primary) {
    TPM2B_SENSITIVE_CREATE sensitive = {0};
    TPM2B_PUBLIC template = {0};
    template.publicArea.type = TPM2_ALG_ECC;
    template.publicArea.nameAlg = TPM2_ALG_SHA256;
    template.publicArea.objectAttributes = TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT | TPMA_OBJECT_FIXEDTPM
        | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA;
    template.publicArea.parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
    template.publicArea.parameters.eccDetail.symmetric.keyBits.aes = 128;
    template.publicArea.parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
    template.publicArea.parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
    template.publicArea.parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
    template.publicArea.parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
    template.publicArea.unique.ecc.x.size = sizeof primary_label - 1;
    memcpy(template.publicArea.unique.ecc.x.buffer, primary_label, sizeof primary_label - 1);
    TPM2B_DATA outside = {0};
    TPML_PCR_SELECTION pcrs = {0};
    TPM2B_PUBLIC *out_public = NULL;
    TPM2B_CREATION_DATA *creation = NULL;
    TPM2B_DIGEST *hash = NULL;
    TPMT_TK_CREATION *ticket = NULL;
    TSS2_RC rc = api.create_primary(tpm->esys, ESYS_TR_RH_OWNER, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE,
                                    &sensitive, &template, &outside, &pcrs, primary, &out_public, &creation, &hash, &ticket);
    api.free(out_public);
    api.free(creation);
    api.free(hash);
    api.free(ticket);
    return rc;
}

// A session salted with the primary key (ECDH to its public key): its key is unknown to anyone
// watching the bus, so the authorisation HMAC cannot be tried against PINs off the wire, and
// with `attributes` it encrypts the first parameter of the command (DECRYPT) or the response
// (ENCRYPT) with AES-128-CFB.
static TSS2_RC start_session(mpin_tpm *tpm, ESYS_TR primary, TPMA_SESSION attributes, ESYS_TR *session) {
    TPMT_SYM_DEF symmetric = {.algorithm = TPM2_ALG_AES, .keyBits = {.aes = 128}, .mode = {.aes = TPM2_ALG_CFB}};
    TSS2_RC rc = api.start_session(tpm->esys, primary, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE,
                                   NULL, TPM2_SE_HMAC, &symmetric, TPM2_ALG_SHA256, session);
    if (rc != TSS2_RC_SUCCESS) return rc;
    rc = api.session_attributes(tpm->esys, *session, attributes | TPMA_SESSION_CONTINUESESSION, 0xff);
    if (rc != TSS2_RC_SUCCESS) {
        api.flush(tpm->esys, *session);
        *session = ESYS_TR_NONE;
    }
    return rc;
}

// A TPM response code (layer 0) without the handle, session or parameter number format-1 codes
// carry.
static int is_tpm_code(TSS2_RC rc, TPM2_RC code) {
    if ((rc & TSS2_RC_LAYER_MASK) != 0) return 0;
    if ((rc & TPM2_RC_FMT1) != 0) return (rc & 0xBF) == code;
    return (rc & 0xFFFF) == code;
}

static int classify_auth(TSS2_RC rc) {
    if (is_tpm_code(rc, TPM2_RC_LOCKOUT)) return MPIN_TPM_LOCKOUT;
    if (is_tpm_code(rc, TPM2_RC_AUTH_FAIL) || is_tpm_code(rc, TPM2_RC_BAD_AUTH)) return MPIN_TPM_BAD_AUTH;
    return MPIN_TPM_ERROR;
}

int mpin_tpm_seal(mpin_tpm *tpm, const uint8_t *auth, size_t auth_len, const uint8_t *secret, size_t secret_len,
                  uint8_t *public_out, size_t *public_len, uint8_t *private_out, size_t *private_len,
                  char *why, size_t why_size) {
    if (auth_len > MPIN_TPM_AUTH_MAX || secret_len > MPIN_TPM_SECRET_MAX) {
        say(why, why_size, "authorisation value or secret too long");
        return MPIN_TPM_ERROR;
    }
    ESYS_TR primary = ESYS_TR_NONE, session = ESYS_TR_NONE;
    TPM2B_PRIVATE *out_private = NULL;
    TPM2B_PUBLIC *out_public = NULL;
    TPM2B_CREATION_DATA *creation = NULL;
    TPM2B_DIGEST *hash = NULL;
    TPMT_TK_CREATION *ticket = NULL;
    int result = MPIN_TPM_ERROR;
    TPM2B_SENSITIVE_CREATE sensitive = {0};

    TSS2_RC rc = create_primary(tpm, &primary);
    if (rc != TSS2_RC_SUCCESS) { say(why, why_size, "TPM2_CreatePrimary failed (0x%x)", rc); goto done; }
    rc = start_session(tpm, primary, TPMA_SESSION_DECRYPT, &session);
    if (rc != TSS2_RC_SUCCESS) { say(why, why_size, "TPM2_StartAuthSession failed (0x%x)", rc); goto done; }

    // A sealed data object (keyedhash, no scheme): fixed to this TPM and this parent, used with
    // its authorisation value, and counted by the TPM's dictionary-attack protection (no noDA).
    TPM2B_PUBLIC template = {0};
    template.publicArea.type = TPM2_ALG_KEYEDHASH;
    template.publicArea.nameAlg = TPM2_ALG_SHA256;
    template.publicArea.objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_USERWITHAUTH;
    template.publicArea.parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL;
    sensitive.sensitive.userAuth.size = (UINT16)auth_len;
    memcpy(sensitive.sensitive.userAuth.buffer, auth, auth_len);
    sensitive.sensitive.data.size = (UINT16)secret_len;
    memcpy(sensitive.sensitive.data.buffer, secret, secret_len);
    TPM2B_DATA outside = {0};
    TPML_PCR_SELECTION pcrs = {0};
    rc = api.create(tpm->esys, primary, session, ESYS_TR_NONE, ESYS_TR_NONE, &sensitive, &template, &outside, &pcrs,
                    &out_private, &out_public, &creation, &hash, &ticket);
    if (rc != TSS2_RC_SUCCESS) { say(why, why_size, "TPM2_Create failed (0x%x)", rc); goto done; }

    size_t offset = 0;
    if (api.public_marshal(out_public, public_out, MPIN_TPM_BLOB_MAX, &offset) != TSS2_RC_SUCCESS) {
        say(why, why_size, "cannot marshal the object's public part");
        goto done;
    }
    *public_len = offset;
    offset = 0;
    if (api.private_marshal(out_private, private_out, MPIN_TPM_BLOB_MAX, &offset) != TSS2_RC_SUCCESS) {
        say(why, why_size, "cannot marshal the object's private part");
        goto done;
    }
    *private_len = offset;
    result = MPIN_TPM_OK;
done:
    explicit_bzero(&sensitive, sizeof sensitive);
    api.free(out_private);
    api.free(out_public);
    api.free(creation);
    api.free(hash);
    api.free(ticket);
    if (session != ESYS_TR_NONE) api.flush(tpm->esys, session);
    if (primary != ESYS_TR_NONE) api.flush(tpm->esys, primary);
    return result;
}

int mpin_tpm_unseal(mpin_tpm *tpm, const uint8_t *auth, size_t auth_len,
                    const uint8_t *public_in, size_t public_len, const uint8_t *private_in, size_t private_len,
                    uint8_t *secret_out, size_t *secret_len, char *why, size_t why_size) {
    if (auth_len > MPIN_TPM_AUTH_MAX) { say(why, why_size, "authorisation value too long"); return MPIN_TPM_ERROR; }
    TPM2B_PUBLIC in_public = {0};
    TPM2B_PRIVATE in_private = {0};
    size_t offset = 0;
    if (api.public_unmarshal(public_in, public_len, &offset, &in_public) != TSS2_RC_SUCCESS || offset != public_len) {
        say(why, why_size, "the stored public part does not parse");
        return MPIN_TPM_FOREIGN;
    }
    offset = 0;
    if (api.private_unmarshal(private_in, private_len, &offset, &in_private) != TSS2_RC_SUCCESS || offset != private_len) {
        say(why, why_size, "the stored private part does not parse");
        return MPIN_TPM_FOREIGN;
    }
    ESYS_TR primary = ESYS_TR_NONE, session = ESYS_TR_NONE, object = ESYS_TR_NONE;
    TPM2B_SENSITIVE_DATA *data = NULL;
    TPM2B_AUTH value = {0};
    int result = MPIN_TPM_ERROR;

    TSS2_RC rc = create_primary(tpm, &primary);
    if (rc != TSS2_RC_SUCCESS) { say(why, why_size, "TPM2_CreatePrimary failed (0x%x)", rc); goto done; }
    // The private part is encrypted and integrity-protected with a key only this TPM's primary
    // key has: made on another TPM (or changed), it does not load.
    rc = api.load(tpm->esys, primary, ESYS_TR_PASSWORD, ESYS_TR_NONE, ESYS_TR_NONE, &in_private, &in_public, &object);
    if (rc != TSS2_RC_SUCCESS) {
        result = (rc & TSS2_RC_LAYER_MASK) == 0 && (rc & TPM2_RC_WARN) != TPM2_RC_WARN ? MPIN_TPM_FOREIGN : MPIN_TPM_ERROR;
        say(why, why_size, result == MPIN_TPM_FOREIGN ? "the object does not load under this TPM's key (0x%x)"
                                                      : "TPM2_Load failed (0x%x)", rc);
        goto done;
    }
    value.size = (UINT16)auth_len;
    memcpy(value.buffer, auth, auth_len);
    rc = api.set_auth(tpm->esys, object, &value);
    if (rc != TSS2_RC_SUCCESS) { say(why, why_size, "Esys_TR_SetAuth failed (0x%x)", rc); goto done; }
    rc = start_session(tpm, primary, TPMA_SESSION_ENCRYPT, &session);
    if (rc != TSS2_RC_SUCCESS) { say(why, why_size, "TPM2_StartAuthSession failed (0x%x)", rc); goto done; }
    rc = api.unseal(tpm->esys, object, session, ESYS_TR_NONE, ESYS_TR_NONE, &data);
    if (rc != TSS2_RC_SUCCESS) {
        result = classify_auth(rc);
        switch (result) {
        case MPIN_TPM_LOCKOUT: say(why, why_size, "the TPM is in dictionary-attack lockout"); break;
        case MPIN_TPM_BAD_AUTH: say(why, why_size, "wrong authorisation value"); break;
        default: say(why, why_size, "TPM2_Unseal failed (0x%x)", rc); break;
        }
        // A failed authorisation ends the session in the TPM; ESYS's handle is still ours to free.
        goto done;
    }
    if (data->size > MPIN_TPM_SECRET_MAX) { say(why, why_size, "the sealed secret is too long"); goto done; }
    memcpy(secret_out, data->buffer, data->size);
    *secret_len = data->size;
    result = MPIN_TPM_OK;
done:
    explicit_bzero(&value, sizeof value);
    if (data != NULL) { explicit_bzero(data, sizeof *data); api.free(data); }
    if (object != ESYS_TR_NONE) api.flush(tpm->esys, object);
    if (session != ESYS_TR_NONE) api.flush(tpm->esys, session);
    if (primary != ESYS_TR_NONE) api.flush(tpm->esys, primary);
    return result;
}

int mpin_tpm_lockout_state(mpin_tpm *tpm, uint32_t *failed, uint32_t *max_tries, uint32_t *interval,
                           int *in_lockout, char *why, size_t why_size) {
    TPMI_YES_NO more = 0;
    TPMS_CAPABILITY_DATA *data = NULL;
    TSS2_RC rc = api.get_capability(tpm->esys, ESYS_TR_NONE, ESYS_TR_NONE, ESYS_TR_NONE, TPM2_CAP_TPM_PROPERTIES,
                                    TPM2_PT_PERMANENT, 32, &more, &data);
    if (rc != TSS2_RC_SUCCESS) { say(why, why_size, "TPM2_GetCapability failed (0x%x)", rc); return MPIN_TPM_ERROR; }
    *failed = *max_tries = *interval = 0;
    *in_lockout = 0;
    for (UINT32 i = 0; i < data->data.tpmProperties.count; i++) {
        TPMS_TAGGED_PROPERTY p = data->data.tpmProperties.tpmProperty[i];
        switch (p.property) {
        case TPM2_PT_PERMANENT: *in_lockout = (p.value & TPMA_PERMANENT_INLOCKOUT) != 0; break;
        case TPM2_PT_LOCKOUT_COUNTER: *failed = p.value; break;
        case TPM2_PT_MAX_AUTH_FAIL: *max_tries = p.value; break;
        case TPM2_PT_LOCKOUT_INTERVAL: *interval = p.value; break;
        default: break;
        }
    }
    api.free(data);
    return MPIN_TPM_OK;
}
