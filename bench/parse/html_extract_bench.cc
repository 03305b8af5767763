// Benchmark: freshd's streaming HTML extraction (parse/html_extract.h) versus
// libxml2's HTML tree parser plus a text walk, on the same files in the same
// run. Reports CPU-seconds (CLOCK_PROCESS_CPUTIME_ID), MB per CPU-second,
// the speed ratio (medians of --runs runs), and how well the two texts agree:
// the mean Jaccard similarity of their word 4-shingle sets over the corpus.
//
//   build-html/bench/html_extract_bench [--runs 5] [DIR]
//   DIR defaults to /usr/share/doc/python3/html (Debian package python3-doc).

#include <libxml/HTMLparser.h>
#include <libxml/tree.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "bench/parse/corpus.h"
#include "parse/html_extract.h"
#include "parse/shingle.h"

namespace {

using freshd::bench::CpuSeconds;
using freshd::bench::Median;
using freshd::bench::Page;

// Same hidden and block element sets as parse/html_extract.cc.
bool Hidden(const char* n) {
  static const char* kHidden[] = {"script",   "style",   "noscript",
                                  "template", "title",   "xmp",
                                  "iframe",   "noembed", "noframes"};
  for (const char* h : kHidden)
    if (std::strcmp(n, h) == 0) return true;
  return false;
}

bool Block(const char* n) {
  static const char* kBlock[] = {
      "address", "article", "aside",    "blockquote", "body",       "br",
      "caption", "center",  "dd",       "details",    "dialog",     "dir",
      "div",     "dl",      "dt",       "fieldset",   "figcaption", "figure",
      "footer",  "form",    "frameset", "h1",         "h2",         "h3",
      "h4",      "h5",      "h6",       "head",       "header",     "hgroup",
      "hr",      "html",    "legend",   "li",         "main",       "menu",
      "nav",     "ol",      "option",   "p",          "pre",        "section",
      "select",  "summary", "table",    "tbody",      "td",         "textarea",
      "tfoot",   "th",      "thead",    "tr",         "ul"};
  for (const char* b : kBlock)
    if (std::strcmp(n, b) == 0) return true;
  return false;
}

void Walk(xmlNode* node, std::string* out) {
  for (xmlNode* n = node; n; n = n->next) {
    if (n->type == XML_TEXT_NODE || n->type == XML_CDATA_SECTION_NODE) {
      if (n->content) out->append(reinterpret_cast<const char*>(n->content));
    } else if (n->type == XML_ELEMENT_NODE) {
      const char* name = reinterpret_cast<const char*>(n->name);
      if (Hidden(name)) continue;
      bool block = Block(name);
      if (block) out->push_back('\n');
      Walk(n->children, out);
      if (block) out->push_back('\n');
    }
  }
}

// The libxml2 baseline: tree parse + text walk.
std::string LibxmlText(const std::string& body) {
  htmlDocPtr doc = htmlReadMemory(body.data(), static_cast<int>(body.size()),
                                  "http://bench.invalid/", nullptr,
                                  HTML_PARSE_RECOVER | HTML_PARSE_NOERROR |
                                      HTML_PARSE_NOWARNING | HTML_PARSE_NONET |
                                      HTML_PARSE_COMPACT);
  std::string text;
  if (doc) {
    Walk(xmlDocGetRootElement(doc), &text);
    xmlFreeDoc(doc);
  }
  return text;
}

std::string FreshdText(const std::string& body, size_t* links) {
  auto page = freshd::parse::ExtractHtml(body, "text/html",
                                         "http://bench.invalid/dir/page.html");
  if (!page.ok()) return {};
  *links += page->links.size();
  return std::move(page->text);
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 5;
  std::string dir = freshd::bench::kDefaultCorpus;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else {
      dir = argv[i];
    }
  }
  std::vector<Page> pages = freshd::bench::LoadCorpus(dir);
  if (pages.empty()) {
    std::fprintf(stderr,
                 "no *.html files under %s (apt-get install python3-doc)\n",
                 dir.c_str());
    return 2;
  }
  double mb = 0;
  for (const Page& p : pages) mb += p.body.size() / 1e6;
  std::printf("corpus: %s, %zu files, %.1f MB\n", dir.c_str(), pages.size(),
              mb);
  xmlInitParser();

  std::vector<double> fresh_s, xml_s;
  size_t links = 0, sink = 0;
  for (int r = 0; r < runs; ++r) {
    links = 0;
    double t0 = CpuSeconds();
    for (const Page& p : pages) sink += FreshdText(p.body, &links).size();
    double t1 = CpuSeconds();
    for (const Page& p : pages) sink += LibxmlText(p.body).size();
    double t2 = CpuSeconds();
    fresh_s.push_back(t1 - t0);
    xml_s.push_back(t2 - t1);
    std::printf(
        "run %d: freshd %.3f CPU-s (%.1f MB/s), libxml2 %.3f CPU-s "
        "(%.1f MB/s)\n",
        r + 1, t1 - t0, mb / (t1 - t0), t2 - t1, mb / (t2 - t1));
  }

  // Agreement of the two texts: Jaccard of word 4-shingle sets per page.
  const uint64_t seed = 0x5eed;
  double sum_j = 0, min_j = 1;
  std::string worst;
  size_t below_95 = 0, identical = 0, shingles_a = 0, shingles_b = 0;
  for (const Page& p : pages) {
    size_t l = 0;
    auto a = freshd::parse::ShingleText(FreshdText(p.body, &l), 4, seed);
    auto b = freshd::parse::ShingleText(LibxmlText(p.body), 4, seed);
    shingles_a += a.size();
    shingles_b += b.size();
    if (a == b) ++identical;
    double j = 1.0 - freshd::parse::ExactDivergence(a, b);
    sum_j += j;
    if (j < 0.95) ++below_95;
    if (j < min_j) min_j = j, worst = p.path;
  }
  double f = Median(fresh_s), x = Median(xml_s);
  std::printf(
      "\nmedian of %d runs: freshd %.3f CPU-s = %.1f MB/CPU-s; "
      "libxml2 tree+walk %.3f CPU-s = %.1f MB/CPU-s; ratio %.2fx\n",
      runs, f, mb / f, x, mb / x, x / f);
  std::printf("links extracted per run: %zu\n", links);
  std::printf(
      "text agreement: mean Jaccard(4-shingles) = %.4f over %zu pages; "
      "min %.4f (%s); %zu pages below 0.95\n",
      sum_j / pages.size(), pages.size(), min_j, worst.c_str(), below_95);
  std::printf(
      "shingles: freshd %zu, libxml2 %zu; identical sets on %zu of "
      "%zu pages\n",
      shingles_a, shingles_b, identical, pages.size());
  std::printf("rerun: build-html/bench/html_extract_bench --runs %d %s\n", runs,
              dir.c_str());
  xmlCleanupParser();
  return sink == 0 ? 1 : 0;
}
