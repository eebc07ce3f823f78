# The four C++ libraries the tool is built with, used header-only so that the installed binary
# needs none of them at run time (a wheel must not depend on the build machine's libfmt or
# libtomlplusplus); only a development build links the system's shared libfmt, below. A copy already on the system is used when its header is found (Debian:
# libfmt-dev, nlohmann-json3-dev, libtomlplusplus-dev, libcli11-dev); otherwise CMake downloads the
# pinned release below and checks its SHA-256, so a source install (`pip install .`) needs only a
# C++20 compiler. -DPORTCHECK_USE_SYSTEM_DEPS=OFF always downloads (a reproducible build).
#
# Versions: the system copies tested are Debian 12's (fmt 9.1.0, nlohmann_json 3.11.2, toml++
# 3.3.0, CLI11 2.1.2); the pinned downloads are the same releases except toml++ 3.4.0 (same API).
# The hashes are those published for these archives by Homebrew, Bazel workspaces and Conan Center.
include(FetchContent)
option(PORTCHECK_USE_SYSTEM_DEPS "Use the C++ libraries found on the system before downloading" ON)

# portcheck_header_library(TARGET HEADER URL SHA256 INCLUDE_SUBDIR [DEFINES ...])
# Defines the INTERFACE target TARGET whose include directory holds HEADER: the system's when
# found there, else the INCLUDE_SUBDIR of the downloaded, hash-checked archive.
function(portcheck_header_library target header url sha256 include_subdir)
  set(include_dir "")
  if(PORTCHECK_USE_SYSTEM_DEPS)
    find_path(${target}_INCLUDE_DIR NAMES ${header})
    if(${target}_INCLUDE_DIR)
      set(include_dir "${${target}_INCLUDE_DIR}")
      message(STATUS "${target}: using the system's ${header} in ${include_dir}")
    endif()
  endif()
  if(NOT include_dir)
    message(STATUS "${target}: downloading ${url}")
    # SOURCE_SUBDIR names a folder without a CMakeLists.txt: the archive is only unpacked, so
    # none of its own targets or install rules enter this build (or the wheel).
    FetchContent_Declare(${target} URL ${url} URL_HASH SHA256=${sha256}
                         DOWNLOAD_EXTRACT_TIMESTAMP TRUE SOURCE_SUBDIR portcheck-headers-only)
    FetchContent_MakeAvailable(${target})
    set(include_dir "${${target}_SOURCE_DIR}/${include_subdir}")
  endif()
  add_library(${target} INTERFACE)
  target_include_directories(${target} SYSTEM INTERFACE "${include_dir}")
  if(ARGN)
    target_compile_definitions(${target} INTERFACE ${ARGN})
  endif()
endfunction()

# fmt header-only costs about 45% more compile time in each of the ~30 units that format, so a
# development build links the system's shared libfmt when there is one; the wheel
# (PORTCHECK_STATIC_RUNTIME) must not depend on it and takes fmt header-only.
if(PORTCHECK_USE_SYSTEM_DEPS AND NOT PORTCHECK_STATIC_RUNTIME)
  find_package(fmt 9 QUIET CONFIG)
endif()
if(TARGET fmt::fmt)
  message(STATUS "portcheck_fmt: using the system's shared libfmt ${fmt_VERSION}")
  add_library(portcheck_fmt INTERFACE)
  target_link_libraries(portcheck_fmt INTERFACE fmt::fmt)
else()
  portcheck_header_library(portcheck_fmt fmt/format.h
    https://github.com/fmtlib/fmt/archive/9.1.0.tar.gz
    5dea48d1fcddc3ec571ce2058e13910a0d4a6bab4cc09a809d8b1dd1c88ae6f2
    include FMT_HEADER_ONLY=1)
endif()
portcheck_header_library(portcheck_json nlohmann/json.hpp
  https://github.com/nlohmann/json/archive/v3.11.2.tar.gz
  d69f9deb6a75e2580465c6c4c5111b89c4dc2fa94e3a85fcd2ffcd9a143d9273
  single_include)
# toml++ is compiled once (util/toml_impl.cpp defines TOML_IMPLEMENTATION), not in every unit.
portcheck_header_library(portcheck_toml toml++/toml.h
  https://github.com/marzer/tomlplusplus/archive/refs/tags/v3.4.0.tar.gz
  8517f65938a4faae9ccf8ebb36631a38c1cadfb5efa85d9a72e15b9e97d25155
  include TOML_HEADER_ONLY=0)
portcheck_header_library(portcheck_cli11 CLI/CLI.hpp
  https://github.com/CLIUtils/CLI11/archive/v2.1.2.tar.gz
  26291377e892ba0e5b4972cdfd4a2ab3bf53af8dac1f4ea8fe0d1376b625c8cb
  include)
