# The clients of the shared remote cache (docs/remote-cache.md).
#
# hiredis (Redis) is linked statically, so the binary and the wheel still need only glibc:
# Debian's libhiredis-dev ships libhiredis.a. libcurl (HTTP) is not linked at all: the tool loads
# the system's libcurl.so.4 when a run names an http(s):// cache (util/libcurl_loader.hpp), so
# HTTPS uses that system's TLS library and certificates; only curl's header is needed here.
#
# A machine without either builds a tool without that client; a run that names such a cache is
# told so once and goes on with the local cache (never a failed build for an optional feature).
find_path(PORTCHECK_HIREDIS_INCLUDE NAMES hiredis/hiredis.h)
find_library(PORTCHECK_HIREDIS_STATIC NAMES libhiredis.a)
if(PORTCHECK_HIREDIS_INCLUDE AND PORTCHECK_HIREDIS_STATIC)
  message(STATUS "remote cache: Redis through ${PORTCHECK_HIREDIS_STATIC}")
  target_include_directories(portcheck_util SYSTEM PRIVATE ${PORTCHECK_HIREDIS_INCLUDE})
  target_link_libraries(portcheck_util PRIVATE ${PORTCHECK_HIREDIS_STATIC})
  target_compile_definitions(portcheck_util PRIVATE PORTCHECK_HAVE_HIREDIS=1)
else()
  message(WARNING "remote cache: no static hiredis (Debian: libhiredis-dev); this build cannot "
                  "use a redis:// cache")
endif()

find_path(PORTCHECK_CURL_INCLUDE NAMES curl/curl.h)
if(PORTCHECK_CURL_INCLUDE)
  message(STATUS "remote cache: HTTP through the system's libcurl.so.4, loaded at run time")
  target_sources(portcheck_util PRIVATE ${CMAKE_SOURCE_DIR}/util/libcurl_loader.cpp)
  target_include_directories(portcheck_util SYSTEM PRIVATE ${PORTCHECK_CURL_INCLUDE})
  target_compile_definitions(portcheck_util PRIVATE PORTCHECK_HAVE_CURL=1)
  target_link_libraries(portcheck_util PRIVATE ${CMAKE_DL_LIBS})
else()
  message(WARNING "remote cache: no curl/curl.h (Debian: libcurl4-openssl-dev); this build "
                  "cannot use an http(s):// cache")
endif()
