#include "fetch/origin_credentials.h"

#include <algorithm>

#include "base/ascii.h"
#include "conf/rules.h"
#include "fetch/private_file.h"

namespace freshd::fetch {

namespace {

std::string Base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v = (uint32_t{static_cast<unsigned char>(in[i])} << 16) |
                       (uint32_t{static_cast<unsigned char>(in[i + 1])} << 8) |
                       static_cast<unsigned char>(in[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < in.size()) {
    uint32_t v = uint32_t{static_cast<unsigned char>(in[i])} << 16;
    if (i + 1 < in.size()) {
      v |= uint32_t{static_cast<unsigned char>(in[i + 1])} << 8;
    }
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool HasControl(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u < 0x20 || u == 0x7f;
  });
}

// RFC 6750 §2.1: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" )
// *"=".
bool IsB64Token(std::string_view s) {
  size_t i = 0;
  while (i < s.size() &&
         (IsAsciiAlpha(s[i]) || IsAsciiDigit(s[i]) ||
          std::string_view("-._~+/").find(s[i]) != std::string_view::npos)) {
    ++i;
  }
  if (i == 0) return false;
  while (i < s.size() && s[i] == '=') ++i;
  return i == s.size();
}

const std::vector<std::string> kNoHeaders;

}  // namespace

Result<std::string> ParseCredentialsText(std::string_view text) {
  std::string_view line = text.substr(0, text.find('\n'));
  if (line.ends_with('\r')) line.remove_suffix(1);
  line = TrimAsciiBlanks(line);
  const size_t space = line.find_first_of(" \t");
  const std::string scheme = AsciiLowerCopy(line.substr(0, space));
  const std::string_view rest = space == std::string_view::npos
                                    ? std::string_view()
                                    : TrimAsciiBlanks(line.substr(space + 1));
  if (scheme == "basic") {
    const size_t colon = rest.find(':');
    if (colon == std::string_view::npos || colon == 0 || HasControl(rest)) {
      return Status::InvalidArgument(
          "the first line must be \"basic USER:PASSWORD\" (USER not empty, "
          "no control characters)");
    }
    return "Basic " + Base64(rest);
  }
  if (scheme == "bearer") {
    if (!IsB64Token(rest)) {
      return Status::InvalidArgument(
          "the first line must be \"bearer TOKEN\" (TOKEN of letters, digits "
          "and -._~+/, then any '=')");
    }
    return "Bearer " + std::string(rest);
  }
  return Status::InvalidArgument(
      "the first line must be \"basic USER:PASSWORD\" or \"bearer TOKEN\"");
}

Result<OriginCredentials> OriginCredentials::Create(
    const std::vector<RuleConfig>& rules,
    const std::string& credentials_directory) {
  OriginCredentials out;
  for (const RuleConfig& r : rules) {
    if (r.origin.empty()) continue;
    const std::string origin = OriginOfUrl(r.origin);
    const std::string section = "[rule \"" + r.name + "\"] ";
    std::vector<std::string> lines;
    for (const auto& [name, value] : r.headers) {
      lines.push_back(name + ": " + value);
      std::string lower = AsciiLowerCopy(name);
      if (std::find(out.secret_names_.begin(), out.secret_names_.end(),
                    lower) == out.secret_names_.end()) {
        out.secret_names_.push_back(std::move(lower));
      }
    }
    if (!r.cookie.empty()) lines.push_back("Cookie: " + r.cookie);
    std::string path, where;
    if (!r.credentials_file.empty()) {
      path = r.credentials_file;
      where = section + "credentials_file " + path;
    } else if (!r.credential.empty()) {
      if (credentials_directory.empty()) {
        return Status::InvalidArgument(
            section + "credential " + r.credential +
            ": $CREDENTIALS_DIRECTORY is not set (systemd sets it for a "
            "service with LoadCredential=; elsewhere use credentials_file)");
      }
      path = credentials_directory + "/" + r.credential;
      where = section + "credential " + path;
    }
    if (!path.empty()) {
      Result<std::string> text =
          ReadPrivateFile(path, where, kMaxCredentialsFileBytes);
      if (!text.ok()) return text.status();
      Result<std::string> authorization = ParseCredentialsText(*text);
      if (!authorization.ok()) {
        return Status::InvalidArgument(where + ": " +
                                       authorization.status().message());
      }
      lines.push_back("Authorization: " + *authorization);
    }
    if (lines.empty() || out.by_origin_.contains(origin)) continue;
    out.by_origin_.emplace(origin, std::move(lines));
  }
  return out;
}

const std::vector<std::string>& OriginCredentials::HeadersFor(
    std::string_view origin) const {
  auto it = by_origin_.find(origin);
  return it == by_origin_.end() ? kNoHeaders : it->second;
}

std::string OriginCredentials::Redact(std::string_view head) const {
  std::string out;
  out.reserve(head.size());
  size_t pos = 0;
  while (pos < head.size()) {
    size_t end = head.find('\n', pos);
    end = end == std::string_view::npos ? head.size() : end + 1;
    const std::string_view line = head.substr(pos, end - pos);
    pos = end;
    const size_t colon = line.find(':');
    const bool secret =
        colon != std::string_view::npos &&
        std::any_of(secret_names_.begin(), secret_names_.end(),
                    [&](const std::string& name) {
                      return EqualsIgnoreAsciiCase(
                          TrimAsciiBlanks(line.substr(0, colon)), name);
                    });
    if (!secret) {
      out += line;
      continue;
    }
    out += line.substr(0, colon + 1);
    out += ' ';
    out += kRedacted;
    out += line.ends_with("\r\n") ? "\r\n" : line.ends_with('\n') ? "\n" : "";
  }
  return out;
}

}  // namespace freshd::fetch
