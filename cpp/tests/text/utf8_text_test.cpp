// escape_for_terminal: what a table may print of a name it does not control.
#include "text/utf8_text.hpp"

#include <gtest/gtest.h>
#include <string>

namespace tensoracle {
namespace {

TEST(EscapeForTerminal, PrintableTextIsUnchanged) {
    EXPECT_EQ(escape_for_terminal("model-ab12.engine"), "model-ab12.engine");
    EXPECT_EQ(escape_for_terminal("m\xc3\xbcnchen \xe2\x82\xac \xf0\x9f\x98\x80"),
              "m\xc3\xbcnchen \xe2\x82\xac \xf0\x9f\x98\x80");
    EXPECT_EQ(escape_for_terminal(""), "");
}

TEST(EscapeForTerminal, ControlCharactersBecomeEscapes) {
    // The title-setting OSC sequence and the clear-screen CSI of the red team's names.
    EXPECT_EQ(escape_for_terminal("\x1b]0;owned\x07x.engine"), "\\x1b]0;owned\\x07x.engine");
    EXPECT_EQ(escape_for_terminal("\x1b[2J"), "\\x1b[2J");
    EXPECT_EQ(escape_for_terminal(std::string("a\0b", 3)), "a\\x00b");
    EXPECT_EQ(escape_for_terminal("tab\there\nnew\rline\x7f"),
              "tab\\x09here\\x0anew\\x0dline\\x7f");
    // C1 controls (U+0085, U+009B: the one-byte CSI) and the characters that reorder text.
    EXPECT_EQ(escape_for_terminal("\xc2\x85\xc2\x9b"), "\\u0085\\u009b");
    EXPECT_EQ(escape_for_terminal("a\xe2\x80\xae"
                                  "b\xe2\x81\xa6\xe2\x80\xa8"),
              "a\\u202eb\\u2066\\u2028");
}

TEST(EscapeForTerminal, UndecodableBytesAreShownAsTheirValue) {
    EXPECT_EQ(escape_for_terminal("a\xff.engine"), "a\\xff.engine");
    EXPECT_EQ(escape_for_terminal("a\xfe.engine"), "a\\xfe.engine");
    EXPECT_EQ(escape_for_terminal("\xc3"), "\\xc3");                   // truncated sequence
    EXPECT_EQ(escape_for_terminal("\xed\xa0\x80"), "\\xed\\xa0\\x80"); // a surrogate
}

TEST(EscapeForTerminal, DifferentNamesNeverPrintAlike) {
    // A raw byte 0x85, the character U+0085, the text "\x85" and a backslash before it.
    std::string const names[] = {"n\x85", "n\xc2\x85", "n\\x85", "n\\\\x85", "n\xef\xbf\xbd"};
    for (std::string const& one : names) {
        for (std::string const& other : names) {
            if (&one != &other) {
                EXPECT_NE(escape_for_terminal(one), escape_for_terminal(other)) << one << other;
            }
        }
    }
    EXPECT_EQ(escape_for_terminal("n\\x85"), "n\\\\x85");
}

TEST(EscapeLinesForTerminal, KeepsLineBreaksAndEscapesTheRest) {
    EXPECT_EQ(escape_lines_for_terminal("NAME\na\x1b[2J\n\nb\rc\n"),
              "NAME\na\\x1b[2J\n\nb\\x0dc\n");
    EXPECT_EQ(escape_lines_for_terminal("no break"), "no break");
}

} // namespace
} // namespace tensoracle
