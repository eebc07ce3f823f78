#pragma once
// libcurl, loaded when first needed rather than linked: the binary (and the wheel) then needs
// only glibc, and HTTPS uses the system's own libcurl with the system's certificates, which a
// copy bundled from the build machine would not find on another distribution.
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>

namespace util {

// The entry points the HTTP client calls, resolved from libcurl.so.4 (or Debian's GnuTLS build,
// libcurl-gnutls.so.4). Both have had this ABI since 2006.
struct Libcurl {
  CURL* (*easy_init)();
  CURLcode (*easy_setopt)(CURL*, CURLoption, ...);
  CURLcode (*easy_getinfo)(CURL*, CURLINFO, ...);
  void (*easy_cleanup)(CURL*);
  const char* (*easy_strerror)(CURLcode);
  CURLcode (*easy_perform)(CURL*);
  CURLM* (*multi_init)();
  CURLMcode (*multi_add_handle)(CURLM*, CURL*);
  CURLMcode (*multi_remove_handle)(CURLM*, CURL*);
  CURLMcode (*multi_perform)(CURLM*, int*);
  CURLMcode (*multi_wait)(CURLM*, curl_waitfd*, unsigned, int, int*);
  CURLMsg* (*multi_info_read)(CURLM*, int*);
  CURLMcode (*multi_setopt)(CURLM*, CURLMoption, ...);
  CURLMcode (*multi_cleanup)(CURLM*);
  curl_slist* (*slist_append)(curl_slist*, const char*);
  void (*slist_free_all)(curl_slist*);
};

// The loaded library (loaded and initialised once per process), or nullptr with `why` set when
// this system has none.
const Libcurl* libcurl(const char** why);

}  // namespace util
