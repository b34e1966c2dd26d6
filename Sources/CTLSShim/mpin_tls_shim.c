// libssl is loaded on first use (dlopen), not when mpin-pam-helper starts: a login against a
// plain-http backend, or a user without a registration, never pays for it, and a missing
// libssl becomes a TLS failure for the login instead of a helper that cannot start. libssl and
// libcrypto alone cost a fraction of libcurl's load (which brings them plus nghttp2, ssh2,
// ldap, gssapi, psl, ...). See mpin_tls_shim.h for the interface.

#include "mpin_tls_shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
    int (*init_crypto)(uint64_t options, const OPENSSL_INIT_SETTINGS *settings);
    const SSL_METHOD *(*client_method)(void);
    SSL_CTX *(*ctx_new)(const SSL_METHOD *method);
    void (*ctx_free)(SSL_CTX *ctx);
    long (*ctx_ctrl)(SSL_CTX *ctx, int command, long larg, void *parg);
    uint64_t (*ctx_set_options)(SSL_CTX *ctx, uint64_t options);
    void (*ctx_set_verify)(SSL_CTX *ctx, int mode, SSL_verify_cb callback);
    int (*ctx_load_verify_locations)(SSL_CTX *ctx, const char *file, const char *directory);
    int (*ctx_set_default_verify_paths)(SSL_CTX *ctx);
    SSL *(*ssl_new)(SSL_CTX *ctx);
    void (*ssl_free)(SSL *ssl);
    int (*set_fd)(SSL *ssl, int fd);
    long (*ssl_ctrl)(SSL *ssl, int command, long larg, void *parg);
    X509_VERIFY_PARAM *(*get0_param)(SSL *ssl);
    int (*connect)(SSL *ssl);
    int (*read)(SSL *ssl, void *buffer, int count);
    int (*write)(SSL *ssl, const void *buffer, int count);
    int (*get_error)(const SSL *ssl, int result);
    long (*get_verify_result)(const SSL *ssl);
    int (*shutdown)(SSL *ssl);
    int (*pending)(const SSL *ssl);
    int (*param_set1_host)(X509_VERIFY_PARAM *param, const char *name, size_t length);
    int (*param_set1_ip_asc)(X509_VERIFY_PARAM *param, const char *address);
    void (*param_set_hostflags)(X509_VERIFY_PARAM *param, unsigned int flags);
    int (*param_set_flags)(X509_VERIFY_PARAM *param, unsigned long flags);
    const char *(*verify_error_string)(long code);
    unsigned long (*err_get_error)(void);
    void (*err_error_string_n)(unsigned long code, char *buffer, size_t size);
    void (*err_clear_error)(void);
} api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded = 0;

// Assigning dlsym's void * to a function pointer is what POSIX specifies for dlsym. A handle's
// lookup also searches the libraries it depends on, so libcrypto's functions come through it.
#define RESOLVE(field, symbol) \
    do { *(void **)(&api.field) = dlsym(library, symbol); if (api.field == NULL) return; } while (0)

static void load(void) {
    void *library = dlopen("libssl.so.3", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
    // Never closed: OpenSSL stays for the life of the process.
    RESOLVE(init_crypto, "OPENSSL_init_crypto");
    // No clean-up at exit: OpenSSL's atexit handler frees every table it built, a good part of
    // a login's TLS cost in a process that is about to end anyway. The configuration file is
    // read as libcurl has it read (the system's TLS policy applies).
    if (api.init_crypto(OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_LOAD_CONFIG, NULL) != 1) return;
    RESOLVE(client_method, "TLS_client_method");
    RESOLVE(ctx_new, "SSL_CTX_new");
    RESOLVE(ctx_free, "SSL_CTX_free");
    RESOLVE(ctx_ctrl, "SSL_CTX_ctrl");
    RESOLVE(ctx_set_options, "SSL_CTX_set_options");
    RESOLVE(ctx_set_verify, "SSL_CTX_set_verify");
    RESOLVE(ctx_load_verify_locations, "SSL_CTX_load_verify_locations");
    RESOLVE(ctx_set_default_verify_paths, "SSL_CTX_set_default_verify_paths");
    RESOLVE(ssl_new, "SSL_new");
    RESOLVE(ssl_free, "SSL_free");
    RESOLVE(set_fd, "SSL_set_fd");
    RESOLVE(ssl_ctrl, "SSL_ctrl");
    RESOLVE(get0_param, "SSL_get0_param");
    RESOLVE(connect, "SSL_connect");
    RESOLVE(read, "SSL_read");
    RESOLVE(write, "SSL_write");
    RESOLVE(get_error, "SSL_get_error");
    RESOLVE(get_verify_result, "SSL_get_verify_result");
    RESOLVE(shutdown, "SSL_shutdown");
    RESOLVE(pending, "SSL_pending");
    RESOLVE(param_set1_host, "X509_VERIFY_PARAM_set1_host");
    RESOLVE(param_set1_ip_asc, "X509_VERIFY_PARAM_set1_ip_asc");
    RESOLVE(param_set_hostflags, "X509_VERIFY_PARAM_set_hostflags");
    RESOLVE(param_set_flags, "X509_VERIFY_PARAM_set_flags");
    RESOLVE(verify_error_string, "X509_verify_cert_error_string");
    RESOLVE(err_get_error, "ERR_get_error");
    RESOLVE(err_error_string_n, "ERR_error_string_n");
    RESOLVE(err_clear_error, "ERR_clear_error");
    loaded = 1;
}

int mpin_tls_available(void) {
    pthread_once(&load_once, load);
    return loaded;
}

struct mpin_tls {
    SSL_CTX *ctx;
    SSL *ssl;
    int fd;
    char host[256];
};

static void say(char *error, size_t size, const char *text) {
    if (error != NULL && size > 0) snprintf(error, size, "%s", text);
}

/// OpenSSL's first queued reason, or `fallback` when it queued none; empties the queue.
static void say_queued(char *error, size_t size, const char *fallback) {
    unsigned long code = api.err_get_error();
    if (code == 0) { say(error, size, fallback); return; }
    char reason[256];
    api.err_error_string_n(code, reason, sizeof reason);
    if (error != NULL && size > 0) snprintf(error, size, "%s", reason);
    api.err_clear_error();
}

/// An SSL_CTX with the settings that depend on nothing configured: TLS 1.2 or later, the peer
/// verified (against CAs mpin_tls_open loads), partial writes. NULL with OpenSSL's reason queued.
static SSL_CTX *base_context(void) {
    SSL_CTX *ctx = api.ctx_new(api.client_method());
    if (ctx == NULL) return NULL;
    api.ctx_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_2_VERSION, NULL);
    // Partial writes and a moved buffer on retry: the caller's loop works like send(2)'s.
    api.ctx_ctrl(ctx, SSL_CTRL_MODE, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER, NULL);
    api.ctx_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
    api.ctx_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return ctx;
}

/// The context mpin_tls_prepare made, taken (once) by the next mpin_tls_open.
static SSL_CTX *prepared_ctx;
/// Set by mpin_tls_open; read by mpin_tls_was_opened.
static int opened_once;

int mpin_tls_was_opened(void) { return __atomic_load_n(&opened_once, __ATOMIC_ACQUIRE); }

int mpin_tls_prepare(void) {
    if (!mpin_tls_available()) return 0;
    SSL_CTX *ctx = base_context();
    if (ctx == NULL) { api.err_clear_error(); return 0; }
    SSL_CTX *replaced = __atomic_exchange_n(&prepared_ctx, ctx, __ATOMIC_ACQ_REL);
    if (replaced != NULL) api.ctx_free(replaced);
    return 1;
}

mpin_tls *mpin_tls_open(int fd, const char *host, const char *ca_file, const char *ca_directory,
                        char *error, size_t error_size) {
    __atomic_store_n(&opened_once, 1, __ATOMIC_RELEASE);
    if (!mpin_tls_available()) {
        say(error, error_size, "libssl (libssl.so.3) could not be loaded; install libssl3");
        return NULL;
    }
    if (strlen(host) >= sizeof(((mpin_tls *)0)->host)) {
        say(error, error_size, "host name too long");
        return NULL;
    }
    api.err_clear_error();
    mpin_tls *tls = calloc(1, sizeof *tls);
    if (tls == NULL) { say(error, error_size, "out of memory"); return NULL; }
    tls->fd = fd;
    snprintf(tls->host, sizeof tls->host, "%s", host);
    tls->ctx = __atomic_exchange_n(&prepared_ctx, NULL, __ATOMIC_ACQ_REL);
    if (tls->ctx == NULL) tls->ctx = base_context();
    if (tls->ctx == NULL) goto failed;
    if (ca_file != NULL || ca_directory != NULL) {
        // The configured CAs instead of the system's (mpin.conf(5): cacert, capath).
        if (api.ctx_load_verify_locations(tls->ctx, ca_file, ca_directory) != 1) {
            char reason[200];
            say_queued(reason, sizeof reason, "unreadable");
            snprintf(error, error_size, "cannot use the CA certificates at %s: %s",
                     ca_file != NULL ? ca_file : ca_directory, reason);
            goto cleanup;
        }
    } else if (api.ctx_set_default_verify_paths(tls->ctx) != 1) {
        goto failed;
    }
    tls->ssl = api.ssl_new(tls->ctx);
    if (tls->ssl == NULL || api.set_fd(tls->ssl, fd) != 1) goto failed;
    X509_VERIFY_PARAM *param = api.get0_param(tls->ssl);
    // A chain may end at any certificate of the trusted set, not only at a self-signed root:
    // libcurl's default, which lets `cacert` hold the server's own self-signed certificate
    // beside others of the same subject (the old and the new one across a reload).
    if (api.param_set_flags(param, X509_V_FLAG_PARTIAL_CHAIN) != 1) goto failed;
    if (api.param_set1_ip_asc(param, host) != 1) {
        // A DNS name: checked against the certificate (no partial wildcards such as f*.example),
        // and sent as SNI. An IP address is neither sent nor matched as a name.
        api.err_clear_error();
        api.param_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        if (api.param_set1_host(param, host, 0) != 1) goto failed;
        if (api.ssl_ctrl(tls->ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name, (void *)host) != 1) goto failed;
    }
    return tls;
failed:
    say_queued(error, error_size, "OpenSSL could not set up the connection");
cleanup:
    mpin_tls_free(tls, 0);
    return NULL;
}

/// What a failed or waiting call means, from SSL_get_error; fills `error` on failure.
static int outcome(mpin_tls *tls, int result, char *error, size_t error_size) {
    int saved = errno;
    switch (api.get_error(tls->ssl, result)) {
    case SSL_ERROR_WANT_READ: return MPIN_TLS_WANT_READ;
    case SSL_ERROR_WANT_WRITE: return MPIN_TLS_WANT_WRITE;
    case SSL_ERROR_ZERO_RETURN: return MPIN_TLS_CLOSED;
    case SSL_ERROR_SYSCALL: {
        unsigned long queued = api.err_get_error();
        if (queued == 0 && saved == 0) return MPIN_TLS_EOF;  // OpenSSL 1.1: EOF without close_notify
        if (queued == 0) { say(error, error_size, strerror(saved)); errno = saved; return MPIN_TLS_FAILED; }
        char reason[256];
        api.err_error_string_n(queued, reason, sizeof reason);
        say(error, error_size, reason);
        api.err_clear_error();
        return MPIN_TLS_FAILED;
    }
    case SSL_ERROR_SSL: {
        unsigned long queued = api.err_get_error();
        api.err_clear_error();
        // OpenSSL 3: the peer closed the TCP connection without close_notify.
        if (ERR_GET_LIB(queued) == ERR_LIB_SSL && ERR_GET_REASON(queued) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
            return MPIN_TLS_EOF;
        }
        char reason[256] = "TLS protocol error";
        if (queued != 0) api.err_error_string_n(queued, reason, sizeof reason);
        say(error, error_size, reason);
        errno = 0;
        return MPIN_TLS_FAILED;
    }
    default:
        say(error, error_size, "TLS error");
        return MPIN_TLS_FAILED;
    }
}

int mpin_tls_handshake(mpin_tls *tls, char *error, size_t error_size) {
    api.err_clear_error();
    errno = 0;
    int result = api.connect(tls->ssl);
    if (result == 1) return 0;
    int code = outcome(tls, result, error, error_size);
    if (code == MPIN_TLS_WANT_READ || code == MPIN_TLS_WANT_WRITE) return code;
    long verified = api.get_verify_result(tls->ssl);
    if (verified == X509_V_ERR_HOSTNAME_MISMATCH || verified == X509_V_ERR_IP_ADDRESS_MISMATCH) {
        snprintf(error, error_size, "certificate verify failed: the certificate's subject name does not match the host name %s",
                 tls->host);
    } else if (verified != X509_V_OK) {
        snprintf(error, error_size, "certificate verify failed: %s", api.verify_error_string(verified));
    } else if (code == MPIN_TLS_CLOSED || code == MPIN_TLS_EOF) {
        say(error, error_size, "the server closed the connection during the TLS handshake");
    }
    return MPIN_TLS_FAILED;
}

long mpin_tls_write(mpin_tls *tls, const void *bytes, size_t count, char *error, size_t error_size) {
    api.err_clear_error();
    errno = 0;
    int result = api.write(tls->ssl, bytes, count > 1 << 30 ? 1 << 30 : (int)count);
    if (result > 0) return result;
    int code = outcome(tls, result, error, error_size);
    return code == MPIN_TLS_CLOSED || code == MPIN_TLS_EOF ? MPIN_TLS_FAILED : code;
}

long mpin_tls_read(mpin_tls *tls, void *bytes, size_t count, char *error, size_t error_size) {
    api.err_clear_error();
    errno = 0;
    int result = api.read(tls->ssl, bytes, count > 1 << 30 ? 1 << 30 : (int)count);
    if (result > 0) return result;
    return outcome(tls, result, error, error_size);
}

int mpin_tls_idle_usable(mpin_tls *tls) {
    if (api.pending(tls->ssl) > 0) return 0;
    struct pollfd entry = {.fd = tls->fd, .events = POLLIN};
    if (poll(&entry, 1, 0) == 0) return 1;
    // Something arrived while idle: usable only if it was records with no data for us.
    unsigned char byte;
    return mpin_tls_read(tls, &byte, 1, NULL, 0) == MPIN_TLS_WANT_READ;
}

void mpin_tls_free(mpin_tls *tls, int notify) {
    if (tls == NULL) return;
    if (tls->ssl != NULL) {
        if (notify) {
            api.shutdown(tls->ssl);
            api.err_clear_error();
        }
        api.ssl_free(tls->ssl);
    }
    if (tls->ctx != NULL) api.ctx_free(tls->ctx);
    free(tls);
}
