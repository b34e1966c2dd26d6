#include "mpin_curl_shim.h"
#include <pthread.h>

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_result = CURLE_FAILED_INIT;

static void global_init(void) {
    global_result = curl_global_init(CURL_GLOBAL_DEFAULT);
}

CURLcode mpin_curl_global_init_once(void) {
    pthread_once(&global_once, global_init);
    return global_result;
}

CURLcode mpin_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode mpin_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode mpin_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode mpin_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode mpin_curl_set_callback(CURL *handle, CURLoption option, mpin_curl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

CURLcode mpin_curl_info_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode mpin_curl_info_double(CURL *handle, CURLINFO info, double *value) {
    return curl_easy_getinfo(handle, info, value);
}
