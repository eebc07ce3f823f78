#include "util/text_escape.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/unit/hostile_strings.hpp"

namespace {

using util::Newlines;

TEST(Printable, EscapesTerminalControlsAndKeepsText) {
  EXPECT_EQ(util::printable("plain text: 100%"), "plain text: 100%");
  EXPECT_EQ(util::printable("\x1b[31mred\x1b[0m"), "\\e[31mred\\e[0m");
  EXPECT_EQ(util::printable("a\rb\bc\x07\x7f"), "a\\rb\\x08c\\x07\\x7f");
  EXPECT_EQ(util::printable(std::string("nul\0!", 5)), "nul\\x00!");
  EXPECT_EQ(util::printable("one\ntwo\tthree"), "one\\ntwo\\tthree");
  EXPECT_EQ(util::printable("one\ntwo\tthree", Newlines::keep), "one\ntwo\tthree");
  // C1 controls (CSI as U+009B) and bidirectional overrides; other UTF-8 stays.
  EXPECT_EQ(util::printable("\xc2\x9b"
                            "31m \xe2\x80\xae"
                            "evil \xc3\xa9\xf0\x9f\x98\x80"),
            "\\u009b31m \\u202eevil \xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(util::printable("bad \xff byte"), "bad \xef\xbf\xbd byte");
}

TEST(Printable, LeavesNoControlByteInAnyHostileString) {
  for (const auto& [name, text] : portcheck::test_support::hostile_strings()) {
    const auto shown = util::printable(text);
    for (const char c : shown)
      EXPECT_FALSE((c >= 0 && c < 0x20) || c == 0x7f) << name << ": " << shown;
    EXPECT_EQ(shown.find("\xc2\x9b"), std::string::npos) << name;
    EXPECT_EQ(shown.find("\xe2\x80\xae"), std::string::npos) << name;
  }
}

TEST(NoWorkflowCommands, NoLineStartsACommand) {
  EXPECT_EQ(util::no_workflow_commands("ok line\n::warning::x\n"), "ok line\n\\::warning::x\n");
  EXPECT_EQ(util::no_workflow_commands("  ::error::x"), "\\  ::error::x");
  EXPECT_EQ(util::no_workflow_commands("a\r::error::x"), "a\r\\::error::x");
  EXPECT_EQ(util::no_workflow_commands("\xc2\xa0::add-mask::s"), "\\\xc2\xa0::add-mask::s");
  EXPECT_EQ(util::no_workflow_commands("x ##[error]y ##[z"), "x ##\\[error]y ##\\[z");
  EXPECT_EQ(util::no_workflow_commands("a::b is fine\n: not one"), "a::b is fine\n: not one");
  EXPECT_EQ(util::no_workflow_commands(""), "");
  EXPECT_EQ(util::no_workflow_commands("::"), "\\::");
}

TEST(NoWorkflowCommands, JsonStaysTheSameJson) {
  const nlohmann::json value = {{"message", "x ##[error]y\n::warning::z"}, {"##[k", 1}};
  const auto shown = util::no_workflow_commands_in_json(value.dump(2));
  EXPECT_EQ(shown.find("##["), std::string::npos) << shown;
  EXPECT_EQ(nlohmann::json::parse(shown), value);
}

TEST(MarkdownCode, FencesLongerThanAnyBacktickRun) {
  EXPECT_EQ(util::markdown_code("x[0]"), "`x[0]`");
  EXPECT_EQ(util::markdown_code("a `b` c"), "``a `b` c``");
  EXPECT_EQ(util::markdown_code("``x``` y"), "```` ``x``` y ````");
  EXPECT_EQ(util::markdown_code("` edge"), "`` ` edge ``");
  EXPECT_EQ(util::markdown_code(" both "), "`  both  `");
  EXPECT_EQ(util::markdown_code("two\nlines"), "`two lines`");
  EXPECT_EQ(util::markdown_code("a|b", true), "`a\\|b`");
  EXPECT_EQ(util::markdown_code("a|b"), "`a|b`");
  EXPECT_EQ(util::markdown_code("\x1b[2J"), "`\\e[2J`");
  EXPECT_EQ(util::markdown_code(""), "");
}

TEST(MarkdownText, NothingActive) {
  EXPECT_EQ(util::markdown_text("plain words 42"), "plain words 42");
  EXPECT_EQ(util::markdown_text("![i](http://x/p.png)"),
            "\\!\\[i\\]\\(http\\:\u2060\\/\\/x\\/p\\.png\\)");
  EXPECT_EQ(util::markdown_text("@octocat"), "\\@\u2060octocat");
  EXPECT_EQ(util::markdown_text("www.evil.example"), "www\u2060\\.evil\\.example");
  EXPECT_EQ(util::markdown_text("<b>*x*</b>"), "\\<b\\>\\*x\\*\\<\\/b\\>");
  EXPECT_EQ(util::markdown_text("line\nbreak"), "line break");
}

}  // namespace
