// Tests of the one read-until-full loop (src/io/full_read.hpp): a range inside a file is read
// whole, a range across the file's end stops at the end, and a failed read names the file.
#include "io/full_read.hpp"
#include "io/platform.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace tensoracle {
namespace {

using testing::TemporaryDirectory;

class FullReadTest : public ::testing::Test {
protected:
    void SetUp() override {
        bytes_ = testing::random_bytes(10000, 49);
        testing::write_all(path_, bytes_);
    }
    platform::Descriptor open_for(int flags) const {
        platform::Descriptor file{platform::open_file(path_, flags, 0, platform::Follow::links)};
        if (!file.valid()) {
            throw std::runtime_error("cannot open " + path_.string());
        }
        return file;
    }
    std::vector<std::byte> slice(std::size_t from, std::size_t count) const {
        auto const start = bytes_.begin() + static_cast<std::ptrdiff_t>(from);
        return {start, start + static_cast<std::ptrdiff_t>(count)};
    }

    TemporaryDirectory directory_;
    std::filesystem::path path_ = directory_.path() / "bytes.bin";
    std::vector<std::byte> bytes_;
};

TEST_F(FullReadTest, FillsARangeInsideTheFile) {
    auto const file = open_for(O_RDONLY);
    std::vector<std::byte> into(4096);
    EXPECT_EQ(read_full(file.get(), into, 1234, path_), into.size());
    EXPECT_EQ(into, slice(1234, 4096));
}

TEST_F(FullReadTest, StopsAtTheEndOfTheFileAcrossIt) {
    auto const file = open_for(O_RDONLY);
    std::vector<std::byte> into(4096, std::byte{0xAB});
    std::size_t const got = read_full(file.get(), into, 8000, path_);
    ASSERT_EQ(got, 2000U);
    EXPECT_EQ(std::vector<std::byte>(into.begin(), into.begin() + 2000), slice(8000, 2000));
    // What lies past the end of the file is left as it was.
    EXPECT_EQ(into[2000], std::byte{0xAB});
    EXPECT_EQ(into.back(), std::byte{0xAB});
}

TEST_F(FullReadTest, ReadsNothingAtOrPastTheEnd) {
    auto const file = open_for(O_RDONLY);
    std::vector<std::byte> into(16);
    EXPECT_EQ(read_full(file.get(), into, bytes_.size(), path_), 0U);
    EXPECT_EQ(read_full(file.get(), into, bytes_.size() + 100, path_), 0U);
    EXPECT_EQ(read_full(file.get(), std::span<std::byte>(), 0, path_), 0U);
}

TEST_F(FullReadTest, AFailedReadNamesTheFileAndTheStep) {
    auto const file = open_for(O_WRONLY); // a descriptor that cannot be read
    std::vector<std::byte> into(16);
    try {
        (void)read_full(file.get(), into, 0, path_, "cannot read deployed engine");
        FAIL() << "a read of a write-only descriptor succeeded";
    } catch (FileError const& error) {
        std::string const message = error.what();
        EXPECT_EQ(message.rfind("cannot read deployed engine '" + path_.string() + "': ", 0), 0U)
            << message;
        EXPECT_EQ(error.path(), path_);
    }
}

} // namespace
} // namespace tensoracle
