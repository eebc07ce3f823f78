#pragma once
// Text that came from outside (a compiler's message, a name in a manifest, a string in a report
// someone else wrote) made safe for the place it is shown: a terminal, a CI log, Markdown.
#include <string>
#include <string_view>

namespace util {

// Whether `printable` lets newlines and tabs through (multi-line text) or escapes them too (a
// field shown on one line, where a newline could fake a line of the tool's own).
enum class Newlines { keep, escape };

// `text` with every character that would act on a terminal instead of being shown escaped in C
// notation: ESC as \e, CR as \r, the other C0 controls and DEL as \xHH, C1 controls and the
// bidirectional overrides (which reorder what is shown, "Trojan Source") as \uHHHH. Invalid UTF-8
// becomes U+FFFD. Backslashes are left as they are: this is for showing, not for parsing back.
std::string printable(std::string_view text, Newlines newlines = Newlines::escape);

// `text` that no CI log takes for a command: GitHub Actions runs a line whose first non-blank
// characters are "::" (::warning::, ::add-mask::, ::stop-commands::) and a line with "##[" anywhere
// (the older syntax). Such a line gets a backslash before its "::", and "##[" becomes "##\[".
std::string no_workflow_commands(std::string_view text);

// The same for a JSON text, which stays the same JSON: its strings hold no raw line break, so only
// "##[" can start a command, and it becomes "##\u005b" (what a parser reads back as "##[").
std::string no_workflow_commands_in_json(std::string_view json);

// `text` as a Markdown code span: shown verbatim, so no link, image, @mention, emphasis or HTML in
// it becomes active. The fence is one backtick longer than the longest backtick run inside, with
// a space inside each end when the text starts or ends with a backtick (CommonMark 6.1). Newlines
// become spaces and control characters are escaped (`printable`); inside a table cell,
// `in_table` escapes '|' as GitHub's table syntax requires even in code spans.
std::string markdown_code(std::string_view text, bool in_table = false);

// `text` as Markdown prose with nothing active: every ASCII punctuation character
// backslash-escaped (CommonMark 2.4: no emphasis, link, image, HTML or table syntax), a word
// joiner (U+2060, invisible) after each '@' and ':' and inside "www." so that neither GitHub's
// @mentions nor its bare-URL and e-mail autolinks fire; newlines become spaces.
std::string markdown_text(std::string_view text);

}  // namespace util
