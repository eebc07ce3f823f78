#pragma once
// What a network client of util/ throws: the two kinds a caller treats differently.
#include <stdexcept>
#include <string>

namespace util {

// The server could not be reached or did not answer in time, or the answer was not the
// protocol's: nothing more should be asked of it for a while.
class TransportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The server answered, and said no (full, forbidden, read-only): it is up, but this request,
// and others like it, will not succeed.
class RejectedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace util
