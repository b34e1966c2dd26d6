// See mpin_offline_crypto.h. Written from OpenSSL 3's manual pages PKCS5_PBKDF2_HMAC(3) and
// EVP_Q_mac(3) (HMAC through the EVP MAC interface; the one-shot HMAC() is deprecated).

#include "mpin_offline_crypto.h"

#include <dlfcn.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static struct {
    __typeof__(&PKCS5_PBKDF2_HMAC) pbkdf2;
    __typeof__(&EVP_sha256) sha256;
    __typeof__(&EVP_Q_mac) mac;
} crypto;

static pthread_once_t crypto_once = PTHREAD_ONCE_INIT;
static int crypto_loaded = 0;
static char crypto_failure[160];

#define RESOLVE(library, field, symbol) \
    do { \
        *(void **)(&crypto.field) = dlsym(library, symbol); \
        if (crypto.field == NULL) { snprintf(crypto_failure, sizeof crypto_failure, "libcrypto has no %s", symbol); return; } \
    } while (0)

static void load_crypto(void) {
    void *library = dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(crypto_failure, sizeof crypto_failure, "cannot load libcrypto.so.3 (install libssl3)");
        return;
    }
    RESOLVE(library, pbkdf2, "PKCS5_PBKDF2_HMAC");
    RESOLVE(library, sha256, "EVP_sha256");
    RESOLVE(library, mac, "EVP_Q_mac");
    crypto_loaded = 1;
}

static int loaded(char *why, size_t why_size) {
    pthread_once(&crypto_once, load_crypto);
    if (!crypto_loaded && why != NULL && why_size > 0) snprintf(why, why_size, "%s", crypto_failure);
    return crypto_loaded;
}

int mpin_offline_pbkdf2_sha256(const uint8_t *password, size_t password_len, const uint8_t *salt, size_t salt_len,
                               uint32_t iterations, uint8_t out[32], char *why, size_t why_size) {
    if (!loaded(why, why_size)) return -1;
    if (password_len > 0x7fffffff || salt_len > 0x7fffffff || iterations == 0 || iterations > 0x7fffffff) {
        snprintf(why, why_size, "PBKDF2 arguments out of range");
        return -1;
    }
    // OpenSSL reads no byte of an empty password, but wants a pointer.
    static const uint8_t none = 0;
    if (crypto.pbkdf2((const char *)(password_len > 0 ? password : &none), (int)password_len,
                      salt_len > 0 ? salt : &none, (int)salt_len, (int)iterations, crypto.sha256(), 32, out) != 1) {
        snprintf(why, why_size, "libcrypto's PBKDF2 failed");
        return -1;
    }
    return 0;
}

int mpin_offline_hmac_sha256(const uint8_t *key, size_t key_len, const uint8_t *message, size_t message_len,
                             uint8_t out[32], char *why, size_t why_size) {
    if (!loaded(why, why_size)) return -1;
    static const uint8_t none = 0;
    size_t written = 0;
    if (crypto.mac(NULL, "HMAC", NULL, "SHA256", NULL, key_len > 0 ? key : &none, key_len,
                   message_len > 0 ? message : &none, message_len, out, 32, &written) == NULL || written != 32) {
        snprintf(why, why_size, "libcrypto's HMAC failed");
        return -1;
    }
    return 0;
}
