// Tests of opening an entry's file of the cache folder (src/cache/entry_file.hpp): what is at the
// name is classified before anything is read (a regular file, nothing, a link, a directory, a
// FIFO), and open_regular_entry refuses what is not a regular file by what it is.
#include "cache/entry_file.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"

#include <gtest/gtest.h>
#include <string>
#include <sys/stat.h>

namespace tensoracle {
namespace {

using testing::TemporaryDirectory;

class EntryFileTest : public ::testing::Test {
protected:
    TemporaryDirectory directory_;
    std::filesystem::path path_ = directory_.path() / "name-0.engine";
};

// The message of the CorruptEngineError that open_regular_entry throws for `path_`.
std::string refusal_of(std::filesystem::path const& path, EntryNaming const& naming) {
    try {
        (void)open_regular_entry(path, naming);
    } catch (CorruptEngineError const& error) {
        EXPECT_EQ(error.path(), path);
        return error.what();
    }
    ADD_FAILURE() << "no refusal for " << path;
    return {};
}

TEST_F(EntryFileTest, ARegularFileIsOpenedWithItsStatus) {
    testing::write_all(path_, testing::to_bytes("twelve bytes"));
    EntryFile const entry = open_entry_file(path_, "saved engine");
    ASSERT_EQ(entry.finding, EntryFinding::regular);
    EXPECT_TRUE(entry.file.valid());
    EXPECT_EQ(entry.status.size, 12U);
    EXPECT_EQ(entry.status.kind, platform::FileKind::regular);

    auto const opened = open_regular_entry(path_, {"saved engine", "saved engine "});
    ASSERT_TRUE(opened.has_value());
    EXPECT_TRUE(opened->file.valid());
    EXPECT_EQ(opened->status.size, 12U);
}

TEST_F(EntryFileTest, NothingAtTheNameIsMissingNotAFailure) {
    EntryFile const entry = open_entry_file(path_, "saved engine");
    EXPECT_EQ(entry.finding, EntryFinding::missing);
    EXPECT_FALSE(entry.file.valid());
    EXPECT_FALSE(open_regular_entry(path_, {"saved engine", "saved engine "}).has_value());
}

TEST_F(EntryFileTest, ALinkIsNotFollowed) {
    auto const target = directory_.path() / "target.engine";
    testing::write_all(target, testing::to_bytes("a regular file"));
    std::filesystem::create_symlink(target, path_);
    EntryFile const entry = open_entry_file(path_, "saved engine");
    EXPECT_EQ(entry.finding, EntryFinding::link);
    EXPECT_FALSE(entry.file.valid());
    EXPECT_EQ(refusal_of(path_, {"saved engine", "saved engine "}),
              "saved engine '" + path_.string() +
                  "' is a symbolic link; tensoracle does not follow links inside its cache "
                  "directory (remove the link)");
}

TEST_F(EntryFileTest, ADirectoryIsRefusedAsOne) {
    std::filesystem::create_directory(path_);
    EntryFile const entry = open_entry_file(path_, "deployed engine");
    EXPECT_EQ(entry.finding, EntryFinding::directory);
    EXPECT_FALSE(entry.file.valid());
    EXPECT_EQ(refusal_of(path_, {"deployed engine", "deployed engine "}),
              "deployed engine '" + path_.string() +
                  "' is a directory, not a saved engine file (remove it)");
}

TEST_F(EntryFileTest, AFifoIsRefusedWithoutBlocking) {
    ASSERT_EQ(::mkfifo(path_.c_str(), 0600), 0);
    EntryFile const entry = open_entry_file(path_, "the saved entry");
    EXPECT_EQ(entry.finding, EntryFinding::not_regular);
    EXPECT_FALSE(entry.file.valid());
    EXPECT_EQ(refusal_of(path_, {"the saved entry", ""}),
              "'" + path_.string() +
                  "' is not a regular file (a FIFO, socket or device), not a saved engine file "
                  "(remove it)");
}

TEST_F(EntryFileTest, AnotherFailureNamesTheStep) {
    // A name under a regular file cannot be opened: ENOTDIR, neither missing nor refused.
    testing::write_all(path_, testing::to_bytes("a file"));
    auto const inside = path_ / "entry.engine";
    try {
        (void)open_entry_file(inside, "saved engine");
        FAIL() << "opened " << inside;
    } catch (FileError const& error) {
        std::string const message = error.what();
        EXPECT_EQ(message.rfind("cannot open saved engine '" + inside.string() + "': ", 0), 0U)
            << message;
    }
}

} // namespace
} // namespace tensoracle
