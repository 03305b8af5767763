#include "conf/toml_text.h"

#include <algorithm>
#include <exception>
#include <optional>
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

struct ShapeError {
  size_t line;
  std::string what;
};

// Walks the text as TOML's lexer would (comments, basic and literal strings,
// single- and multi-line) without building anything, checking the bounds of
// the file comment. Brackets are tracked on a stack: 'h' for a table header,
// '[' for an array value, '{' for an inline table. A '.' counts as a key
// part while on the key side: a line's start (outside any bracket) up to
// '=', a header, or an inline table after '{' or ',' up to '='. Unbalanced
// or malformed input is left to toml11, which reports it with its line.
std::optional<ShapeError> CheckShape(std::string_view t) {
  size_t line = 1, line_start = 0, key_parts = 1;
  std::string stack;      // at most kMaxTomlDepth entries
  bool key_side = true;   // where a dotted key may stand
  bool too_long = false;  // the line that just ended was over the limit
  auto end_line = [&](size_t newline_at) {
    too_long = newline_at - line_start > kMaxTomlLineBytes;
    if (too_long) return;
    ++line;
    line_start = newline_at + 1;
    if (stack.empty()) key_side = true, key_parts = 1;
  };
  auto fail = [&](std::string what) {
    return std::optional<ShapeError>(ShapeError{line, std::move(what)});
  };
  const std::string long_line =
      "line longer than " + std::to_string(kMaxTomlLineBytes >> 10) + " KiB";
  for (size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    switch (c) {
      case '\n':
        end_line(i);
        if (too_long) return fail(long_line);
        break;
      case '#':
        while (i + 1 < t.size() && t[i + 1] != '\n') ++i;
        break;
      case '"':
      case '\'': {
        const bool multi = t.substr(i, 3) == std::string(3, c);
        i += multi ? 3 : 1;
        for (; i < t.size(); ++i) {
          if (t[i] == '\\' && c == '"' && i + 1 < t.size() &&
              t[i + 1] != '\n') {
            ++i;  // an escaped character (a "\" before a newline trims it)
          } else if (t[i] == '\n') {
            if (!multi) {  // unterminated: toml11 says so
              --i;
              break;
            }
            end_line(i);
            if (too_long) return fail(long_line);
          } else if (t[i] == c) {
            if (!multi) break;
            size_t run = 1;
            while (i + run < t.size() && t[i + run] == c) ++run;
            // Three close the string; up to two more before them are
            // content ("""a""""" is a"").
            i += std::min<size_t>(run, 5) - 1;
            if (run >= 3) break;
          }
        }
        break;
      }
      case '[':
      case '{':
        if (stack.size() == kMaxTomlDepth) {
          return fail("nested deeper than " + std::to_string(kMaxTomlDepth) +
                      " levels (arrays, inline tables, table headers)");
        }
        if (c == '{') {
          stack.push_back('{');
          key_side = true, key_parts = 1;
        } else if (key_side && (stack.empty() || stack.back() == 'h')) {
          stack.push_back('h');  // [table] or [[array of tables]]
        } else {
          stack.push_back('[');
          key_side = false;
        }
        break;
      case ']':
      case '}':
        if (!stack.empty()) stack.pop_back();
        key_side = !stack.empty() && stack.back() == 'h';
        break;
      case ',':
        if (!stack.empty() && stack.back() == '{')
          key_side = true, key_parts = 1;
        break;
      case '=':
        key_side = false;
        break;
      case '.':
        if (key_side && ++key_parts > kMaxTomlKeyParts) {
          return fail("key of more than " + std::to_string(kMaxTomlKeyParts) +
                      " dotted parts");
        }
        break;
      default:
        break;
    }
  }
  if (t.size() - line_start > kMaxTomlLineBytes) return fail(long_line);
  return std::nullopt;
}

}  // namespace

Result<toml::value> ParseTomlText(std::string_view text, std::string_view name,
                                  size_t max_bytes) {
  const std::string file(name);
  if (text.size() > max_bytes) {
    const std::string size = max_bytes % (1 << 20) == 0
                                 ? std::to_string(max_bytes >> 20) + " MiB"
                                 : std::to_string(max_bytes) + " bytes";
    // The line on which the limit is crossed.
    const auto line =
        1 + std::count(text.begin(), text.begin() + max_bytes, '\n');
    return Status::InvalidArgument(file + ":" + std::to_string(line) +
                                   ": larger than " + size +
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
  if (auto shape = CheckShape(text)) {
    return Status::InvalidArgument(file + ":" + std::to_string(shape->line) +
                                   ": TOML syntax error: " + shape->what);
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
