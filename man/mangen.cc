// freshd_mangen: writes the man pages freshd.8 and freshd.toml.5 from the
// sources they describe, at build time, so they cannot drift from them:
//   freshd(8)       walks the command line itself (cli::BuildApp: every
//                   subcommand, its description, options and positionals, as
//                   --help shows them);
//   freshd.toml(5)  walks the config schema (VisitConfig: every section and
//                   key, with its type and bounds) and takes each key's prose
//                   and default from the documented example config
//                   (systemd/freshd.toml). A key the schema has and the file
//                   lacks, or the other way round, is an error (exit 1), so
//                   the build fails rather than ship a stale page.
// Usage: freshd_mangen EXAMPLE.toml OUT_DIR
// Single-threaded; no global state.

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "conf/config.h"
#include "conf/config_schema.h"

namespace {

// Text for a roff body line: backslashes escaped, hyphens in option-like
// words kept as minus signs, and a leading '.' or '\'' neutralized.
// Non-ASCII characters become \[uXXXX] escapes (groff reads ASCII).
std::string Roff(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char b = static_cast<unsigned char>(text[i]);
    const char c = text[i];
    if (b >= 0x80) {
      int len = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
      unsigned cp = len == 4 ? b & 0x07u : len == 3 ? b & 0x0Fu : b & 0x1Fu;
      for (int k = 1; k < len && i + 1 < text.size(); ++k) {
        cp = (cp << 6) | (static_cast<unsigned char>(text[++i]) & 0x3Fu);
      }
      char buf[16];
      std::snprintf(buf, sizeof buf, "\\[u%04X]", cp);
      out += buf;
    } else if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

std::string Bold(const std::string& text) {
  return "\\fB" + Roff(text) + "\\fR";
}

// ---- freshd(8) --------------------------------------------------------------

bool Visible(const CLI::App& app, const CLI::Option* o) {
  return o != app.get_help_ptr() && o != app.get_help_all_ptr() &&
         !o->get_group().empty();
}

// The value label --help shows ("" for a flag), e.g. "FLOAT:FLOAT in [1 -
// 86400]"; `brief` keeps the type alone ("FLOAT") for the usage line.
std::string OptionValue(const CLI::Option* o, bool brief = false) {
  if (o->get_type_size() == 0) return "";  // a flag
  std::string type = o->get_type_name();
  return brief ? type.substr(0, type.find(':')) : type;
}

std::string Usage(const std::string& path, const CLI::App& app) {
  std::string u = Bold(path);
  for (const CLI::Option* o : app.get_options()) {
    if (!Visible(app, o) || o->get_positional()) continue;
    std::string name = o->get_name(false, false);
    std::string value = OptionValue(o, true);
    std::string item =
        Bold(name) + (value.empty() ? "" : " \\fI" + Roff(value) + "\\fR");
    u += o->get_required() ? " " + item : " [" + item + "]";
  }
  for (const CLI::Option* o : app.get_options()) {
    if (!Visible(app, o) || !o->get_positional()) continue;
    std::string item = "\\fI" + Roff(o->get_name(true, false)) + "\\fR";
    if (o->get_items_expected_max() > 1) item += "...";
    u += o->get_required() ? " " + item : " [" + item + "]";
  }
  return u;
}

void Command(std::ostream& out, const std::string& path, const CLI::App& app) {
  std::vector<const CLI::App*> subs =
      app.get_subcommands([](const CLI::App*) { return true; });
  out << ".SS \"" << Roff(path) << "\"\n";
  if (!subs.empty()) {
    out << Roff(app.get_description()) << "\n";
  } else {
    out << ".nf\n" << Usage(path, app) << "\n.fi\n";
    out << ".PP\n" << Roff(app.get_description()) << "\n";
    for (const CLI::Option* o : app.get_options()) {
      if (!Visible(app, o)) continue;
      std::string value = OptionValue(o);
      out << ".TP\n";
      if (o->get_positional()) {
        out << "\\fI" << Roff(o->get_name(true, false)) << "\\fR";
      } else {
        out << Bold(o->get_name(false, true));
        if (!value.empty()) out << " \\fI" << Roff(value) << "\\fR";
      }
      out << "\n" << Roff(o->get_description());
      if (o->get_required()) out << " (required)";
      std::string def = o->get_default_str();
      if (!def.empty() && !o->get_positional()) {
        out << " (default " << Roff(def) << ")";
      }
      out << "\n";
    }
  }
  for (const CLI::App* sub : subs)
    Command(out, path + " " + sub->get_name(), *sub);
}

std::string FreshdPage(const CLI::App& app) {
  std::ostringstream out;
  out << ".TH FRESHD 8 \"\" \"freshd " << FRESHD_VERSION
      << "\" \"System Administration\"\n";
  out << ".SH NAME\nfreshd \\- "
      << Roff(
             app.get_description().substr(app.get_description().find("— ") + 4))
      << "\n";
  out << ".SH SYNOPSIS\n.nf\n"
      << Bold("freshd") << " \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGS\\fR]\n"
      << Bold("freshd") << " \\fICOMMAND\\fR " << Bold("--help") << "\n"
      << Bold("freshd") << " " << Bold("--version") << "\n.fi\n";
  out << R"(.SH DESCRIPTION
freshd keeps a local copy of a set of web pages as fresh as possible for a
fixed crawl budget (pages per second), while staying polite to every host it
touches. It fetches pages, extracts their text, keeps per\-page change profiles
in LevelDB, takes sitemap \fBlastmod\fR values and pushed hints as noisy change
signals, and spends its budget on whichever fetch buys the most freshness.
.PP
One binary holds the daemon (\fBfreshd run\fR) and one subcommand per
operator job. Results go to standard output, diagnostics to standard error.
\fBfreshd sim\fR reports its progress on standard error when that is a
terminal, and is quiet otherwise; \fBfreshd demo\fR prints a JSON line every
5 seconds.
.SH COMMANDS
)";
  for (const CLI::App* sub :
       app.get_subcommands([](const CLI::App*) { return true; })) {
    Command(out, "freshd " + sub->get_name(), *sub);
  }
  out << R"(.SH SIGNALS
\fBfreshd run\fR handles:
.TP
\fBSIGTERM\fR, \fBSIGINT\fR
Stop cleanly: no new fetches are started, fetches in flight get 10 seconds,
the store is synced and closed, then the process exits 0.
.TP
\fBSIGHUP\fR
Re\-read the config file. \fB[budget] rate\fR and \fB[log] level\fR apply at
once; a file that does not load is logged and the running config kept.
.SH STATUS ENDPOINT
\fBfreshd run\fR serves \fBGET /status\fR (JSON), \fBGET /metrics\fR
(Prometheus), \fBGET /page?url=URL\fR and \fBPOST /signal\fR on
\fB[status] listen\fR (loopback only by default); the README in
\fI/usr/share/doc/freshd\fR documents every field. While a start recovers
the store, \fBGET /status\fR already answers, with \fB"state": "recovering"\fR
and its progress: \fB"phase": "store"\fR with the pages restored so far,
then \fB"phase": "seeds"\fR while a seeds file is added; the other routes
answer 503 until it is done.
.SH EXIT STATUS
.TP
.B 0
Success.
.TP
.B 1
Runtime failure (the store is locked by another freshd, a port is busy, an
I/O error).
.TP
.B 2
Bad usage or bad input: an unknown option, a bad config file (named
\fIfile:line: [section] key: what\fR), an unreadable seeds file, a URL that is
not an absolute http(s) URL. The systemd unit does not restart on 2.
.TP
.B 3
\fBfreshd store check\fR and \fBfreshd store repair\fR: damage found, or
damage remains after the repair.
.SH FILES
.TP
.I /etc/freshd/freshd.toml
The daemon's configuration, see \fBfreshd.toml\fR(5).
.TP
.I /etc/freshd/seeds.txt
Seed URLs, one per line, with an optional whitespace\-separated importance.
.TP
.I /var/lib/freshd
The service's state: the LevelDB store (\fB[store] path\fR).
.TP
.I /usr/lib/systemd/system/freshd.service
The systemd unit; \fBsystemctl reload freshd\fR sends SIGHUP.
.SH SEE ALSO
\fBfreshd.toml\fR(5), \fBsystemctl\fR(1), \fBjournalctl\fR(1)
)";
  return out.str();
}

// ---- freshd.toml(5) ---------------------------------------------------------

struct KeyDoc {
  std::string value;  // as written in the example file
  std::string note;   // "example: default X", when the line has one
  std::string prose;  // its comment lines, joined
  bool seen = false;
};

struct ExampleFile {
  std::string preamble;                              // before [crawler]
  std::map<std::string, std::string> section_prose;  // section -> text
  std::map<std::pair<std::string, std::string>, KeyDoc> keys;
};

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

bool ReadExample(const std::string& path, ExampleFile* f, std::string* error) {
  std::ifstream in(path);
  if (!in) return *error = path + ": cannot read", false;
  std::string line, section, pending;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::string t = Trim(line);
    if (t.empty()) {
      if (!pending.empty()) pending += "\n";
      continue;
    }
    if (t[0] == '#') {
      std::string text = Trim(t.substr(1));
      if (section.empty() && f->keys.empty()) {
        f->preamble += (text.empty() ? "\n" : text + " ");
      } else {
        pending += text + " ";
      }
      continue;
    }
    if (t[0] == '[') {
      section = Trim(t.substr(1, t.find(']') - 1));
      if (!pending.empty()) f->section_prose[section] = Trim(pending);
      pending.clear();
      continue;
    }
    size_t eq = t.find('=');
    if (eq == std::string::npos || section.empty()) {
      return *error = path + ":" + std::to_string(n) + ": not a key line",
             false;
    }
    KeyDoc doc;
    std::string key = Trim(t.substr(0, eq));
    std::string value = Trim(t.substr(eq + 1));
    size_t example = value.find("# example:");
    if (example != std::string::npos) {
      doc.note = Trim(value.substr(example + 1));
      value = Trim(value.substr(0, example));
    }
    doc.value = value;
    doc.prose = Trim(pending);
    pending.clear();
    if (!f->keys.emplace(std::make_pair(section, key), doc).second) {
      return *error = path + ":" + std::to_string(n) + ": [" + section + "] " +
                      key + " twice",
             false;
    }
  }
  return true;
}

std::string Number(double v) {
  if (std::isinf(v)) return "no limit";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

// Writes each schema key's entry; records what the schema lacks.
class PageWriter {
 public:
  PageWriter(ExampleFile* f, std::ostream* out) : f_(f), out_(out) {}

  void Section(const char* name) {
    section_ = name;
    *out_ << ".SS \"[" << name << "]\"\n";
    auto it = f_->section_prose.find(name);
    if (it != f_->section_prose.end()) *out_ << Paragraphs(it->second) << "\n";
  }
  template <typename S>
  void String(const char* key, S*, const std::vector<std::string>& one_of) {
    std::string kind = "string";
    if (!one_of.empty()) {
      kind = "one of";
      for (size_t i = 0; i < one_of.size(); ++i) {
        kind += (i ? ", " : " ") + std::string("\"") + one_of[i] + "\"";
      }
    }
    Entry(key, kind);
  }
  template <typename I>
  void Int(const char* key, I*, long long lo, long long hi) {
    Entry(key, "integer, " + std::to_string(lo) + " to " + std::to_string(hi));
  }
  template <typename D>
  void Double(const char* key, D*, double lo, double hi) {
    Entry(key, "number, " + Number(lo) + " to " + Number(hi));
  }
  template <typename B>
  void Bool(const char* key, B*) {
    Entry(key, "true or false");
  }
  template <typename D>
  void Duration(const char* key, D*, double lo, double hi) {
    Entry(key, "duration, " + Number(lo) + " s to " + Number(hi) + " s");
  }
  template <typename U>
  void Size(const char* key, U*, uint64_t lo, uint64_t hi) {
    Entry(key, "size, " + std::to_string(lo) + " to " + std::to_string(hi) +
                   " bytes");
  }
  template <typename L>
  void StringList(const char* key, L*) {
    Entry(key, "array of strings");
  }
  template <typename M>
  void StringMap(const char* key, M*) {
    Entry(key, "table of strings");
  }

  const std::vector<std::string>& missing() const { return missing_; }

 private:
  static std::string Paragraphs(const std::string& text) {
    std::string out, para;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) {
      line = Trim(line);
      if (line.empty()) {
        if (!para.empty())
          out += (out.empty() ? "" : "\n.br\n") + Roff(Trim(para));
        para.clear();
      } else {
        para += line + " ";
      }
    }
    if (!para.empty()) out += (out.empty() ? "" : "\n.br\n") + Roff(Trim(para));
    return out;
  }

  void Entry(const char* key, const std::string& kind) {
    auto it = f_->keys.find({section_, key});
    if (it == f_->keys.end()) {
      missing_.push_back("[" + section_ + "] " + key);
      return;
    }
    KeyDoc& doc = it->second;
    doc.seen = true;
    *out_ << ".TP\n" << Bold(key) << " = " << Roff(doc.value) << "\n";
    if (!doc.prose.empty()) *out_ << Paragraphs(doc.prose) << "\n.br\n";
    *out_ << "Type: " << Roff(kind) << ".";
    if (!doc.note.empty()) {
      *out_ << " The value shown is an " << Roff(doc.note) << ".";
    } else {
      *out_ << " The value shown is the default.";
    }
    *out_ << "\n";
  }

  ExampleFile* f_;
  std::ostream* out_;
  std::string section_;
  std::vector<std::string> missing_;
};

bool TomlPage(const std::string& example, std::string* page,
              std::string* error) {
  ExampleFile f;
  if (!ReadExample(example, &f, error)) return false;
  std::ostringstream out;
  out << ".TH FRESHD.TOML 5 \"\" \"freshd " << FRESHD_VERSION
      << "\" \"File Formats\"\n";
  out << ".SH NAME\nfreshd.toml \\- configuration of the freshd crawler "
         "daemon\n";
  out << ".SH SYNOPSIS\n.I /etc/freshd/freshd.toml\n";
  out << ".SH DESCRIPTION\n";
  std::istringstream pre(f.preamble);
  std::string para;
  bool first = true;
  while (std::getline(pre, para)) {
    para = Trim(para);
    if (para.empty() || para.rfind("freshd example configuration", 0) == 0) {
      continue;
    }
    out << (first ? "" : ".PP\n") << Roff(para) << "\n";
    first = false;
  }
  out << ".PP\nThe file is TOML. \\fBfreshd check\\-config\\fR \\fIFILE\\fR "
         "validates it (exit 2 names file, line, section and key). Each entry "
         "below shows the key as the installed file has it, its type and "
         "the bounds freshd enforces.\n";
  out << ".SH KEYS\n";
  freshd::Config config;
  PageWriter writer(&f, &out);
  freshd::VisitConfig(config, writer);
  std::string bad;
  for (const std::string& k : writer.missing()) {
    bad += "\n  schema key not documented: " + k;
  }
  for (const auto& [k, doc] : f.keys) {
    if (!doc.seen) bad += "\n  not a config key: [" + k.first + "] " + k.second;
  }
  if (!bad.empty()) return *error = example + ":" + bad, false;
  out << R"(.SH RULES
Operators' rules, none by default: an array of tables, one \fB[[rule]]\fR
each, the first rule matching a page being its rule (at most 255 rules).
.TP
.B name
string, required, unique (at most 64 characters): how \fB/page\fR and
\fB/status\fR name the rule.
.TP
.B host
string: the page's host exactly, or \fB*.\fR\fIdomain\fR for every subdomain
of \fIdomain\fR (not \fIdomain\fR itself).
.TP
.B url
string: an RE2 pattern searched anywhere in the URL (at most 1,024 bytes).
.TP
.B origin
string: \fBhttp[s]://\fIhost\fR[\fB:\fIport\fR], the URLs of exactly that
scheme, host and port. Exactly one of \fBhost\fR, \fBurl\fR and
\fBorigin\fR.
.TP
.B min_interval
duration, 0s to 3650d (0s: none): the page is not fetched again sooner.
.TP
.B max_interval
duration, 0s to 3650d (0s: none; at least [sched] min_interval): the page
is due, ahead of value order, once this long has passed since its last fetch.
.TP
.B importance
number, 0 to 1e6 (0: the page's own): the page's importance in every value.
.TP
.B proxy
string, host rules only: \fBdirect\fR or a proxy URL for the hosts' pages and
robots.txt instead of [fetch] proxy.
.TP
.B headers
table of strings, origin rules only: extra request headers (at most 16; no
CR, LF or NUL; framing fields, User-Agent, Accept-Encoding, the
conditional-GET validators, Authorization, Cookie and Proxy-Authorization
refused).
.TP
.B cookie
string, origin rules only: the Cookie header's value.
.TP
.B credentials_file
string, origin rules only: a file (mode 0600 or stricter, else refused)
whose first line is \fBbasic\fR \fIUSER\fB:\fIPASSWORD\fR or \fBbearer\fR
\fITOKEN\fR, sent as the Authorization header.
.TP
.B credential
string, origin rules only: the same, as a file name in systemd's
$CREDENTIALS_DIRECTORY (LoadCredential=); not with credentials_file.
.PP
A rule sets at least one of min_interval, max_interval, importance, proxy or
a request key, and min_interval does not exceed max_interval. Forced fetches
take tokens from the same [budget]; value order spends the rest. SIGHUP
reloads the rules; request headers and credentials are sent only to the
rule's origin, never archived in clear, and read at start only.
.SH FILES
.TP
.I /etc/freshd/freshd.toml
The configuration the systemd unit runs with.
.TP
.I /usr/share/doc/freshd/freshd.toml
The same documented example, as shipped.
.SH SEE ALSO
\fBfreshd\fR(8)
)";
  *page = out.str();
  return true;
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  return static_cast<bool>(out.flush());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: freshd_mangen EXAMPLE.toml OUT_DIR\n");
    return 2;
  }
  const std::string dir = argv[2];
  CLI::App app;
  int exit_code = 0;
  freshd::cli::BuildApp(app, &exit_code);
  std::string toml, error;
  if (!TomlPage(argv[1], &toml, &error)) {
    std::fprintf(stderr, "freshd_mangen: %s\n", error.c_str());
    return 1;
  }
  if (!WriteFile(dir + "/freshd.8", FreshdPage(app)) ||
      !WriteFile(dir + "/freshd.toml.5", toml)) {
    std::fprintf(stderr, "freshd_mangen: cannot write in %s\n", dir.c_str());
    return 1;
  }
  return 0;
}
