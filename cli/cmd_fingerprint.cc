// freshd fingerprint FILE... : for each HTML file, one JSON line with the text
// hash, token/shingle/link counts, the bottom-m sketch (hex of its binary
// form, base/sketch.h), title and charset.
// freshd diff OLD NEW : one JSON object with the exact fragment staleness
// 1 - |A∩B|/|A∪B| of the two files' shingle sets, the sketch estimate, and
// the set sizes.
// Options: --k (words per shingle, default 4), --m (sketch size, default 64),
// --seed (hash secret, decimal or 0x-hex, default 0), --url (base for
// links), --content-type. Exit 0 ok; 2 bad usage or an unreadable file.

#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/sketch.h"
#include "cli/commands.h"
#include "parse/html_fingerprint.h"

namespace freshd::cli {
namespace {

struct Options {
  int k = parse::kDefaultShingleK;
  size_t m = kDefaultSketchM;
  std::string seed = "0";
  std::string url;
  std::string content_type = "text/html";
  std::vector<std::string> files;
};

void AddCommonOptions(CLI::App* sub, Options* o) {
  sub->add_option("--k", o->k, "words per shingle")
      ->check(CLI::Range(1, parse::kMaxShingleK));
  sub->add_option("--m", o->m, "sketch size (bottom-m hashes)")
      ->check(CLI::Range(size_t{1}, kMaxSketchM));
  sub->add_option("--seed", o->seed,
                  "64-bit hash secret, decimal or 0x-hex (default 0)");
  sub->add_option("--url", o->url, "URL the files came from (link base)");
  sub->add_option("--content-type", o->content_type,
                  "HTTP Content-Type (charset)");
}

bool ParseSeed(const std::string& s, uint64_t* seed) {
  if (s.empty()) return false;
  size_t used = 0;
  try {
    *seed = std::stoull(s, &used, 0);
  } catch (const std::exception&) {
    return false;
  }
  return used == s.size();
}

// Reads at most limit + 1 bytes (the extractor truncates beyond limit).
bool ReadFile(const std::string& path, size_t limit, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  out->resize(limit + 1);
  in.read(out->data(), static_cast<std::streamsize>(out->size()));
  out->resize(static_cast<size_t>(in.gcount()));
  return !in.bad();
}

std::string Hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx",
                static_cast<unsigned long long>(v));
  return buf;
}

// Fingerprints one file; prints the error and returns false on failure.
bool Fingerprint(const std::string& path, const Options& o,
                 const parse::FingerprintOptions& fo,
                 parse::PageFingerprint* out) {
  std::string body;
  if (!ReadFile(path, fo.limits.max_input_bytes, &body)) {
    std::fprintf(stderr, "freshd: cannot read %s\n", path.c_str());
    return false;
  }
  Result<parse::PageFingerprint> fp =
      parse::FingerprintHtml(body, o.content_type, o.url, fo);
  if (!fp.ok()) {
    std::fprintf(stderr, "freshd: %s: %s\n", path.c_str(),
                 fp.status().ToString().c_str());
    return false;
  }
  *out = std::move(fp).value();
  return true;
}

bool MakeOptions(const Options& o, bool keep, parse::FingerprintOptions* fo) {
  if (!ParseSeed(o.seed, &fo->seed)) {
    std::fprintf(stderr, "freshd: --seed: not a 64-bit number: %s\n",
                 o.seed.c_str());
    return false;
  }
  fo->k = o.k;
  fo->m = o.m;
  fo->keep_shingles = keep;
  return true;
}

void RunFingerprint(const Options& o, int* exit_code) {
  parse::FingerprintOptions fo;
  if (!MakeOptions(o, false, &fo)) {
    *exit_code = 2;
    return;
  }
  *exit_code = 0;
  for (const std::string& path : o.files) {
    parse::PageFingerprint fp;
    if (!Fingerprint(path, o, fo, &fp)) {
      *exit_code = 2;
      continue;
    }
    nlohmann::json j = {
        {"file", path},
        {"text_hash", Hex64(fp.text.text_hash)},
        {"tokens", fp.text.token_count},
        {"shingles", fp.text.shingle_count},
        {"sketch", SketchToHex(fp.text.sketch)},
        {"links", fp.page.links.size()},
        {"title", fp.page.title},
        {"charset", fp.page.charset},
        {"text_bytes", fp.page.text.size()},
        {"noindex", fp.page.noindex},
        {"nofollow", fp.page.nofollow},
        {"truncated", fp.page.truncated},
        {"k", fo.k},
        {"m", fo.m},
    };
    if (!fp.page.canonical.empty()) j["canonical"] = fp.page.canonical;
    std::puts(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                  .c_str());
  }
}

void RunDiff(const Options& o, int* exit_code) {
  parse::FingerprintOptions fo;
  parse::PageFingerprint a, b;
  if (!MakeOptions(o, true, &fo) || !Fingerprint(o.files[0], o, fo, &a) ||
      !Fingerprint(o.files[1], o, fo, &b)) {
    *exit_code = 2;
    return;
  }
  size_t both = parse::IntersectionSize(a.text.shingles, b.text.shingles);
  nlohmann::json j = {
      {"old", o.files[0]},
      {"new", o.files[1]},
      {"exact_staleness",
       parse::ExactDivergence(a.text.shingles, b.text.shingles)},
      {"sketch_staleness", SketchDivergence(a.text.sketch, b.text.sketch)},
      {"old_shingles", a.text.shingle_count},
      {"new_shingles", b.text.shingle_count},
      {"common_shingles", both},
      {"union_shingles", a.text.shingle_count + b.text.shingle_count - both},
      {"text_changed", a.text.text_hash != b.text.text_hash},
      {"k", fo.k},
      {"m", fo.m},
  };
  std::puts(j.dump().c_str());
  *exit_code = 0;
}

}  // namespace

void AddFingerprintCommands(CLI::App& app, int* exit_code) {
  auto fopts = std::make_shared<Options>();
  CLI::App* fp = app.add_subcommand(
      "fingerprint",
      "Print the text hash, shingle count, sketch and links of HTML files "
      "(one JSON line per file)");
  AddCommonOptions(fp, fopts.get());
  fp->add_option("FILE", fopts->files, "HTML files")->required();
  fp->callback([fopts, exit_code] { RunFingerprint(*fopts, exit_code); });

  auto dopts = std::make_shared<Options>();
  CLI::App* diff = app.add_subcommand(
      "diff",
      "Print the exact and sketch-estimated fragment staleness between two "
      "versions of an HTML page (JSON)");
  AddCommonOptions(diff, dopts.get());
  diff->add_option("OLD", dopts->files, "old and new HTML file")
      ->required()
      ->expected(2);
  diff->callback([dopts, exit_code] { RunDiff(*dopts, exit_code); });
}

}  // namespace freshd::cli
