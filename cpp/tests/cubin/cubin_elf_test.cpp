// Tests the cubin ELF reader on cubins that ptxas assembles from a small PTX kernel
// (support/ptxas_support.hpp: at test time on Linux, at build time for Windows).
#include "cubin/elf.hpp"
#include "support/ptxas_support.hpp"
#include "tensoracle/errors.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace {

using tensoracle::CorruptCubinError;
using tensoracle::CubinArchitectureError;
using tensoracle::cubin::cubin_sm;
using tensoracle::cubin::kSms1x;
using tensoracle::cubin::kSmsInspected;
using tensoracle::cubin::read_cubin_elf;
namespace fs = std::filesystem;

using tensoracle::testing::CubinMaker;

std::vector<std::byte> read_file(fs::path const& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> chars{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::vector<std::byte> bytes(chars.size());
    std::memcpy(bytes.data(), chars.data(), chars.size());
    return bytes;
}

class CubinElf : public ::testing::Test {
protected:
    void SetUp() override {
        std::string why;
        maker_ = CubinMaker::find(why);
        if (!maker_) {
            FAIL() << why;
        }
        directory_ = fs::temp_directory_path() /
                     ("tensoracle-cubin-elf-" +
                      std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(directory_);
    }
    void TearDown() override {
        std::error_code ignored;
        fs::remove_all(directory_, ignored);
    }

    // The cubin of kernel `probe(u64, u32, f32)` (ptx/store_probe.ptx.in) for `arch` ("sm_86").
    std::vector<std::byte> build(std::string const& arch) {
        fs::path const cubin = directory_ / (arch + ".cubin");
        std::string why;
        EXPECT_TRUE(maker_->make("store_probe", arch, cubin, why)) << why;
        return read_file(cubin);
    }

    std::optional<CubinMaker> maker_;
    fs::path directory_;
};

TEST_F(CubinElf, ReadsTheSmFromTheHeaderForEachTarget) {
    for (auto const& [arch, sm] : std::vector<std::pair<std::string, std::uint32_t>>{
             {"sm_80", 80}, {"sm_86", 86}, {"sm_89", 89}, {"sm_90a", 90}, {"sm_120a", 120}}) {
        auto const bytes = build(arch);
        auto const elf = read_cubin_elf(bytes, arch);
        EXPECT_EQ(elf.sm, sm) << arch;
    }
}

TEST_F(CubinElf, ListsTheKernelAndItsParameterLayout) {
    auto const elf = read_cubin_elf(build("sm_86"), "sm_86");
    auto const* probe = elf.function("probe");
    ASSERT_NE(probe, nullptr);
    ASSERT_EQ(probe->params.size(), 3U);
    EXPECT_EQ(probe->params[0].size, 8U);
    EXPECT_EQ(probe->params[1].size, 4U);
    EXPECT_EQ(probe->params[2].size, 4U);
    EXPECT_EQ(probe->params[0].offset, 0U);
    EXPECT_EQ(probe->params[1].offset, 8U);
    EXPECT_EQ(probe->params[2].offset, 12U);
    EXPECT_EQ(elf.function("absent"), nullptr);
}

TEST_F(CubinElf, CubinSmReadsEveryTargetOfOurProducerAndIgnoresTheArchSpecificFlag) {
    for (auto const& [arch, sm] :
         std::vector<std::pair<std::string, std::uint32_t>>{{"sm_80", 80},
                                                            {"sm_86", 86},
                                                            {"sm_89", 89},
                                                            {"sm_90a", 90},
                                                            {"sm_100a", 100},
                                                            {"sm_120a", 120}}) {
        auto const bytes = build(arch);
        EXPECT_EQ(cubin_sm(bytes, kSmsInspected, arch), sm) << arch;
        bool const in_1x = sm == 86 || sm == 89 || sm == 120;
        if (in_1x) {
            EXPECT_EQ(cubin_sm(bytes, kSms1x, arch), sm) << arch;
        } else {
            EXPECT_THROW(cubin_sm(bytes, kSms1x, arch), CubinArchitectureError) << arch;
        }
    }
}

// A header with the given ABI version and e_flags; everything else as a CUDA ELF64 needs it.
std::vector<std::byte> header(unsigned char abi, std::uint32_t flags) {
    std::vector<std::byte> bytes(64, std::byte{0});
    unsigned char const ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
    for (std::size_t i = 0; i < sizeof ident; ++i) {
        bytes[i] = std::byte{ident[i]};
    }
    bytes[8] = std::byte{abi};
    bytes[18] = std::byte{190};
    for (std::size_t i = 0; i < 4; ++i) {
        bytes[48 + i] = static_cast<std::byte>((flags >> (8 * i)) & 0xffU);
    }
    return bytes;
}

std::string refusal(std::vector<std::byte> const& bytes) {
    try {
        cubin_sm(bytes, kSms1x, "probe.cubin");
    } catch (CubinArchitectureError const& error) {
        return error.what();
    }
    return "accepted";
}

TEST(CubinSm, TheAbiVersionSaysWhichByteOfTheFlagsHoldsTheSm) {
    EXPECT_EQ(cubin_sm(header(7, 89U << 16U), kSms1x, "x"), 89U);
    EXPECT_EQ(cubin_sm(header(8, 120U << 8U), kSms1x, "x"), 120U);
    // The same SM in the other byte is read as another SM.
    EXPECT_NE(refusal(header(7, 89U << 8U)).find("built for sm0"), std::string::npos);
    EXPECT_NE(refusal(header(8, 86U << 16U)).find("built for sm0"), std::string::npos);
}

TEST(CubinSm, EachBrokenHeaderFieldIsNamedWithItsValue) {
    EXPECT_NE(refusal(std::vector<std::byte>(63, std::byte{0})).find("63 bytes"),
              std::string::npos);
    auto big_endian = header(8, 86U << 8U);
    big_endian[5] = std::byte{2};
    EXPECT_NE(refusal(big_endian).find("64-bit little-endian"), std::string::npos);
    auto elf32 = header(8, 86U << 8U);
    elf32[4] = std::byte{1};
    EXPECT_NE(refusal(elf32).find("64-bit little-endian"), std::string::npos);
    auto x86 = header(8, 86U << 8U);
    x86[18] = std::byte{62};
    EXPECT_NE(refusal(x86).find("e_machine 62, expected 190"), std::string::npos);
    EXPECT_NE(refusal(header(6, 86U << 8U)).find("EI_ABIVERSION 6, expected 7 or 8"),
              std::string::npos);
    EXPECT_NE(refusal(header(8, 80U << 8U)).find("sm80, expected one of sm86, sm89, sm120"),
              std::string::npos);
    EXPECT_NE(refusal(header(8, 80U << 8U)).find("probe.cubin"), std::string::npos);
}

TEST_F(CubinElf, RejectsAnotherMachineAndTruncatedImages) {
    auto bytes = build("sm_89");
    auto wrong_machine = bytes;
    wrong_machine[18] = std::byte{62}; // e_machine = EM_X86_64
    EXPECT_THROW(read_cubin_elf(wrong_machine, "x86.cubin"), CorruptCubinError);
    std::vector<std::byte> const truncated(bytes.begin(), bytes.begin() + 40);
    EXPECT_THROW(read_cubin_elf(truncated, "short.cubin"), CorruptCubinError);
    std::vector<std::byte> const text(64, std::byte{'a'});
    try {
        read_cubin_elf(text, "text.cubin");
        FAIL() << "text accepted as a cubin";
    } catch (CorruptCubinError const& error) {
        EXPECT_NE(std::string{error.what()}.find("text.cubin"), std::string::npos);
    }
}

} // namespace

namespace {

// Found by fuzz_cubin_elf: an empty input passed a null pointer to memcpy (undefined behaviour).
TEST(CubinElfInput, EmptyFileIsNamedAsEmpty) {
    try {
        read_cubin_elf(std::span<std::byte const>{}, "empty.cubin");
        FAIL() << "accepted an empty file";
    } catch (CorruptCubinError const& error) {
        EXPECT_NE(std::string(error.what())
                      .find("'empty.cubin' is not a usable CUDA ELF image: "
                            "the file is empty"),
                  std::string::npos)
            << error.what();
    }
}

} // namespace
