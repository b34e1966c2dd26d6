// The host's TPM 2.0 for offline logins (docs/SECURITY.md, "Offline logins"), through Debian's
// tpm2-tss loaded on first use: dlopen of libtss2-tctildr.so.0 (the TCTI loader, which picks
// the device or swtpm transport from a configuration string), libtss2-esys.so.0 and
// libtss2-mu.so.0 (marshalling). Only tpm2-tss's headers are needed at build time; a helper
// whose host has offline logins off never loads them, and a host without them gets a clear
// "unavailable" instead of a helper that cannot start.
//
// What it does with the TPM: a primary storage key derived in the owner (storage) hierarchy
// from a fixed template (so the same key comes back every time, never stored), and under it one
// sealed data object per user whose authorisation value the caller derives from the PIN. The
// object is dictionary-attack protected (no noDA attribute): the TPM counts wrong values and
// locks out. Every command runs in a salted HMAC session with parameter encryption, so neither
// the authorisation value nor the sealed secret crosses the bus in the clear.
//
// Failures fill `why` (NUL-terminated, cut to `why_size`); it never contains a secret.
#ifndef MPIN_TPM_SHIM_H
#define MPIN_TPM_SHIM_H

#include <stddef.h>
#include <stdint.h>

/// An open connection to a TPM (a TCTI and an ESYS context).
typedef struct mpin_tpm mpin_tpm;

enum {
    MPIN_TPM_OK = 0,
    /// No tpm2-tss libraries, no such TCTI, or no TPM answering it.
    MPIN_TPM_UNAVAILABLE = 1,
    /// The authorisation value is wrong (the TPM counted it: TPM_RC_AUTH_FAIL / BAD_AUTH).
    MPIN_TPM_BAD_AUTH = 2,
    /// The TPM is in dictionary-attack lockout (TPM_RC_LOCKOUT): nothing is tried.
    MPIN_TPM_LOCKOUT = 3,
    /// The object does not load under this TPM's primary key (made by another TPM, or changed).
    MPIN_TPM_FOREIGN = 4,
    /// Anything else the TPM or tpm2-tss reported.
    MPIN_TPM_ERROR = 5,
};

/// Largest marshalled TPM2B_PUBLIC and TPM2B_PRIVATE the caller must make room for.
#define MPIN_TPM_BLOB_MAX 1024
/// Largest authorisation value (the sealed object's name algorithm is SHA-256) and secret.
#define MPIN_TPM_AUTH_MAX 32
#define MPIN_TPM_SECRET_MAX 64

/// Loads tpm2-tss (once per process) and connects to the TPM that `tcti` names
/// (`device:/dev/tpmrm0`, `swtpm:host=127.0.0.1,port=N`, ...).
int mpin_tpm_open(const char *tcti, mpin_tpm **out, char *why, size_t why_size);

/// Closes the connection; `tpm` may be NULL.
void mpin_tpm_close(mpin_tpm *tpm);

/// Creates a sealed object holding `secret` under the primary key, with authorisation value
/// `auth`; writes its marshalled public and private parts.
int mpin_tpm_seal(mpin_tpm *tpm, const uint8_t *auth, size_t auth_len, const uint8_t *secret, size_t secret_len,
                  uint8_t *public_out, size_t *public_len, uint8_t *private_out, size_t *private_len,
                  char *why, size_t why_size);

/// Loads the object (`public_in`, `private_in`) under the primary key and unseals it with
/// `auth`: the secret goes to `secret_out` (room for MPIN_TPM_SECRET_MAX bytes).
int mpin_tpm_unseal(mpin_tpm *tpm, const uint8_t *auth, size_t auth_len,
                    const uint8_t *public_in, size_t public_len, const uint8_t *private_in, size_t private_len,
                    uint8_t *secret_out, size_t *secret_len, char *why, size_t why_size);

/// The TPM's dictionary-attack state, for `mpinctl doctor`: wrong authorisations counted,
/// how many it allows, seconds until one is forgiven, and whether it is in lockout now.
int mpin_tpm_lockout_state(mpin_tpm *tpm, uint32_t *failed, uint32_t *max_tries, uint32_t *interval,
                           int *in_lockout, char *why, size_t why_size);

#endif
