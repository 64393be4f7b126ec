// Tests of read-only file maps.
#include "io/mapped_file.hpp"
#include "support/test_support.hpp"
#include "tensoracle/errors.hpp"

#include <cstdint>
#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#ifdef _WIN32
#include <io.h>
#else
#include <unistd.h>
#endif

namespace tensoracle {
namespace {

TEST(MappedFile, MapsTheWholeFile) {
    testing::TemporaryDirectory dir;
    auto const data = testing::random_bytes(70'000, 3);
    auto const path = dir.path() / "f.bin";
    testing::write_all(path, data);
    MappedFile const mapped(path);
    ASSERT_EQ(mapped.bytes().size(), data.size());
    EXPECT_TRUE(std::equal(data.begin(), data.end(), mapped.bytes().begin()));
}

TEST(MappedFile, MappingOutlivesTheFileNameAndDescriptor) {
    testing::TemporaryDirectory dir;
    auto const data = testing::random_bytes(5000, 4);
    auto const path = dir.path() / "f.bin";
    testing::write_all(path, data);
#ifdef _WIN32
    int const fd = ::_open(path.string().c_str(), _O_RDONLY | _O_BINARY);
    ASSERT_GE(fd, 0);
    MappedFile mapped(fd, path);
    ::_close(fd);
    // Windows keeps the name of a mapped file: it cannot be removed while mapped.
#else
    int const fd = ::open(path.c_str(), O_RDONLY);
    ASSERT_GE(fd, 0);
    MappedFile mapped(fd, path);
    ::close(fd);
    std::filesystem::remove(path);
#endif
    EXPECT_TRUE(std::equal(data.begin(), data.end(), mapped.bytes().begin()));
}

TEST(MappedFile, EmptyFileIsAnEmptySpan) {
    testing::TemporaryDirectory dir;
    auto const path = dir.path() / "empty";
    testing::write_all(path, {});
    EXPECT_TRUE(MappedFile(path).bytes().empty());
}

TEST(MappedFile, MoveTransfersTheMapping) {
    testing::TemporaryDirectory dir;
    auto const data = testing::random_bytes(100, 5);
    auto const path = dir.path() / "f.bin";
    testing::write_all(path, data);
    MappedFile first(path);
    auto const* address = first.bytes().data();
    MappedFile second(std::move(first));
    EXPECT_TRUE(first.bytes().empty()); // NOLINT(bugprone-use-after-move): moved-from is empty
    EXPECT_EQ(second.bytes().data(), address);
    MappedFile third(path);
    third = std::move(second);
    EXPECT_EQ(third.bytes().data(), address);
    EXPECT_EQ(third.bytes().size(), data.size());
}

TEST(MappedFile, ErrorsNameThePath) {
    testing::TemporaryDirectory dir;
    auto const missing = dir.path() / "missing";
    try {
        MappedFile mapped(missing);
        FAIL() << "expected FileError";
    } catch (FileError const& error) {
        EXPECT_EQ(error.path(), missing);
        EXPECT_NE(std::string(error.what()).find("missing"), std::string::npos);
    }
    EXPECT_THROW(MappedFile{dir.path()}, FileError);
}

// The "VmFlags:" line that /proc/self/smaps gives for the mapping that starts at `address`.
std::string vm_flags_of(void const* address) {
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool in_mapping = false;
    auto const wanted = reinterpret_cast<std::uintptr_t>(address);
    while (std::getline(smaps, line)) {
        std::uintptr_t start = 0;
        std::istringstream fields(line);
        // Mapping lines start with "<start hex>-<end hex> "; attribute lines with "Name:".
        if (line.find(':') > line.find('-') && (fields >> std::hex >> start)) {
            in_mapping = start == wanted;
        } else if (in_mapping && line.rfind("VmFlags:", 0) == 0) {
            return line;
        }
    }
    return {};
}

TEST(MappedFile, AdviseSequentialMarksTheMappingAndKeepsItsBytes) {
#ifdef _WIN32
    GTEST_SKIP() << "reads the advice back from Linux's /proc/self/smaps";
#endif
    testing::TemporaryDirectory dir;
    auto const data = testing::random_bytes(3 << 20, 6);
    auto const path = dir.path() / "f.bin";
    testing::write_all(path, data);
    MappedFile const mapped(path);
    std::string const before = vm_flags_of(mapped.bytes().data());
    ASSERT_FALSE(before.empty()) << "no VmFlags line for the mapping in /proc/self/smaps";
    EXPECT_EQ(before.find(" sr"), std::string::npos) << before;
    mapped.advise_sequential();
    std::string const after = vm_flags_of(mapped.bytes().data());
    EXPECT_NE(after.find(" sr"), std::string::npos) << after; // "sr": sequential read advised
    EXPECT_TRUE(std::equal(data.begin(), data.end(), mapped.bytes().begin()));
    testing::write_all(dir.path() / "empty", {});
    MappedFile(dir.path() / "empty").advise_sequential(); // nothing mapped: a no-op
}

} // namespace
} // namespace tensoracle
