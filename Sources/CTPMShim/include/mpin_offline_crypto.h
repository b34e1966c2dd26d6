// PBKDF2-HMAC-SHA-256 and HMAC-SHA-256 for offline logins (docs/SECURITY.md §4), from OpenSSL's
// libcrypto, loaded on first use (dlopen of libcrypto.so.3) as tpm2-tss is: a helper whose host
// has offline logins off never loads it. tpm2-tss's ESAPI links the same libcrypto, so an
// offline login loads nothing more for these.
//
// Failures fill `why` (NUL-terminated, cut to `why_size`); it never contains a secret.
#ifndef MPIN_OFFLINE_CRYPTO_H
#define MPIN_OFFLINE_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

/// PBKDF2 (RFC 8018 §5.2) with HMAC-SHA-256, one 32-byte block into `out`. 0 on success, -1
/// when libcrypto cannot be loaded or fails.
int mpin_offline_pbkdf2_sha256(const uint8_t *password, size_t password_len, const uint8_t *salt, size_t salt_len,
                               uint32_t iterations, uint8_t out[32], char *why, size_t why_size);

/// HMAC-SHA-256 (RFC 2104) of `message` under `key` into `out`. 0 on success, -1 otherwise.
int mpin_offline_hmac_sha256(const uint8_t *key, size_t key_len, const uint8_t *message, size_t message_len,
                             uint8_t out[32], char *why, size_t why_size);

#endif
