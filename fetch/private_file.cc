#include "fetch/private_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace freshd::fetch {

Result<std::string> ReadPrivateFile(const std::string& path,
                                    const std::string& where,
                                    size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return Status::NotFound(where + ": cannot be read");
  struct stat st;
  Status refused;
  if (::fstat(fd, &st) != 0) {
    refused = Status::NotFound(where + ": cannot be read");
  } else if (!S_ISREG(st.st_mode)) {
    refused = Status::InvalidArgument(where + ": not a regular file");
  } else if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o",
                  static_cast<unsigned>(st.st_mode & 07777));
    refused =
        Status::InvalidArgument(where + ": group or others may read it (mode " +
                                mode + "); refused: chmod 600 it");
  } else if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    refused = Status::InvalidArgument(where + ": larger than " +
                                      std::to_string(max_bytes) + " bytes");
  }
  if (!refused.ok()) {
    ::close(fd);
    return refused;
  }
  std::string text;
  char buf[4096];
  while (text.size() <= max_bytes) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return Status::NotFound(where + ": cannot be read");
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (text.size() > max_bytes) {
    return Status::InvalidArgument(where + ": larger than " +
                                   std::to_string(max_bytes) + " bytes");
  }
  return text;
}

}  // namespace freshd::fetch
