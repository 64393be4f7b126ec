// Tests of atomic file replacement.
#include "io/atomic_file.hpp"
#include "support/test_support.hpp"
#include "support/this_process.hpp"
#include "tensoracle/errors.hpp"

#include <gtest/gtest.h>
#ifdef _WIN32
#include <windows.h>
#else
#include <unistd.h>
#endif

namespace tensoracle {
namespace {

TEST(AtomicFile, CommitPublishesTheWholeFileWithPrivatePermissions) {
    testing::TemporaryDirectory dir;
    auto const target = dir.path() / "out.bin";
    auto const data = testing::random_bytes(3'000'000, 1);
    {
        AtomicFile file(target);
        std::span<std::byte const> rest(data);
        while (!rest.empty()) {
            auto const n = std::min<std::size_t>(rest.size(), 65'537);
            file.write(rest.first(n));
            rest = rest.subspan(n);
            EXPECT_FALSE(std::filesystem::exists(target));
        }
        file.write(std::string_view{"tail"});
        file.commit();
    }
    auto expected = data;
    auto const tail = testing::to_bytes("tail");
    expected.insert(expected.end(), tail.begin(), tail.end());
    EXPECT_EQ(testing::read_all(target), expected);
    EXPECT_EQ(testing::names_in(dir.path()), std::vector<std::string>{"out.bin"});
#ifndef _WIN32 // Windows files have no POSIX permission bits; the private folder protects them.
    EXPECT_EQ(std::filesystem::status(target).permissions(),
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
#endif
}

TEST(AtomicFile, TemporaryNameFollowsTheConvention) {
    testing::TemporaryDirectory dir;
    AtomicFile file(dir.path() / "e.engine");
    auto const name = file.temporary_path().filename().string();
    std::string const prefix = "e.engine.tmp-" + std::to_string(testing::this_process_id()) + "-";
    EXPECT_EQ(name.substr(0, prefix.size()), prefix);
    EXPECT_EQ(name.size(), prefix.size() + 16);
    EXPECT_TRUE(is_temporary_name(name));
    EXPECT_EQ(file.temporary_path().parent_path(), dir.path());
    EXPECT_TRUE(std::filesystem::exists(file.temporary_path()));
}

TEST(AtomicFile, AbandonedFileLeavesTheTargetAndNoTemporary) {
    testing::TemporaryDirectory dir;
    auto const target = dir.path() / "out.bin";
    testing::write_all(target, testing::to_bytes("old"));
    {
        AtomicFile file(target);
        file.write(std::string_view{"new but never committed"});
    }
    EXPECT_EQ(testing::read_all(target), testing::to_bytes("old"));
    EXPECT_EQ(testing::names_in(dir.path()), std::vector<std::string>{"out.bin"});
}

// Writeback started early changes when the disk is written, never what the target holds or
// whether an abandoned file leaves anything.
TEST(AtomicFile, EarlyWritebackKeepsTheContentsAndTheAtomicity) {
    testing::TemporaryDirectory dir;
    auto const target = dir.path() / "out.bin";
    testing::write_all(target, testing::to_bytes("old"));
    auto const data = testing::random_bytes(5'000'000, 2);
    std::span<std::byte const> const whole(data);
    {
        AtomicFile abandoned(target);
        abandoned.write(whole.first(1'000'000));
        abandoned.start_writeback();
    }
    EXPECT_EQ(testing::read_all(target), testing::to_bytes("old"));
    EXPECT_EQ(testing::names_in(dir.path()), std::vector<std::string>{"out.bin"});
    AtomicFile file(target);
    file.start_writeback(); // nothing written yet
    file.write(whole.first(3'000'000));
    file.start_writeback();
    file.start_writeback(); // nothing new
    file.write(whole.subspan(3'000'000));
    EXPECT_EQ(testing::read_all(target), testing::to_bytes("old"));
    file.commit();
    file.start_writeback(); // after the commit: nothing to do
    EXPECT_EQ(testing::read_all(target), data);
}

TEST(AtomicFile, CommitReplacesAnExistingTarget) {
    testing::TemporaryDirectory dir;
    auto const target = dir.path() / "out.bin";
    testing::write_all(target, testing::to_bytes("old contents that are longer"));
    AtomicFile file(target);
    file.write(std::string_view{"new"});
    file.commit();
    EXPECT_EQ(testing::read_all(target), testing::to_bytes("new"));
    EXPECT_THROW(file.commit(), std::logic_error);
    EXPECT_THROW(file.write(std::string_view{"x"}), std::logic_error);
}

TEST(AtomicFile, MissingDirectoryIsAFileError) {
    testing::TemporaryDirectory dir;
    EXPECT_THROW(AtomicFile(dir.path() / "no" / "such" / "file"), FileError);
}

TEST(AtomicFile, RecognizesTemporaryNames) {
    EXPECT_TRUE(is_temporary_name("a.engine.tmp-12-0123abcd"));
    EXPECT_TRUE(is_temporary_name("weight-x.json.tmp-1-f"));
    EXPECT_FALSE(is_temporary_name("a.engine"));
    EXPECT_FALSE(is_temporary_name(".tmp-12-ab"));
    EXPECT_FALSE(is_temporary_name("a.tmp-12-"));
    EXPECT_FALSE(is_temporary_name("a.tmp--ab"));
    EXPECT_FALSE(is_temporary_name("a.tmp-1x-ab"));
    EXPECT_FALSE(is_temporary_name("a.tmp-12-ABCD"));
    EXPECT_FALSE(is_temporary_name("a.tmp-12-ab.engine"));
}

} // namespace
} // namespace tensoracle
