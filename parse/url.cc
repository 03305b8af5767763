// URL normalization and resolution (see url.h).
//
// Why not libcurl's CURLU: curl 7.88 neither lowercases hosts nor
// normalizes percent-escapes, resolves some relative forms differently from
// browsers ("http:foo", backslashes) and its error codes do not say what was
// wrong. The RFC 3986 grammar needed here is small, so it is written out
// below; libidn2 does the IDN part.

#include "parse/url.h"

#include <arpa/inet.h>
#include <idn2.h>
#include <xxhash.h>

#include <array>
#include <cstdlib>
#include <optional>
#include <string>

#include "base/ascii.h"

namespace freshd::parse {
namespace {

// Raw input larger than this is rejected before any work (tabs and
// whitespace that would be stripped cannot make an 8 KiB URL out of more).
constexpr size_t kMaxRawUrlLength = 4 * kMaxUrlLength;

constexpr char kHex[] = "0123456789ABCDEF";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsUnreserved(char c) {
  return IsAsciiAlpha(c) || IsAsciiDigit(c) || c == '-' || c == '.' ||
         c == '_' || c == '~';
}

// Characters kept raw in a path (RFC 3986 pchar plus '/').
bool IsPathChar(char c) {
  if (IsUnreserved(c)) return true;
  switch (c) {
    case '!':
    case '$':
    case '&':
    case '\'':
    case '(':
    case ')':
    case '*':
    case '+':
    case ',':
    case ';':
    case '=':
    case ':':
    case '@':
    case '/':
      return true;
    default:
      return false;
  }
}

bool IsQueryChar(char c) { return IsPathChar(c) || c == '?'; }

// Input cleanup as browsers do: strip leading/trailing C0 controls and
// spaces, drop every tab, CR and LF.
std::string CleanInput(std::string_view in) {
  size_t b = 0, e = in.size();
  while (b < e && static_cast<unsigned char>(in[b]) <= 0x20) ++b;
  while (e > b && static_cast<unsigned char>(in[e - 1]) <= 0x20) --e;
  std::string out;
  out.reserve(e - b);
  for (size_t i = b; i < e; ++i) {
    char c = in[i];
    if (c != '\t' && c != '\r' && c != '\n') out.push_back(c);
  }
  return out;
}

// Length of a scheme at the start of `s` including its ':', or 0.
size_t SchemeLength(std::string_view s) {
  if (s.empty() || !IsAsciiAlpha(s[0])) return 0;
  for (size_t i = 1; i < s.size(); ++i) {
    char c = s[i];
    if (c == ':') return i + 1;
    if (!IsAsciiAlpha(c) && !IsAsciiDigit(c) && c != '+' && c != '-' &&
        c != '.')
      return 0;
  }
  return 0;
}

// Re-encodes a path or query: escapes use uppercase hex, escapes of
// unreserved characters are decoded, a '%' without two hex digits becomes
// %25 and every byte outside the allowed set is escaped.
void AppendNormalizedPart(std::string_view in, bool is_query,
                          std::string* out) {
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%' && i + 2 < in.size() && HexValue(in[i + 1]) >= 0 &&
        HexValue(in[i + 2]) >= 0) {
      char decoded =
          static_cast<char>(HexValue(in[i + 1]) * 16 + HexValue(in[i + 2]));
      if (IsUnreserved(decoded)) {
        out->push_back(decoded);
      } else {
        out->push_back('%');
        out->push_back(kHex[(decoded >> 4) & 0xF]);
        out->push_back(kHex[decoded & 0xF]);
      }
      i += 2;
      continue;
    }
    if (!is_query && c == '\\') c = '/';
    bool raw = is_query ? IsQueryChar(c) : IsPathChar(c);
    if (raw) {
      out->push_back(c);
    } else {
      unsigned char u = static_cast<unsigned char>(c);
      out->push_back('%');
      out->push_back(kHex[u >> 4]);
      out->push_back(kHex[u & 0xF]);
    }
  }
}

// RFC 3986 section 5.2.4, on a path that starts with '/'.
std::string RemoveDotSegments(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  size_t i = 0;
  while (i < path.size()) {
    // `path[i]` is '/'. Find the segment after it.
    size_t end = path.find('/', i + 1);
    if (end == std::string_view::npos) end = path.size();
    std::string_view seg = path.substr(i + 1, end - i - 1);
    bool last = end == path.size();
    if (seg == ".") {
      if (last) out.push_back('/');
    } else if (seg == "..") {
      size_t cut = out.rfind('/');
      out.resize(cut == std::string::npos ? 0 : cut);
      if (last) out.push_back('/');
    } else {
      out.push_back('/');
      out.append(seg);
    }
    i = end;
  }
  if (out.empty()) out = "/";
  return out;
}

// Lowercases, converts IDN labels to punycode and validates a reg-name or
// IPv4 host. `host` is still percent-encoded as written.
Result<std::string> NormalizeHost(std::string_view raw) {
  std::string host;
  bool non_ascii = false;
  for (size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == '%' && i + 2 < raw.size() && HexValue(raw[i + 1]) >= 0 &&
        HexValue(raw[i + 2]) >= 0) {
      c = static_cast<char>(HexValue(raw[i + 1]) * 16 + HexValue(raw[i + 2]));
      i += 2;
    }
    if (static_cast<unsigned char>(c) >= 0x80) non_ascii = true;
    host.push_back(c);
  }
  if (!host.empty() && host.back() == '.') host.pop_back();  // FQDN dot
  if (host.empty()) return Status::InvalidArgument("empty host");
  // A NUL would end the C string handed to libidn2 and silently cut the
  // host ("a%00.evil" must not become "a").
  if (host.find('\0') != std::string::npos)
    return Status::InvalidArgument("invalid host");
  if (non_ascii) {
    char* ascii = nullptr;
    int rc = idn2_to_ascii_8z(host.c_str(), &ascii,
                              IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
    if (rc != IDN2_OK) {
      rc = idn2_to_ascii_8z(host.c_str(), &ascii,
                            IDN2_NFC_INPUT | IDN2_TRANSITIONAL);
    }
    if (rc != IDN2_OK || ascii == nullptr) {
      free(ascii);
      return Status::InvalidArgument("invalid IDN host");
    }
    host = ascii;
    free(ascii);
  }
  for (char& c : host) c = AsciiLower(c);
  // Labels: letters, digits, '-', '_' (seen in the wild), 1..63 octets.
  if (host.size() > 253) return Status::InvalidArgument("invalid host");
  size_t label_len = 0;
  for (char c : host) {
    if (c == '.') {
      if (label_len == 0) return Status::InvalidArgument("invalid host");
      label_len = 0;
    } else if (IsAsciiAlpha(c) || IsAsciiDigit(c) || c == '-' || c == '_') {
      if (++label_len > 63) return Status::InvalidArgument("invalid host");
    } else {
      return Status::InvalidArgument("invalid host");
    }
  }
  if (label_len == 0) return Status::InvalidArgument("invalid host");
  // Dotted-decimal IPv4 in canonical form (no leading zeros).
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    char buf[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &v4, buf, sizeof(buf));
    host = buf;
  }
  return host;
}

Result<std::string> NormalizeIpv6(std::string_view literal) {
  std::string text(literal);
  in6_addr v6;
  if (inet_pton(AF_INET6, text.c_str(), &v6) != 1)
    return Status::InvalidArgument("invalid host");
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, &v6, buf, sizeof(buf));
  return "[" + std::string(buf) + "]";
}

}  // namespace

Result<std::string> NormalizeUrl(std::string_view url) {
  if (url.size() > kMaxRawUrlLength)
    return Status::InvalidArgument("URL too long");
  std::string in = CleanInput(url);
  if (in.empty()) return Status::InvalidArgument("empty URL");
  if (in.size() > kMaxUrlLength) return Status::InvalidArgument("URL too long");

  size_t scheme_len = SchemeLength(in);
  if (scheme_len == 0) return Status::InvalidArgument("not an absolute URL");
  std::string scheme = in.substr(0, scheme_len - 1);
  for (char& c : scheme) c = AsciiLower(c);
  if (scheme != "http" && scheme != "https") {
    return Status::InvalidArgument("unsupported scheme '" +
                                   scheme.substr(0, 32) + "'");
  }
  size_t pos = scheme_len;
  // Special schemes: any run of '/' or '\' introduces the authority.
  while (pos < in.size() && (in[pos] == '/' || in[pos] == '\\')) ++pos;

  size_t auth_end = in.find_first_of("/\\?#", pos);
  if (auth_end == std::string::npos) auth_end = in.size();
  std::string_view authority = std::string_view(in).substr(pos, auth_end - pos);
  if (authority.find('@') != std::string_view::npos)
    return Status::InvalidArgument("userinfo not allowed");
  if (authority.empty()) return Status::InvalidArgument("empty host");

  std::string_view host_part = authority;
  std::string_view port_part;
  bool has_port = false;
  std::string host;
  if (authority[0] == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos)
      return Status::InvalidArgument("invalid host");
    auto v6 = NormalizeIpv6(authority.substr(1, close - 1));
    if (!v6.ok()) return v6.status();
    host = *v6;
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') return Status::InvalidArgument("invalid host");
      has_port = true;
      port_part = rest.substr(1);
    }
  } else {
    size_t colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      has_port = true;
      port_part = authority.substr(colon + 1);
      host_part = authority.substr(0, colon);
    }
    auto h = NormalizeHost(host_part);
    if (!h.ok()) return h.status();
    host = std::move(*h);
  }

  std::string port;
  while (port_part.size() > 1 && port_part[0] == '0')
    port_part.remove_prefix(1);
  if (has_port && !port_part.empty()) {
    if (port_part.size() > 5) return Status::InvalidArgument("invalid port");
    unsigned value = 0;
    for (char c : port_part) {
      if (!IsAsciiDigit(c)) return Status::InvalidArgument("invalid port");
      value = value * 10 + static_cast<unsigned>(c - '0');
    }
    if (value > 65535) return Status::InvalidArgument("invalid port");
    bool is_default = (scheme == "http" && value == 80) ||
                      (scheme == "https" && value == 443);
    if (!is_default) port = std::to_string(value);
  }

  size_t path_end = in.find_first_of("?#", auth_end);
  if (path_end == std::string::npos) path_end = in.size();
  std::string path;
  AppendNormalizedPart(
      std::string_view(in).substr(auth_end, path_end - auth_end),
      /*is_query=*/false, &path);
  if (path.empty() || path[0] != '/') path.insert(path.begin(), '/');
  path = RemoveDotSegments(path);

  std::string query;
  if (path_end < in.size() && in[path_end] == '?') {
    size_t q_end = in.find('#', path_end);
    if (q_end == std::string::npos) q_end = in.size();
    AppendNormalizedPart(
        std::string_view(in).substr(path_end + 1, q_end - path_end - 1),
        /*is_query=*/true, &query);
  }

  std::string out;
  out.reserve(scheme.size() + 3 + host.size() + port.size() + 1 + path.size() +
              query.size() + 1);
  out.append(scheme).append("://").append(host);
  if (!port.empty()) out.append(":").append(port);
  out.append(path);
  if (!query.empty()) out.append("?").append(query);
  if (out.size() > kMaxUrlLength)
    return Status::InvalidArgument("URL too long");
  return out;
}

Result<std::string> ResolveUrl(std::string_view base, std::string_view ref) {
  auto base_norm = NormalizeUrl(base);
  if (!base_norm.ok())
    return Status::InvalidArgument("invalid base: " +
                                   base_norm.status().message());
  if (ref.size() > kMaxRawUrlLength)
    return Status::InvalidArgument("URL too long");
  std::string r = CleanInput(ref);
  const std::string& b = *base_norm;
  std::string_view scheme = UrlScheme(b);

  size_t scheme_len = SchemeLength(r);
  if (scheme_len > 0) {
    std::string ref_scheme = r.substr(0, scheme_len - 1);
    for (char& c : ref_scheme) c = AsciiLower(c);
    bool slash_follows = scheme_len < r.size() &&
                         (r[scheme_len] == '/' || r[scheme_len] == '\\');
    // WHATWG: "http:foo" relative to an http base is a relative reference.
    if (ref_scheme != scheme || slash_follows) return NormalizeUrl(r);
    r.erase(0, scheme_len);
  }
  if (r.empty() || r[0] == '#') return b;  // same document
  if (r.size() >= 2 && (r[0] == '/' || r[0] == '\\') &&
      (r[1] == '/' || r[1] == '\\')) {
    return NormalizeUrl(std::string(scheme) + ":" + r);  // network-path ref
  }
  std::string origin = UrlOrigin(b);
  if (r[0] == '/' || r[0] == '\\') return NormalizeUrl(origin + r);
  std::string_view pq = UrlPathAndQuery(b);
  std::string_view path = pq.substr(0, pq.find('?'));
  if (r[0] == '?') return NormalizeUrl(origin + std::string(path) + r);
  // Merge (RFC 3986 5.2.3): the base path up to its last '/', then `r`;
  // NormalizeUrl removes the dot segments.
  std::string_view dir = path.substr(0, path.rfind('/') + 1);
  return NormalizeUrl(origin + std::string(dir) + r);
}

uint64_t UrlKey(std::string_view normalized_url) {
  return XXH3_64bits_withSeed(normalized_url.data(), normalized_url.size(),
                              kUrlKeySeed);
}

std::string_view UrlScheme(std::string_view u) {
  size_t colon = u.find("://");
  return colon == std::string_view::npos ? std::string_view()
                                         : u.substr(0, colon);
}

std::string_view UrlAuthority(std::string_view u) {
  size_t start = u.find("://");
  if (start == std::string_view::npos) return {};
  start += 3;
  size_t end = u.find_first_of("/?#", start);
  if (end == std::string_view::npos) end = u.size();
  return u.substr(start, end - start);
}

std::string_view UrlHost(std::string_view u) {
  std::string_view a = UrlAuthority(u);
  size_t bracket = a.rfind(']');
  size_t colon = a.rfind(':');
  if (colon != std::string_view::npos &&
      (bracket == std::string_view::npos || colon > bracket)) {
    return a.substr(0, colon);
  }
  return a;
}

std::string_view UrlPathAndQuery(std::string_view u) {
  size_t start = u.find("://");
  if (start == std::string_view::npos) return {};
  size_t slash = u.find_first_of("/?#", start + 3);
  if (slash == std::string_view::npos) return "/";
  std::string_view rest = u.substr(slash);
  return rest.substr(0, rest.find('#'));
}

std::string UrlOrigin(std::string_view u) {
  return std::string(UrlScheme(u)) + "://" + std::string(UrlAuthority(u));
}

namespace {

// application/x-www-form-urlencoded value decoding ('+' is a space).
std::string FormDecode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '+') {
      out += ' ';
    } else if (in[i] == '%' && i + 2 < in.size() &&
               AsciiHexValue(in[i + 1]) >= 0 && AsciiHexValue(in[i + 2]) >= 0) {
      out += static_cast<char>(AsciiHexValue(in[i + 1]) * 16 +
                               AsciiHexValue(in[i + 2]));
      i += 2;
    } else {
      out += in[i];
    }
  }
  return out;
}

}  // namespace

std::optional<std::string> FormValue(std::string_view query,
                                     std::string_view name) {
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const size_t eq = pair.find('=');
    if (pair.substr(0, eq) == name) {
      return eq == std::string_view::npos ? std::string()
                                          : FormDecode(pair.substr(eq + 1));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

}  // namespace freshd::parse
