// The generated man pages (man/mangen.cc) against what they describe, read
// independently: every subcommand `freshd --help` lists, every option and
// positional each `freshd CMD --help` lists, and every config key
// `freshd check-config --print` writes appear in the pages as `man -l` renders
// them; groff formats both with every warning enabled and says nothing. The
// pages are rendered with `man -l` and `col -bx` (plain text, tabs expanded).

#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/cli/run_command.h"

namespace freshd {
namespace {

using testing::CommandResult;
using testing::RunFreshd;
using testing::ShellQuote;

const std::string kManDir = FRESHD_MAN_DIR;

// stdout and stderr of a shell command.
std::string Shell(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return "popen failed";
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

std::string Rendered(const std::string& page) {
  return Shell("MANWIDTH=200 man -l " + ShellQuote(kManDir + "/" + page) +
               " | col -bx");
}

// The names listed under `heading` in CLI11 --help output: the first word of
// each line indented by two spaces, up to the next unindented line.
std::vector<std::string> Listed(const std::string& help,
                                const std::string& heading) {
  std::vector<std::string> names;
  std::istringstream in(help);
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind(heading, 0) == 0) {
      inside = true;
      continue;
    }
    if (!inside) continue;
    if (line.empty() || line[0] != ' ') {
      inside = false;
      continue;
    }
    if (line.rfind("   ", 0) == 0) continue;  // a description's continuation
    std::istringstream words(line);
    std::string first;
    words >> first;
    names.push_back(first);
  }
  return names;
}

// The rendered text of the subsection headed `title` (".SS title"), up to
// the next subsection (3-space indent) or section (no indent).
std::string Subsection(const std::string& page, const std::string& title) {
  size_t at = page.find("\n   " + title + "\n");
  if (at == std::string::npos) return "";
  std::istringstream in(page.substr(at + title.size() + 5));
  std::string text = "\n   " + title + "\n", line;
  while (std::getline(in, line)) {
    if (!line.empty() && (line[0] != ' ' || line.rfind("    ", 0) != 0)) break;
    text += line + "\n";
  }
  return text;
}

// Checks every subcommand below `path` (e.g. {"store"}) against `page`.
void CheckCommands(const std::string& page, std::vector<std::string> path,
                   int* commands) {
  std::vector<std::string> args = path;
  args.push_back("--help");
  CommandResult help = RunFreshd(args);
  ASSERT_EQ(help.exit_code, 0) << help.err;
  std::vector<std::string> subs = Listed(help.out, "Subcommands:");
  std::string title = "freshd";
  for (const auto& p : path) title += " " + p;
  if (subs.empty()) {
    ++*commands;
    const std::string section = Subsection(page, title);
    ASSERT_FALSE(section.empty()) << title << " not in freshd(8)";
    for (const char* heading : {"Options:", "Positionals:"}) {
      for (std::string name : Listed(help.out, heading)) {
        // "-h,--help" and "--config,-c": check each long name.
        std::istringstream parts(name);
        std::string part;
        while (std::getline(parts, part, ',')) {
          if (part == "-h" || part == "--help") continue;
          EXPECT_NE(section.find(part), std::string::npos)
              << title << " " << part << " not in freshd(8):\n"
              << section;
        }
      }
    }
  }
  for (const std::string& sub : subs) {
    std::vector<std::string> deeper = path;
    deeper.push_back(sub);
    EXPECT_NE(page.find("\n   " + title + " " + sub), std::string::npos)
        << title << " " << sub;
    CheckCommands(page, deeper, commands);
  }
}

TEST(ManPagesTest, Freshd8HasEverySubcommandAndOption) {
  const std::string page = Rendered("freshd.8");
  ASSERT_NE(page.find("FRESHD(8)"), std::string::npos) << page;
  int commands = 0;
  CheckCommands(page, {}, &commands);
  EXPECT_GE(commands, 13);  // run demo check-config ... store check, repair
  for (const char* part :
       {"SIGNALS", "SIGTERM", "SIGHUP", "EXIT STATUS", "FILES",
        "/etc/freshd/freshd.toml", "/var/lib/freshd", "freshd.toml(5)"}) {
    EXPECT_NE(page.find(part), std::string::npos) << part;
  }
}

// Every (section, key) freshd knows, in schema order, as
// `freshd check-config --print` writes the effective config.
std::vector<std::pair<std::string, std::string>> ConfigKeys() {
  const std::string config = testing::WriteTempFile(
      "[status]\nlisten = \"127.0.0.1:" + std::to_string(testing::FreePort()) +
      "\"\n");
  CommandResult printed = RunFreshd({"check-config", config, "--print"});
  std::remove(config.c_str());
  EXPECT_EQ(printed.exit_code, 0) << printed.err;
  std::vector<std::pair<std::string, std::string>> keys;
  std::istringstream in(printed.out);
  std::string line, section;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      section = line.substr(1, line.find(']') - 1);
    } else if (size_t eq = line.find(" = "); eq != std::string::npos) {
      keys.emplace_back(section, line.substr(0, eq));
    }
  }
  return keys;
}

TEST(ManPagesTest, FreshdToml5HasEveryConfigKeyInItsSection) {
  const std::string page = Rendered("freshd.toml.5");
  ASSERT_NE(page.find("FRESHD.TOML(5)"), std::string::npos) << page;
  const auto keys = ConfigKeys();
  ASSERT_GT(keys.size(), 50u);
  for (const auto& [section, key] : keys) {
    const std::string text = Subsection(page, "[" + section + "]");
    ASSERT_FALSE(text.empty()) << "[" << section << "]";
    EXPECT_NE(text.find("\n       " + key + " = "), std::string::npos)
        << "[" << section << "] " << key << " not in freshd.toml(5)";
  }
  // Types and bounds come from the schema itself.
  EXPECT_NE(page.find("integer, 1 to 64"), std::string::npos);
  EXPECT_NE(page.find("one of \"seed-hosts\", \"seed-domains\", \"any\""),
            std::string::npos);
}

TEST(ManPagesTest, GroffFormatsBothWithoutWarnings) {
  for (const char* name : {"freshd.8", "freshd.toml.5"}) {
    const std::string path = kManDir + "/" + name;
    EXPECT_EQ(Shell("groff -man -Tutf8 -ww -z " + ShellQuote(path)), "")
        << name;
    // What the package installs is the same page, gzipped.
    EXPECT_EQ(
        Shell("zcmp " + ShellQuote(path + ".gz") + " " + ShellQuote(path)), "")
        << name;
  }
}

}  // namespace
}  // namespace freshd
