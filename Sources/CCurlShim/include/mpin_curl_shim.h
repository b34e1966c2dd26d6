// libcurl through function pointers resolved on first use (dlopen of libcurl.so.4), and
// non-variadic wrappers for the calls Swift cannot make directly. Only curl's header is needed
// at build time; nothing links against libcurl.
#ifndef MPIN_CURL_SHIM_H
#define MPIN_CURL_SHIM_H

#include <curl/curl.h>

/// Loads libcurl and runs curl_global_init(CURL_GLOBAL_DEFAULT), once per process, whichever
/// thread gets there first; returns 1 when libcurl is usable. curl_global_cleanup is never
/// called, so a second user in the same process (or a re-loaded PAM module) finds it usable.
int mpin_curl_available(void);

/// The first call's curl_global_init result (CURLE_FAILED_INIT when libcurl could not be loaded).
CURLcode mpin_curl_global_init_once(void);

/// libcurl's version line (curl_version()), loading it if needed; NULL when it cannot be loaded.
const char *mpin_curl_version(void);

/// Tests only: the library to load instead of libcurl.so.4; must precede the first load.
void mpin_curl_use_library(const char *name);

CURL *mpin_curl_easy_init(void);
void mpin_curl_easy_cleanup(CURL *handle);
void mpin_curl_easy_reset(CURL *handle);
CURLcode mpin_curl_easy_perform(CURL *handle);
const char *mpin_curl_easy_strerror(CURLcode code);
struct curl_slist *mpin_curl_slist_append(struct curl_slist *list, const char *string);
void mpin_curl_slist_free_all(struct curl_slist *list);

/// The write/header callback shape libcurl expects.
typedef size_t (*mpin_curl_data_callback)(char *data, size_t size, size_t count, void *context);

CURLcode mpin_curl_set_long(CURL *handle, CURLoption option, long value);
CURLcode mpin_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value);
CURLcode mpin_curl_set_string(CURL *handle, CURLoption option, const char *value);
CURLcode mpin_curl_set_pointer(CURL *handle, CURLoption option, void *value);
CURLcode mpin_curl_set_callback(CURL *handle, CURLoption option, mpin_curl_data_callback callback);

CURLcode mpin_curl_info_long(CURL *handle, CURLINFO info, long *value);
CURLcode mpin_curl_info_double(CURL *handle, CURLINFO info, double *value);
/// The handle's connected socket (CURLINFO_ACTIVESOCKET), -1 when there is none.
CURLcode mpin_curl_info_socket(CURL *handle, int *socket);

#endif
