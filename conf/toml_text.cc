#include "conf/toml_text.h"

#include <algorithm>
#include <exception>
#include <sstream>
#include <string>

#include "base/utf8.h"

namespace freshd {
namespace {

// toml11's messages start with "[error] " and continue over several lines
// (a source excerpt); the first line says what.
std::string FirstLine(std::string s) {
  const std::string prefix = "[error] ";
  if (s.rfind(prefix, 0) == 0) s = s.substr(prefix.size());
  size_t nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

}  // namespace

Result<toml::value> ParseTomlText(std::string_view text, std::string_view name,
                                  size_t max_bytes) {
  const std::string file(name);
  if (text.size() > max_bytes) {
    const std::string size = max_bytes % (1 << 20) == 0
                                 ? std::to_string(max_bytes >> 20) + " MiB"
                                 : std::to_string(max_bytes) + " bytes";
    return Status::InvalidArgument(file + ": larger than " + size +
                                   "; not a TOML file freshd reads");
  }
  const size_t valid = ValidUtf8Prefix(text);
  if (valid != text.size()) {
    const auto line = 1 + std::count(text.begin(), text.begin() + valid, '\n');
    return Status::InvalidArgument(
        file + ":" + std::to_string(line) +
        ": TOML syntax error: not valid UTF-8 (byte " + std::to_string(valid) +
        ")");
  }
  try {
    std::istringstream in{std::string(text)};
    return toml::parse(in, file);
  } catch (const toml::exception& e) {
    return Status::InvalidArgument(
        file + ":" + std::to_string(e.location().line()) +
        ": TOML syntax error: " + FirstLine(e.what()));
  } catch (const std::exception& e) {
    return Status::InvalidArgument(
        file + ": TOML syntax error: " + FirstLine(e.what()));
  }
}

}  // namespace freshd
