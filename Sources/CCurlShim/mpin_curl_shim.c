// libcurl is loaded on first use (dlopen), not when the PAM module is loaded: loading it and
// its ~35 dependencies costs ~10 ms, which a module that ends up not needing the network (a
// user without a registration, `nouserok`) should not pay, and a missing libcurl becomes an
// "unavailable" answer instead of a module that libpam cannot load.

#include <curl/curl.h>
#include "mpin_curl_shim.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

static const char *library_name = "libcurl.so.4";

static struct {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *handle);
    void (*easy_reset)(CURL *handle);
    CURLcode (*easy_perform)(CURL *handle);
    CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
    const char *(*easy_strerror)(CURLcode code);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *string);
    void (*slist_free_all)(struct curl_slist *list);
    char *(*version)(void);
} api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded = 0;
static CURLcode global_result = CURLE_FAILED_INIT;

// Assigning dlsym's void * to a function pointer is what POSIX specifies for dlsym.
#define RESOLVE(field, symbol) \
    do { *(void **)(&api.field) = dlsym(library, symbol); if (api.field == NULL) return; } while (0)

static void load(void) {
    void *library = dlopen(library_name, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
    // Never closed: like OpenSSL, libcurl stays for the life of the process.
    RESOLVE(global_init, "curl_global_init");
    RESOLVE(easy_init, "curl_easy_init");
    RESOLVE(easy_cleanup, "curl_easy_cleanup");
    RESOLVE(easy_reset, "curl_easy_reset");
    RESOLVE(easy_perform, "curl_easy_perform");
    RESOLVE(easy_setopt, "curl_easy_setopt");
    RESOLVE(easy_getinfo, "curl_easy_getinfo");
    RESOLVE(easy_strerror, "curl_easy_strerror");
    RESOLVE(slist_append, "curl_slist_append");
    RESOLVE(slist_free_all, "curl_slist_free_all");
    RESOLVE(version, "curl_version");
    loaded = 1;
    global_result = api.global_init(CURL_GLOBAL_DEFAULT);
}

void mpin_curl_use_library(const char *name) { library_name = name; }

int mpin_curl_available(void) {
    pthread_once(&load_once, load);
    return loaded;
}

CURLcode mpin_curl_global_init_once(void) {
    return mpin_curl_available() ? global_result : CURLE_FAILED_INIT;
}

CURL *mpin_curl_easy_init(void) { return loaded ? api.easy_init() : NULL; }
void mpin_curl_easy_cleanup(CURL *handle) { if (loaded && handle != NULL) api.easy_cleanup(handle); }
void mpin_curl_easy_reset(CURL *handle) { if (loaded && handle != NULL) api.easy_reset(handle); }
CURLcode mpin_curl_easy_perform(CURL *handle) { return loaded ? api.easy_perform(handle) : CURLE_FAILED_INIT; }

const char *mpin_curl_version(void) { return mpin_curl_available() ? api.version() : NULL; }

const char *mpin_curl_easy_strerror(CURLcode code) {
    return loaded ? api.easy_strerror(code) : "libcurl is not available";
}

struct curl_slist *mpin_curl_slist_append(struct curl_slist *list, const char *string) {
    return loaded ? api.slist_append(list, string) : NULL;
}

void mpin_curl_slist_free_all(struct curl_slist *list) { if (loaded) api.slist_free_all(list); }

CURLcode mpin_curl_set_long(CURL *handle, CURLoption option, long value) {
    return loaded ? api.easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}

CURLcode mpin_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return loaded ? api.easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}

CURLcode mpin_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return loaded ? api.easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}

CURLcode mpin_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return loaded ? api.easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}

CURLcode mpin_curl_set_callback(CURL *handle, CURLoption option, mpin_curl_data_callback callback) {
    return loaded ? api.easy_setopt(handle, option, callback) : CURLE_FAILED_INIT;
}

CURLcode mpin_curl_info_long(CURL *handle, CURLINFO info, long *value) {
    return loaded ? api.easy_getinfo(handle, info, value) : CURLE_FAILED_INIT;
}

CURLcode mpin_curl_info_socket(CURL *handle, int *socket) {
    curl_socket_t value = CURL_SOCKET_BAD;
    CURLcode code = loaded ? api.easy_getinfo(handle, CURLINFO_ACTIVESOCKET, &value) : CURLE_FAILED_INIT;
    *socket = code == CURLE_OK && value != CURL_SOCKET_BAD ? (int)value : -1;
    return code;
}

CURLcode mpin_curl_info_double(CURL *handle, CURLINFO info, double *value) {
    return loaded ? api.easy_getinfo(handle, info, value) : CURLE_FAILED_INIT;
}
