// Tests the parts of the cubin runtime that need no GPU: cubin choice per SM, argument checks and
// kernel lookup. Launches are covered by cubin_runtime_gpu_test.cpp.
#include "tensoracle/cubin/runtime.hpp"
#include "tensoracle/errors.hpp"

#include <array>
#include <gtest/gtest.h>

namespace {

using namespace tensoracle::cubin;

constexpr unsigned char no_bytes[] = {0};
constexpr ArgSpec dot_args[] = {{"a", "*fp32", ArgType::pointer, 16},
                                {"k", "i32", ArgType::i32, 16},
                                {"alpha", "fp32", ArgType::f32, 1}};
constexpr CubinImage dot_images[] = {{80, "", no_bytes, 0, "dot_fn", 32, 128},
                                     {86, "", no_bytes, 0, "dot_fn", 32, 128},
                                     {90, "", no_bytes, 0, "dot_fn", 32, 128},
                                     {120, "", no_bytes, 0, "dot_fn", 32, 128}};
constexpr KernelRecord kernels[] = {{"dot", "", 2, dot_args, dot_images}};
constexpr BundleRecord bundle{"", kernels};

TEST(CubinRuntimeSelect, PrefersAnExactSmThenTheNewestOlderOfTheSameMajor) {
    auto const& record = kernels[0];
    EXPECT_EQ(CubinRuntime::select_image(record, 86)->sm, 86U);
    EXPECT_EQ(CubinRuntime::select_image(record, 89)->sm, 86U);
    EXPECT_EQ(CubinRuntime::select_image(record, 87)->sm, 86U);
    EXPECT_EQ(CubinRuntime::select_image(record, 80)->sm, 80U);
    EXPECT_EQ(CubinRuntime::select_image(record, 90)->sm, 90U);
    EXPECT_EQ(CubinRuntime::select_image(record, 120)->sm, 120U);
}

TEST(CubinRuntimeSelect, NeverFallsBackAcrossMajorsOrFromArchSpecificCubins) {
    auto const& record = kernels[0];
    EXPECT_EQ(CubinRuntime::select_image(record, 75), nullptr);
    EXPECT_EQ(CubinRuntime::select_image(record, 100), nullptr);
    EXPECT_EQ(CubinRuntime::select_image(record, 121), nullptr);
}

TEST(CubinRuntimeArgs, AcceptsMatchingArgumentsWithoutADriver) {
    CubinRuntime runtime{bundle};
    auto const& kernel = runtime.kernel("dot");
    std::array const args = {ArgValue::pointer(0x7f0000001000), ArgValue::i32(-64),
                             ArgValue::f32(0.5F)};
    EXPECT_TRUE(kernel.accepts(args));
    EXPECT_EQ(kernel.reject_reason(args), std::nullopt);
}

TEST(CubinRuntimeArgs, NamesTheArgumentThatBreaksARule) {
    CubinRuntime runtime{bundle};
    auto const& kernel = runtime.kernel("dot");
    std::array const misaligned = {ArgValue::pointer(0x7f0000001004), ArgValue::i32(64),
                                   ArgValue::f32(0.5F)};
    auto reason = kernel.reject_reason(misaligned);
    ASSERT_TRUE(reason);
    EXPECT_NE(reason->find("'a'"), std::string::npos) << *reason;
    EXPECT_NE(reason->find("divisible by 16"), std::string::npos) << *reason;

    std::array const odd = {ArgValue::pointer(0x1000), ArgValue::i32(100), ArgValue::f32(0.5F)};
    reason = kernel.reject_reason(odd);
    ASSERT_TRUE(reason);
    EXPECT_NE(reason->find("'k'"), std::string::npos) << *reason;
    EXPECT_NE(reason->find("100"), std::string::npos) << *reason;

    std::array const wrong_type = {ArgValue::pointer(0x1000), ArgValue::i64(64),
                                   ArgValue::f32(0.5F)};
    reason = kernel.reject_reason(wrong_type);
    ASSERT_TRUE(reason);
    EXPECT_NE(reason->find("must be i32, got i64"), std::string::npos) << *reason;

    std::array const short_list = {ArgValue::pointer(0x1000), ArgValue::i32(16)};
    reason = kernel.reject_reason(short_list);
    ASSERT_TRUE(reason);
    EXPECT_NE(reason->find("takes 3 arguments, got 2"), std::string::npos) << *reason;
}

TEST(CubinRuntimeArgs, LaunchRefusesRejectedArgumentsBeforeTouchingTheDriver) {
    CubinRuntime runtime{bundle};
    std::array const odd = {ArgValue::pointer(0x1000), ArgValue::i32(100), ArgValue::f32(0.5F)};
    EXPECT_THROW(runtime.kernel("dot").launch(Grid{}, nullptr, odd), tensoracle::InvalidArgument);
}

TEST(CubinRuntimeLookup, UnknownKernelListsTheBundlesKernels) {
    CubinRuntime runtime{bundle};
    try {
        runtime.kernel("gemm");
        FAIL() << "unknown kernel accepted";
    } catch (tensoracle::InvalidArgument const& error) {
        EXPECT_NE(std::string{error.what()}.find("'gemm'"), std::string::npos);
        EXPECT_NE(std::string{error.what()}.find("dot"), std::string::npos);
    }
}

} // namespace
