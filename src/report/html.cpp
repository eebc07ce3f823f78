#include "src/report/html.hpp"

#include "src/report/terminal.hpp"

#include <map>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "src/report/assets/report_assets.hpp"  // generated: cmake/EmbedText.cmake
#include "src/report/grouping.hpp"
#include "src/report/json.hpp"
#include "src/report/repro.hpp"
#include "util/sha256.hpp"

// The page is one static template plus one JSON blob. Every piece of report text (kernel names,
// compiler messages, logs, paths) travels only inside that blob, written so that no sequence in
// it can end the <script> element, and the inline script builds the DOM from it with
// createElement/textContent alone. The template itself never contains report text. Its style and
// script are assets/report.css and assets/report.js, where eslint reads the script
// (tests/integration/test_html.py); the build compiles both in as constants (src/CMakeLists.txt).
//
// The Content-Security-Policy allows no network at all and only the one inline script, named by
// its SHA-256 (computed here from the constant script text, so it cannot drift). Even markup that
// somehow reached the DOM could therefore run neither a script nor an event handler.

namespace portcheck {
namespace {

// The <script> element's whole text, which its hash covers: the page's script after a newline.
const std::string& script_text() {
  static const std::string text = "\n" + std::string(assets::kReportScript);
  return text;
}

const std::string& script_hash() {
  static const std::string hash = [] { return "sha256-" + util::sha256_base64(script_text()); }();
  return hash;
}

// ---- the data the page draws from

// JSON that can sit inside <script type="application/json">: '<', '>' and '&' (so neither
// "</script" nor "<!--" can appear) and U+2028/U+2029 become \u escapes, which only ever occur
// inside JSON strings, where the escape means the same character. Invalid UTF-8 from a compiler
// becomes U+FFFD instead of an exception.
std::string script_safe_json(const nlohmann::json& json) {
  const auto text = json.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' &&
               (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string render_html(const Report& input) {
  const Report report = one_row_per_version(input);  // one row per version when there are several
  const auto groups = group_failures(report);
  std::map<std::string, std::string> letters;
  for (const auto& g : groups) letters[g.fingerprint] = g.letter;

  nlohmann::json labels = nlohmann::json::array();
  // The repro command of each cell ("" for none), beside the labels: data["report"] stays exactly
  // the JSON report.
  nlohmann::json repro = nlohmann::json::array();
  for (const auto& c : report.cells) {
    labels.push_back(cell_label(c, letters));
    repro.push_back(repro_command(c, report.manifest));
  }
  nlohmann::json group_list = nlohmann::json::array();
  for (const auto& g : groups) {
    nlohmann::json indices = nlohmann::json::array();
    for (const auto* c : g.cells) indices.push_back(c - report.cells.data());
    group_list.push_back(
        {{"letter", g.letter}, {"fingerprint", g.fingerprint}, {"cells", indices}});
  }
  const nlohmann::json data = {
      {"report", report_to_json(report)},
      {"view",
       {{"labels", labels},
        {"repro", repro},
        {"groups", group_list},
        {"summary", summary_line(report)}}},
  };

  std::string out;
  out.reserve(std::size_t{64} * 1024 + report.cells.size() * 2048);
  out += "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += fmt::format(
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src '{}'; "
      "style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'\">\n",
      script_hash());
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<meta name=\"generator\" content=\"triton-portcheck\">\n";
  out += "<title>triton-portcheck report</title>\n<style>\n";
  out += assets::kReportStyle;
  out += "</style>\n</head>\n<body>\n";
  out += "<header id=\"header\"></header>\n";
  out +=
      "<noscript><p>This report draws its matrix with JavaScript (inline, no network access). The "
      "data is embedded below as JSON (element id \"data\").</p></noscript>\n";
  out += "<div id=\"filters\" role=\"search\"></div>\n";
  out +=
      "<div id=\"layout\">\n<main>\n<div class=\"matrix-wrap\"><table id=\"matrix\" "
      "class=\"matrix\"></table></div>\n";
  out += "<section id=\"groups\"></section>\n</main>\n";
  out +=
      "<aside id=\"detail\"><p class=\"hint\">Click a cell to see its details: message, log, stage "
      "times, metadata.</p></aside>\n</div>\n";
  out += "<script type=\"application/json\" id=\"data\">";
  out += script_safe_json(data);
  out += "</script>\n<script>";
  out += script_text();
  out += "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace portcheck
