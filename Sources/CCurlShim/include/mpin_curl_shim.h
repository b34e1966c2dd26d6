// Non-variadic wrappers around libcurl's variadic calls, which Swift cannot call directly,
// and a once-only global initialisation.
#ifndef MPIN_CURL_SHIM_H
#define MPIN_CURL_SHIM_H

#include <curl/curl.h>

/// Runs curl_global_init(CURL_GLOBAL_DEFAULT) once per process, whichever thread gets there
/// first; later calls return the first call's result. curl_global_cleanup is never called, so a
/// second user in the same process (or a re-loaded PAM module) finds libcurl still usable.
CURLcode mpin_curl_global_init_once(void);

/// The write/header callback shape libcurl expects.
typedef size_t (*mpin_curl_data_callback)(char *data, size_t size, size_t count, void *context);

CURLcode mpin_curl_set_long(CURL *handle, CURLoption option, long value);
CURLcode mpin_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value);
CURLcode mpin_curl_set_string(CURL *handle, CURLoption option, const char *value);
CURLcode mpin_curl_set_pointer(CURL *handle, CURLoption option, void *value);
CURLcode mpin_curl_set_callback(CURL *handle, CURLoption option, mpin_curl_data_callback callback);

CURLcode mpin_curl_info_long(CURL *handle, CURLINFO info, long *value);
CURLcode mpin_curl_info_double(CURL *handle, CURLINFO info, double *value);

#endif
