// Tests of file contents held copied (the default) or mapped: both give the file's bytes, and
// neither keeps the file from being replaced or removed once its descriptor is closed (a copy on
// every system; a mapping on POSIX). A copy is what was read whatever the file becomes; on
// Windows a mapping keeps the file from being replaced.
#include "io/file_contents.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#ifdef _WIN32
#include <io.h>
#include <windows.h>
#else
#include <unistd.h>
#endif

namespace tensoracle {
namespace {

// A read-only descriptor of `path`, closed by the destructor (as the store closes its own).
class OpenFile {
public:
    explicit OpenFile(std::filesystem::path const& path) {
#ifdef _WIN32
        fd_ = ::_wopen(path.c_str(), _O_RDONLY | _O_BINARY);
#else
        fd_ = ::open(path.c_str(), O_RDONLY);
#endif
        if (fd_ < 0) {
            throw std::runtime_error("cannot open " + path.string());
        }
    }
    OpenFile(OpenFile const&) = delete;
    OpenFile& operator=(OpenFile const&) = delete;
    ~OpenFile() {
        close();
    }
    int get() const {
        return fd_;
    }
    void close() {
        if (fd_ >= 0) {
#ifdef _WIN32
            ::_close(fd_);
#else
            ::close(fd_);
#endif
            fd_ = -1;
        }
    }

private:
    int fd_ = -1;
};

// Renames a new file over `path`, as a save does.
void replace_with(std::filesystem::path const& path, std::span<std::byte const> bytes) {
    auto const next = path.string() + ".next";
    testing::write_all(next, bytes);
    std::filesystem::rename(next, path);
}

class FileContentsHeld : public ::testing::TestWithParam<Holding> {};

TEST_P(FileContentsHeld, HoldsTheWholeFile) {
    testing::TemporaryDirectory dir;
    auto const data = testing::random_bytes(300'000, 7);
    auto const path = dir.path() / "f.bin";
    testing::write_all(path, data);
    OpenFile const file(path);
    FileContents const contents(file.get(), path, GetParam());
    EXPECT_EQ(contents.holding(), GetParam());
    ASSERT_EQ(contents.bytes().size(), data.size());
    EXPECT_TRUE(std::equal(data.begin(), data.end(), contents.bytes().begin()));
    contents.advise_sequential(); // a hint: the bytes stay the same
    EXPECT_TRUE(std::equal(data.begin(), data.end(), contents.bytes().begin()));
}

TEST_P(FileContentsHeld, EmptyFileIsAnEmptySpan) {
    testing::TemporaryDirectory dir;
    auto const path = dir.path() / "empty";
    testing::write_all(path, {});
    OpenFile const file(path);
    EXPECT_TRUE(FileContents(file.get(), path, GetParam()).bytes().empty());
}

TEST_P(FileContentsHeld, MoveKeepsTheBytes) {
    testing::TemporaryDirectory dir;
    auto const data = testing::random_bytes(1000, 8);
    auto const path = dir.path() / "f.bin";
    testing::write_all(path, data);
    OpenFile const file(path);
    FileContents first(file.get(), path, GetParam());
    auto const* address = first.bytes().data();
    FileContents const second(std::move(first));
    EXPECT_TRUE(first.bytes().empty()); // NOLINT(bugprone-use-after-move): moved-from is empty
    EXPECT_EQ(second.bytes().data(), address);
    EXPECT_EQ(second.bytes().size(), data.size());
}

INSTANTIATE_TEST_SUITE_P(Holdings, FileContentsHeld,
                         ::testing::Values(Holding::mapped, Holding::copied),
                         [](::testing::TestParamInfo<Holding> const& holding) {
                             return holding.param == Holding::mapped ? "mapped" : "copied";
                         });

TEST(FileContents, ACopyLeavesTheFileFreeToBeReplacedAndRemoved) {
    testing::TemporaryDirectory dir;
    auto const first = testing::random_bytes(50'000, 9);
    auto const second = testing::random_bytes(20'000, 10);
    auto const path = dir.path() / "f.bin";
    testing::write_all(path, first);
    OpenFile file(path);
    FileContents const held(file.get(), path, Holding::copied);
    file.close();
    replace_with(path, second);
    EXPECT_EQ(testing::read_all(path), second);
    std::filesystem::remove(path);
    EXPECT_FALSE(std::filesystem::exists(path));
    ASSERT_EQ(held.bytes().size(), first.size());
    EXPECT_TRUE(std::equal(first.begin(), first.end(), held.bytes().begin()));
}

TEST(FileContents, TheDefaultIsACopyOnEverySystemThatNothingDoneToTheFileReaches) {
    testing::TemporaryDirectory dir;
    auto const first = testing::random_bytes(50'000, 11);
    auto const second = testing::random_bytes(60'000, 12);
    auto const path = dir.path() / "f.bin";
    testing::write_all(path, first);
    OpenFile file(path);
    FileContents const held(file.get(), path);
    EXPECT_EQ(held.holding(), Holding::copied);
    file.close();
    testing::scribble_then_truncate(path);
    ASSERT_EQ(held.bytes().size(), first.size());
    EXPECT_TRUE(std::equal(first.begin(), first.end(), held.bytes().begin()));
    replace_with(path, second);
    EXPECT_EQ(testing::read_all(path), second);
    EXPECT_TRUE(std::equal(first.begin(), first.end(), held.bytes().begin()));
}

// Then an empty piece: the copy is complete (an observer that hands pieces to another thread
// waits for it there, before the constructor returns).
TEST(FileContents, TheObserverSeesEveryPieceOnceInOrderAsItIsReadThenTheEnd) {
    testing::TemporaryDirectory dir;
    std::size_t const size = (2 * FileContents::kPieceBytes) + 12'345;
    auto const bytes = testing::random_bytes(size, 15);
    auto const path = dir.path() / "f.bin";
    testing::write_all(path, bytes);
    OpenFile const file(path);
    std::vector<std::size_t> sizes;
    std::vector<std::byte> seen;
    FileContents const held(file.get(), path, [&](std::span<std::byte const> piece) {
        sizes.push_back(piece.size());
        seen.insert(seen.end(), piece.begin(), piece.end());
    });
    EXPECT_EQ(sizes, (std::vector<std::size_t>{FileContents::kPieceBytes, FileContents::kPieceBytes,
                                               12'345, 0}));
    EXPECT_EQ(seen, bytes);
    ASSERT_EQ(held.bytes().size(), size);
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), held.bytes().begin()));
}

// A bound on the copy: a file longer than `at_most` (as one grown after its size was checked)
// gives at_most + 1 bytes, never more memory or reads, and the observer sees just those; a file
// within the bound is copied whole.
TEST(FileContents, ACopyWithABoundReadsAtMostOneBytePastIt) {
    testing::TemporaryDirectory dir;
    std::size_t const size = (2 * FileContents::kPieceBytes) + 5;
    auto const bytes = testing::random_bytes(size, 16);
    auto const path = dir.path() / "grown.bin";
    testing::write_all(path, bytes);
    OpenFile const file(path);
    std::size_t observed = 0;
    auto const count = [&observed](std::span<std::byte const> piece) { observed += piece.size(); };
    FileContents const bounded(file.get(), path, count, 100);
    ASSERT_EQ(bounded.bytes().size(), 101U);
    EXPECT_EQ(observed, 101U);
    EXPECT_TRUE(std::equal(bounded.bytes().begin(), bounded.bytes().end(), bytes.begin()));

    observed = 0;
    FileContents const whole(file.get(), path, count, size);
    EXPECT_EQ(whole.bytes().size(), size);
    EXPECT_EQ(observed, size);
}

#ifdef _WIN32
// Why the store copies on Windows: a mapped view keeps the file from being replaced or removed.
TEST(FileContents, OnWindowsAMappingKeepsTheFileFromBeingReplaced) {
    testing::TemporaryDirectory dir;
    auto const path = dir.path() / "f.bin";
    testing::write_all(path, testing::random_bytes(50'000, 13));
    auto const next = dir.path() / "f.bin.next";
    testing::write_all(next, testing::random_bytes(10, 14));
    OpenFile file(path);
    FileContents const held(file.get(), path, Holding::mapped);
    file.close();
    EXPECT_EQ(::MoveFileExW(next.c_str(), path.c_str(), MOVEFILE_REPLACE_EXISTING), 0);
    EXPECT_EQ(held.bytes().size(), 50'000U);
}
#else
TEST(FileContents, ACopyOfSomethingElseThanARegularFileIsRefused) {
    testing::TemporaryDirectory dir;
    OpenFile const directory(dir.path());
    try {
        FileContents const contents(directory.get(), dir.path(), Holding::copied);
        FAIL() << "expected FileError";
    } catch (FileError const& error) {
        EXPECT_EQ(error.path(), dir.path());
        EXPECT_NE(std::string(error.what()).find("not a regular file"), std::string::npos)
            << error.what();
    }
}
#endif

} // namespace
} // namespace tensoracle
