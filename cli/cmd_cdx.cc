// freshd cdx [--write] FILE... : the CDXJ index of WARC files (store/cdxj.h:
// "<urlkey> <timestamp> <json>" per response or revisit record, as pywb and
// warcio.js write it), read from the files themselves. Prints each file's
// lines, sorted, on stdout; with --write, writes "<name>.cdxj" beside each
// file instead (what the daemon writes when it closes a file). A file cut
// short (a crash) is indexed up to its last complete record, with a note on
// stderr. Exit: 0 every file indexed, 1 a file could not be read or
// written, 2 bad usage.

#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "store/cdxj.h"

namespace freshd::cli {
namespace {

struct Options {
  std::vector<std::string> files;
  bool write = false;
};

int Run(const Options& o) {
  int rc = 0;
  for (const std::string& file : o.files) {
    uint64_t valid = 0;
    auto lines = store::IndexWarcFile(file, &valid);
    if (!lines.ok()) {
      std::fprintf(stderr, "freshd cdx: %s\n",
                   lines.status().ToString().c_str());
      rc = 1;
      continue;
    }
    struct stat st {};
    if (stat(file.c_str(), &st) == 0 &&
        static_cast<uint64_t>(st.st_size) > valid) {
      std::fprintf(stderr,
                   "freshd cdx: %s: %llu bytes after the last complete "
                   "record are not indexed\n",
                   file.c_str(),
                   static_cast<unsigned long long>(
                       static_cast<uint64_t>(st.st_size) - valid));
    }
    if (o.write) {
      const std::string out = store::CdxjPathFor(file);
      if (Status s = store::WriteCdxjFile(out, std::move(lines).value());
          !s.ok()) {
        std::fprintf(stderr, "freshd cdx: %s\n", s.ToString().c_str());
        rc = 1;
      }
      continue;
    }
    for (const std::string& line : *lines) std::printf("%s\n", line.c_str());
  }
  std::fflush(stdout);
  return rc;
}

}  // namespace

void AddCdxCommand(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "cdx",
      "Index WARC files as CDXJ (one sorted line per response or revisit "
      "record: SURT url key, timestamp, JSON with url, mime, status, digest, "
      "length, offset, filename)");
  cmd->add_option("FILE", o->files,
                  "WARC files (.warc.gz, one gzip member "
                  "per record)")
      ->required();
  cmd->add_flag("--write", o->write,
                "write <name>.cdxj beside each file instead of printing");
  cmd->callback([o, exit_code] { *exit_code = Run(*o); });
}

}  // namespace freshd::cli
