#include "src/report/html.hpp"

#include <regex>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include "tests/unit/report_fixtures.hpp"

#include "src/report/json.hpp"
#include "src/report/terminal.hpp"
#include "src/run/cell_answer_read.hpp"
#include "tests/unit/schema_coverage.hpp"

namespace portcheck {
namespace {

const std::vector<std::string> kPayloads = {
    "<script>window.__pwned=1</script>",
    "<img src=x onerror=\"window.__pwned=1\">",
    "</script><script>window.__pwned=1</script>",
    "\"><svg onload=window.__pwned=1>",
    "<!-- <script>",
};

CellResult cell(const std::string& kernel, const std::string& target,
                FailureKind kind = FailureKind::none, const std::string& fp = "",
                const std::string& message = "", const std::string& stage = "") {
  CellResult c = test_support::cell(kernel, target, kind, fp, message, stage);
  c.stages = {{"frontend", 0.1}, {"ttir", 0.05}};
  if (kind != FailureKind::none) c.log = "Traceback (most recent call last):\n  " + message + "\n";
  return c;
}

// The shared sample, with this file's cells (stage times, logs), a host, gamma_ratio's link and
// failing line, and the whole MLIR message (a type in angle brackets).
Report sample_report() {
  auto r = test_support::sample_report(
      {cell, std::string(test_support::kExtfMessage) + ", but got 'tensor<32x32xi8>'"});
  r.environment["host"] = "ci-1";
  auto& gamma = test_support::cell_at(r, "gamma_ratio", "hip:gfx942");
  gamma.link = "https://github.com/triton-lang/triton/issues/1";
  gamma.error_source = SourceLocation{"/src/kernels.py", 32};
  return r;
}

// Every piece of text a compiler or a user controls, set to `payload`.
Report hostile_report() {
  Report r = sample_report();
  int i = 0;
  for (auto& c : r.cells) {
    const auto& payload = kPayloads[i++ % kPayloads.size()];
    c.kernel = c.base_kernel + payload;
    c.variant = payload;
    if (c.kind != FailureKind::none) {
      c.message = "error " + payload;
      c.log = "log line\n" + payload + "\n";
      c.pass = payload;
      c.why = payload;
      c.link = "javascript:window.__pwned=1//" + payload;
      c.error_source = SourceLocation{"/tmp/" + payload + ".py", 3};
    }
    c.kernel_source = SourceLocation{"/home/" + payload + "/k.py", 1};
    c.metadata.name = payload;
    c.metadata.hash = payload;
    c.metadata.target = KernelMetadata::Target{payload, payload, 32};
    // A key of the user's choosing, as a report read back may carry in its open objects.
    c.resources = {{payload, {{"nested", payload}}}};
  }
  for (auto& row : r.rows) {
    for (const auto& c : r.cells)
      if (c.base_kernel == row) {
        row = c.kernel;
        break;
      }
  }
  r.environment["host"] = kPayloads[0];
  r.environment["options"] = {{"manifest", kPayloads[2]}, {"cache", kPayloads[3]}};
  return r;
}

// The text between <script type="application/json" id="data"> and its </script>.
std::string data_blob(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"data\">";
  const auto start = html.find(open);
  EXPECT_NE(start, std::string::npos);
  if (start == std::string::npos) return "";
  const auto end = html.find("</script>", start);
  EXPECT_NE(end, std::string::npos);
  return html.substr(start + open.size(), end - start - open.size());
}

std::size_t count(const std::string& haystack, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1))
    ++n;
  return n;
}

TEST(HtmlReport, IsOneSelfContainedDocument) {
  const auto html = render_html(sample_report());
  EXPECT_EQ(html.rfind("<!doctype html>", 0), 0u);
  EXPECT_NE(html.find("</html>"), std::string::npos);
  // The data blob and the one inline script, nothing loaded from anywhere.
  EXPECT_EQ(count(html, "<script"), 2u);
  EXPECT_EQ(count(html, "</script>"), 2u);
  // Outside the data blob (where a cell's https link may sit), nothing names anything to load.
  auto page = html;
  const auto blob = data_blob(html);
  page.erase(page.find(blob), blob.size());
  for (const auto* external :
       {"http://", "https://", " src=", " href=", "<link", "@import", "url(", "<img", "<iframe"})
    EXPECT_EQ(page.find(external), std::string::npos) << external;
}

TEST(HtmlReport, ContentSecurityPolicyForbidsTheNetwork) {
  const auto html = render_html(sample_report());
  const std::regex csp("<meta http-equiv=\"Content-Security-Policy\" content=\"([^\"]*)\">");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(html, m, csp));
  const auto policy = m[1].str();
  EXPECT_NE(policy.find("default-src 'none'"), std::string::npos) << policy;
  EXPECT_NE(policy.find("style-src 'unsafe-inline'"), std::string::npos) << policy;
  EXPECT_NE(policy.find("img-src data:"), std::string::npos) << policy;
  // Only the page's own script, by hash: an injected inline script or handler could not run.
  EXPECT_TRUE(std::regex_search(policy, std::regex("script-src 'sha256-[A-Za-z0-9+/]{43}='")))
      << policy;
  EXPECT_EQ(policy.find("connect-src"), std::string::npos);
  // The policy comes before any script.
  EXPECT_LT(html.find("Content-Security-Policy"), html.find("<script"));
}

// The JSON report is written one cell at a time (report_to_json_text), as the whole tree would
// be dumped: the same text, whatever the cells and the user's text in it say.
TEST(JsonReport, TextMadeCellByCellIsTheWholeTreesDump) {
  for (auto report : {sample_report(), hostile_report(), Report{}}) {
    report.environment["options"]["manifest"] = "\n  \"cells\": []";
    EXPECT_EQ(report_to_json_text(report), report_to_json(report).dump(2) + "\n");
  }
}

TEST(HtmlReport, JsonBlobRoundTrips) {
  const auto report = sample_report();
  const auto data = nlohmann::json::parse(data_blob(render_html(report)));
  EXPECT_EQ(data.at("report"), report_to_json(report));
  const auto back = report_from_json(data.at("report"), "html");
  EXPECT_EQ(report_to_json(back), report_to_json(report));
}

// A cell's metadata goes through the report whole: every member the worker's kernel_metadata
// defines is written and read back, an integer arch and a string one alike (merge, diff and
// report read it so).
TEST(HtmlReport, KernelMetadataRoundTripsThroughTheReport) {
  auto metadata = kernel_metadata_sample();
  std::set<std::string> missing;
  uncovered_members({{"$ref", "#/$defs/kernel_metadata"}}, metadata, "metadata", missing);
  EXPECT_TRUE(missing.empty()) << nlohmann::json(missing).dump();
  for (const auto& arch : {nlohmann::json(90), nlohmann::json("gfx942")}) {
    metadata["target"]["arch"] = arch;
    const nlohmann::json answer = {{"status", "ok"},
                                   {"compile_s", 0.0},
                                   {"stages", nlohmann::json::object()},
                                   {"metadata", metadata},
                                   {"sizes", nlohmann::json::object()},
                                   {"source", nullptr},
                                   {"resources", nlohmann::json::object()}};
    auto report = sample_report();
    report.cells.at(0).metadata = *read_cell_answer("compile_result", answer).metadata;
    const auto back = report_from_json(report_to_json(report), "round trip");
    EXPECT_EQ(to_json(back.cells.at(0).metadata), metadata);
  }
}

// The detail view's command per cell: compiled failures only (xfail too), none for ok or xpass.
TEST(HtmlReport, ReproCommandsOfTheFailingCells) {
  auto report = sample_report();
  report.manifest = "--demo";
  const auto data = nlohmann::json::parse(data_blob(render_html(report)));
  const std::vector<std::string> repro = data.at("view").at("repro");
  const std::string none;
  EXPECT_EQ(repro, (std::vector<std::string>{
                       none, none, none, none, none,
                       "triton-portcheck repro gamma_ratio -t hip:gfx942 --demo",
                       "triton-portcheck repro 'dot_small[int8]' -t cuda:80 --demo",
                       "triton-portcheck repro 'dot_small[int8]' -t cuda:90 --demo", none}));
}

TEST(HtmlReport, LabelsAndSummaryMatchTheTerminal) {
  const auto report = sample_report();
  const auto data = nlohmann::json::parse(data_blob(render_html(report)));
  const std::vector<std::string> labels = data.at("view").at("labels");
  EXPECT_EQ(labels, (std::vector<std::string>{"ok", "ok", "ok", "ok", "ok", "front:A", "mlir:B",
                                              "xmlir:B", "xpass"}));
  const auto summary = data.at("view").at("summary").get<std::string>();
  EXPECT_EQ(summary.rfind("9 cells: ", 0), 0u) << summary;
  EXPECT_NE(render_terminal(report, TerminalStyle{false}).find(summary + "\n"), std::string::npos)
      << summary;
  auto sharded = report;
  sharded.shard = ShardInfo{1, 2};
  sharded.merged_from = {"a.json", "b.json"};
  sharded.cells[0].cached = true;
  const auto sharded_summary = nlohmann::json::parse(data_blob(render_html(sharded)))
                                   .at("view")
                                   .at("summary")
                                   .get<std::string>();
  EXPECT_NE(sharded_summary.find("shard 1/2"), std::string::npos) << sharded_summary;
  EXPECT_NE(render_terminal(sharded, TerminalStyle{false}).find(sharded_summary + "\n"),
            std::string::npos)
      << sharded_summary;
  const auto& groups = data.at("view").at("groups");
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].at("letter"), "A");
  EXPECT_EQ(groups[0].at("cells"), nlohmann::json::array({5}));
  EXPECT_EQ(groups[1].at("letter"), "B");
  EXPECT_EQ(groups[1].at("cells"), nlohmann::json::array({6, 7}));
}

TEST(HtmlReport, HostileTextNeverAppearsAsMarkup) {
  const auto report = hostile_report();
  const auto html = render_html(report);
  // Exactly the two script elements of the template: none of the payloads opened or closed one.
  EXPECT_EQ(count(html, "<script"), 2u);
  EXPECT_EQ(count(html, "</script"), 2u);
  for (const auto* raw : {"<img", "<svg", "<!--", "window.__pwned=1</script>", "onerror=\"window"})
    EXPECT_EQ(html.find(raw), std::string::npos) << raw;
  // Not even a '<' in the data, which is all the report text there is.
  const auto blob = data_blob(html);
  EXPECT_EQ(blob.find('<'), std::string::npos);
  EXPECT_EQ(blob.find('>'), std::string::npos);
  EXPECT_EQ(blob.find('&'), std::string::npos);
  EXPECT_NE(blob.find("\\u003cscript\\u003ewindow.__pwned=1\\u003c/script\\u003e"),
            std::string::npos);
  // ...and what the escaping carried is the text itself, unchanged.
  const auto data = nlohmann::json::parse(blob);
  EXPECT_EQ(data.at("report"), report_to_json(report));
  EXPECT_EQ(data["report"]["environment"]["host"], kPayloads[0]);
  // The template outside the blob is the same whatever the report says.
  const auto outside = [](const std::string& h) { return h.substr(0, h.find("id=\"data\">")); };
  EXPECT_EQ(outside(html), outside(render_html(sample_report())));
}

TEST(HtmlReport, LineSeparatorsAndInvalidUtf8AreSafe) {
  auto report = sample_report();
  report.cells[5].message = "a\u2028b\u2029c & d > e";
  report.cells[6].log = std::string("bad bytes \xff\xfe end");
  std::string html;
  ASSERT_NO_THROW(html = render_html(report));
  const auto blob = data_blob(html);
  EXPECT_EQ(blob.find("\u2028"), std::string::npos);
  EXPECT_EQ(blob.find("\u2029"), std::string::npos);
  const auto data = nlohmann::json::parse(blob);
  const auto& cells = data["report"]["cells"];
  EXPECT_EQ(cells[5]["message"], "a\u2028b\u2029c & d > e");
  EXPECT_EQ(cells[6]["log"], "bad bytes \ufffd\ufffd end");
}

TEST(HtmlReport, EmptyAndInterruptedReportsRender) {
  Report empty;
  empty.tool_version = "0.1.0";
  const auto data = nlohmann::json::parse(data_blob(render_html(empty)));
  EXPECT_TRUE(data["report"]["cells"].empty());
  EXPECT_EQ(data["view"]["summary"], "0 cells: 0 ok, 0 failed (0 new) · wall 0.0 s");

  auto partial = sample_report();
  partial.interrupted = true;
  partial.cells.resize(4);
  const auto p = nlohmann::json::parse(data_blob(render_html(partial)));
  EXPECT_EQ(p["report"]["interrupted"], true);
  EXPECT_NE(p["view"]["summary"].get<std::string>().find("INTERRUPTED"), std::string::npos);
}

TEST(HtmlReport, RendersThousandsOfCells) {
  Report big;
  big.tool_version = "0.1.0";
  for (int t = 0; t < 10; ++t) big.targets.push_back("cuda:" + std::to_string(70 + t));
  for (int k = 0; k < 300; ++k) {
    big.rows.push_back("kernel_" + std::to_string(k));
    for (const auto& t : big.targets)
      big.cells.push_back(k % 7 == 0 ? cell(big.rows.back(), t, FailureKind::mlir_error,
                                            "fp" + std::to_string(k % 5),
                                            "msg <" + std::to_string(k) + ">", "ttgir")
                                     : cell(big.rows.back(), t));
  }
  const auto html = render_html(big);
  const auto data = nlohmann::json::parse(data_blob(html));
  EXPECT_EQ(data["report"]["cells"].size(), 3000u);
  EXPECT_EQ(data["view"]["labels"].size(), 3000u);
  EXPECT_EQ(data["view"]["groups"].size(), 5u);
}

}  // namespace
}  // namespace portcheck
