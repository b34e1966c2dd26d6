// TLS client connections over a socket the caller connected, through OpenSSL's libssl loaded on
// first use (dlopen of libssl.so.3, which brings libcrypto.so.3): what PlainHTTPTransport uses
// for https, instead of libcurl and its thirty-odd libraries. Only OpenSSL's headers are
// needed at build time; nothing links against libssl, so a login that needs no TLS never
// loads it.
//
// Every call is non-blocking: it returns MPIN_TLS_WANT_READ or MPIN_TLS_WANT_WRITE when the
// socket must become readable or writable first, and the caller polls against its deadline.
// Failures fill `error` (NUL-terminated, cut to `error_size`) with OpenSSL's reason.
#ifndef MPIN_TLS_SHIM_H
#define MPIN_TLS_SHIM_H

#include <stddef.h>

/// One TLS client connection (an SSL and its SSL_CTX); the socket stays the caller's.
typedef struct mpin_tls mpin_tls;

enum {
    /// The operation failed; `error` says why.
    MPIN_TLS_FAILED = -1,
    /// Wait until the socket is readable, then call again.
    MPIN_TLS_WANT_READ = -2,
    /// Wait until the socket is writable, then call again.
    MPIN_TLS_WANT_WRITE = -3,
    /// The peer ended the TLS session with close_notify.
    MPIN_TLS_CLOSED = -4,
    /// The peer closed the TCP connection without close_notify (a truncation if a response
    /// was under way).
    MPIN_TLS_EOF = -5,
};

/// Loads libssl once per process, whichever thread gets there first; 1 when it is usable.
int mpin_tls_available(void);

/// Makes, ahead of a connection, the SSL_CTX the next mpin_tls_open would make (OpenSSL 3's
/// algorithm fetches, 1.3-2 ms), with only the settings that depend on nothing configured; that
/// mpin_tls_open takes it and loads the CAs into it as it would into a new one. For a resident
/// mpin-pam-helper's idle child, which serves one login. 1 when a context is ready.
int mpin_tls_prepare(void);

/// 1 once this process has called mpin_tls_open (a login over https), else 0: a resident
/// helper's child tells its parent, which makes the SSL_CTX in the next children only while
/// logins use https.
int mpin_tls_was_opened(void);

/// A client connection on `fd` (connected, non-blocking) to `host`, an IP literal or a DNS
/// name, checked against the certificate: TLS 1.2 or later, the peer's chain verified against
/// `ca_file` and/or `ca_directory` (a hashed directory) when either is given, else against the
/// system's CA certificates; the name (or address) must match the certificate. SNI is sent for
/// DNS names only. NULL on failure (no usable libssl, unreadable CA file or directory).
mpin_tls *mpin_tls_open(int fd, const char *host, const char *ca_file, const char *ca_directory,
                        char *error, size_t error_size);

/// Advances the handshake: 0 when it is complete (certificate and name verified).
int mpin_tls_handshake(mpin_tls *tls, char *error, size_t error_size);

/// Writes up to `count` bytes; the number written (> 0), or a MPIN_TLS_* code. A write that
/// waited may be repeated with the same bytes from another address.
long mpin_tls_write(mpin_tls *tls, const void *bytes, size_t count, char *error, size_t error_size);

/// Reads up to `count` bytes; the number read (> 0), or a MPIN_TLS_* code. Bytes OpenSSL has
/// already decrypted are returned without touching the socket, so a caller polls only after
/// MPIN_TLS_WANT_READ.
long mpin_tls_read(mpin_tls *tls, void *bytes, size_t count, char *error, size_t error_size);

/// Whether a kept connection is still usable after being idle: nothing but TLS records of no
/// content (session tickets) has arrived, and the peer has not closed it.
int mpin_tls_idle_usable(mpin_tls *tls);

/// Frees the connection; with `notify`, first sends close_notify (without waiting for the
/// peer's). Does not close the socket.
void mpin_tls_free(mpin_tls *tls, int notify);

#endif
