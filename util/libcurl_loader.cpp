#include "util/libcurl_loader.hpp"

#include <dlfcn.h>

#include <initializer_list>
#include <memory>

namespace util {
namespace {

constexpr const char* kMissing =
    "the HTTP remote cache needs libcurl, and this system has none (libcurl.so.4): install it "
    "(apt-get install libcurl4, dnf install libcurl)";

template <typename F>
bool resolve(void* handle, const char* name, F& into) {
  into = reinterpret_cast<F>(::dlsym(handle, name));
  return into != nullptr;
}

bool resolve_all(void* h, Libcurl& c) {
  return resolve(h, "curl_easy_init", c.easy_init) &&
         resolve(h, "curl_easy_setopt", c.easy_setopt) &&
         resolve(h, "curl_easy_getinfo", c.easy_getinfo) &&
         resolve(h, "curl_easy_cleanup", c.easy_cleanup) &&
         resolve(h, "curl_easy_strerror", c.easy_strerror) &&
         resolve(h, "curl_easy_perform", c.easy_perform) &&
         resolve(h, "curl_multi_init", c.multi_init) &&
         resolve(h, "curl_multi_add_handle", c.multi_add_handle) &&
         resolve(h, "curl_multi_remove_handle", c.multi_remove_handle) &&
         resolve(h, "curl_multi_perform", c.multi_perform) &&
         resolve(h, "curl_multi_wait", c.multi_wait) &&
         resolve(h, "curl_multi_info_read", c.multi_info_read) &&
         resolve(h, "curl_multi_setopt", c.multi_setopt) &&
         resolve(h, "curl_multi_cleanup", c.multi_cleanup) &&
         resolve(h, "curl_slist_append", c.slist_append) &&
         resolve(h, "curl_slist_free_all", c.slist_free_all);
}

struct LibraryCloser {
  void operator()(void* handle) const { ::dlclose(handle); }
};

const Libcurl* load() {
  static Libcurl api;
  for (const char* name : {"libcurl.so.4", "libcurl-gnutls.so.4"}) {
    std::unique_ptr<void, LibraryCloser> handle(::dlopen(name, RTLD_NOW | RTLD_LOCAL));
    if (!handle) continue;
    CURLcode (*global_init)(long) = nullptr;
    if (resolve_all(handle.get(), api) && resolve(handle.get(), "curl_global_init", global_init) &&
        global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK) {
      (void)handle.release();  // kept for the process's life, as a linked library would be
      return &api;
    }
  }
  return nullptr;
}

}  // namespace

const Libcurl* libcurl(const char** why) {
  static const Libcurl* const loaded = load();  // thread-safe, once
  if (loaded == nullptr && why != nullptr) *why = kMissing;
  return loaded;
}

}  // namespace util
