// libcurl's C API (Debian package libcurl4-openssl-dev), for the source fetcher. curl_easy_setopt
// and curl_easy_getinfo are variadic, which Swift cannot call: these wrappers fix each argument
// type. The callback types are spelled out so Swift can pass @convention(c) functions.
#include <curl/curl.h>

typedef size_t (*flipbook_curl_data_callback)(char *data, size_t size, size_t count, void *context);
typedef curl_socket_t (*flipbook_curl_opensocket_callback)(
    void *context, curlsocktype purpose, struct curl_sockaddr *address);

static inline CURLcode flipbook_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode flipbook_curl_set_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode flipbook_curl_set_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode flipbook_curl_set_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode flipbook_curl_set_list(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode flipbook_curl_set_data_callback(
    CURL *handle, CURLoption option, flipbook_curl_data_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

static inline CURLcode flipbook_curl_set_opensocket_callback(
    CURL *handle, flipbook_curl_opensocket_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, callback);
}

static inline CURLcode flipbook_curl_get_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
