#ifndef SIGNET_CCURL_SHIM_H
#define SIGNET_CCURL_SHIM_H
#include <stddef.h>
#include <curl/curl.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: each argument
 * type Signet passes is wrapped here once. */
static inline CURLcode signet_curl_set_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode signet_curl_set_string(CURL *h, CURLoption o, const char *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode signet_curl_set_list(CURL *h, CURLoption o, struct curl_slist *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode signet_curl_set_pointer(CURL *h, CURLoption o, void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode signet_curl_set_read(CURL *h, curl_read_callback f) { return curl_easy_setopt(h, CURLOPT_READFUNCTION, f); }
static inline CURLcode signet_curl_set_write(CURL *h, curl_write_callback f) { return curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, f); }
static inline CURLcode signet_curl_set_header(CURL *h, curl_write_callback f) { return curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, f); }
static inline CURLcode signet_curl_info_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode signet_curl_info_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }
#endif
