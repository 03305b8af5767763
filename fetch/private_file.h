// Reading a secret from a file the operator named ([fetch]
// proxy_credentials_file, a [[rule]]'s credentials_file or systemd
// credential): the file is refused when group or others may read, write or
// run it (as ssh refuses a private key), when it is not a regular file or
// larger than `max_bytes`. Messages name `where` and the mode, never the
// content. Opened once, checked on the open descriptor (no window between
// the check and the read). Stateless: thread-safe.

#ifndef FRESHD_FETCH_PRIVATE_FILE_H_
#define FRESHD_FETCH_PRIVATE_FILE_H_

#include <cstddef>
#include <string>

#include "base/status.h"

namespace freshd::fetch {

// The file's bytes. NotFound if it cannot be opened or read;
// InvalidArgument "WHERE: group or others may read it (mode 0644); refused:
// chmod 600 it", or for a file that is not regular or too large.
[[nodiscard]] Result<std::string> ReadPrivateFile(const std::string& path,
                                                  const std::string& where,
                                                  size_t max_bytes);

}  // namespace freshd::fetch

#endif  // FRESHD_FETCH_PRIVATE_FILE_H_
