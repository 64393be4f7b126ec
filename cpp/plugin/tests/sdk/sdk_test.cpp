// Host-side behaviour of the plugin SDK (no GPU): Fields, PluginBase's TensorRT methods, error
// reports, Kernel::accepts, the launch and DeviceBytes errors that need no driver (and, with the
// link-time stub standing in for libcuda.so.1, the driver's error), SHA-256 and the fixture
// bundle's lookup. Over 400 lines as the SDK is one source (cubin_plugin.cpp) tested as one
// binary; each TEST covers one of the parts named above.
#include "tensoracle/cubin_plugin.hpp"

#include <cstring>
#include <gtest/gtest.h>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

using nvinfer1::DataType;
using nvinfer1::PluginField;
using nvinfer1::PluginFieldCollection;
using nvinfer1::PluginFieldType;
using nvinfer1::TensorFormat;
using tensoracle::cubin::ArgumentKind;
using tensoracle::cubin::ArgumentRule;
using tensoracle::cubin::DeviceBytes;
using tensoracle::cubin::FieldRule;
using tensoracle::cubin::Fields;
using tensoracle::cubin::Kernel;
using tensoracle::cubin::KernelImage;
using tensoracle::cubin::PluginBase;
using tensoracle::cubin::PluginIO;
using tensoracle::cubin::TensorSpec;

namespace {

// --- test doubles ------------------------------------------------------------------------------

class Logger final : public nvinfer1::ILogger {
public:
    void log(Severity /*severity*/, nvinfer1::AsciiChar const* message) noexcept override {
        messages.emplace_back(message);
    }
    std::vector<std::string> messages;
};

class Finder final : public nvinfer1::ILoggerFinder {
public:
    nvinfer1::ILogger* findLogger() override { return &logger; }
    Logger logger;
};

class Recorder final : public nvinfer1::IErrorRecorder {
public:
    std::int32_t getNbErrors() const noexcept override {
        return static_cast<std::int32_t>(messages.size());
    }
    nvinfer1::ErrorCode getErrorCode(std::int32_t /*index*/) const noexcept override {
        return nvinfer1::ErrorCode::kINVALID_ARGUMENT;
    }
    ErrorDesc getErrorDesc(std::int32_t index) const noexcept override {
        return messages[static_cast<std::size_t>(index)].c_str();
    }
    bool hasOverflowed() const noexcept override { return false; }
    void clear() noexcept override { messages.clear(); }
    bool reportError(nvinfer1::ErrorCode /*code*/, ErrorDesc desc) noexcept override {
        messages.emplace_back(desc);
        return true;
    }
    RefCount incRefCount() noexcept override { return 1; }
    RefCount decRefCount() noexcept override { return 0; }
    std::vector<std::string> messages;
};

class ResourceContext final : public nvinfer1::IPluginResourceContext {
public:
    explicit ResourceContext(nvinfer1::IErrorRecorder* recorder) : recorder_(recorder) {}
    ~ResourceContext() noexcept override = default;
    nvinfer1::IGpuAllocator* getGpuAllocator() const noexcept override { return nullptr; }
    nvinfer1::IErrorRecorder* getErrorRecorder() const noexcept override { return recorder_; }

private:
    nvinfer1::IErrorRecorder* recorder_;
};

// Only passed through: PluginBase::getOutputShapes never builds an expression.
class ExprBuilder final : public nvinfer1::IExprBuilder {
public:
    ~ExprBuilder() noexcept override = default;
};

// A plugin with two inputs (fp32 LINEAR, fp16 HWC8) and an int32 output shaped like input 1;
// validate_shape records what it was given and answers `verdict`.
class TwoInputPlugin final : public PluginBase {
public:
    explicit TwoInputPlugin(Fields fields, std::int32_t verdict = 0)
        : PluginBase("TwoInput", "test_ns", std::move(fields), io()), verdict_(verdict) {}

    static PluginIO io() {
        PluginIO io;
        io.inputs = {TensorSpec{}, TensorSpec{DataType::kHALF, TensorFormat::kHWC8}};
        io.output = TensorSpec{DataType::kINT32, TensorFormat::kLINEAR};
        io.shape_input_index = 1;
        return io;
    }

    nvinfer1::IPluginV3* clone() noexcept override {
        return new (std::nothrow) TwoInputPlugin(fields(), verdict_);
    }
    std::int32_t enqueue(nvinfer1::PluginTensorDesc const* /*input_desc*/,
                         nvinfer1::PluginTensorDesc const* /*output_desc*/,
                         void const* const* /*inputs*/, void* const* /*outputs*/,
                         void* /*workspace*/, cudaStream_t /*stream*/) noexcept override {
        return 0;
    }
    Fields const& own_fields() const { return fields(); }
    nvinfer1::IErrorRecorder* recorder() const { return error_recorder(); }

    mutable std::vector<nvinfer1::Dims> seen_inputs;
    mutable nvinfer1::Dims seen_output{};

protected:
    std::int32_t validate_shape(nvinfer1::Dims const* inputs, std::int32_t input_count,
                                nvinfer1::Dims const& output) const noexcept override {
        seen_inputs.assign(inputs, inputs + input_count);
        seen_output = output;
        return verdict_;
    }

private:
    std::int32_t verdict_;
};

class Minimal final : public PluginBase {
public:
    Minimal(PluginIO io) : PluginBase("Minimal", "ns", Fields{}, std::move(io)) {}
    Minimal() : PluginBase("Minimal", "ns", Fields{}) {}
    nvinfer1::IPluginV3* clone() noexcept override { return nullptr; }
    std::int32_t enqueue(nvinfer1::PluginTensorDesc const*, nvinfer1::PluginTensorDesc const*,
                         void const* const*, void* const*, void*, cudaStream_t) noexcept override {
        return 0;
    }

protected:
    std::int32_t validate_shape(nvinfer1::Dims const*, std::int32_t,
                                nvinfer1::Dims const&) const noexcept override {
        return 0;
    }
};

nvinfer1::Dims dims(std::vector<std::int64_t> const& values) {
    nvinfer1::Dims result{};
    result.nbDims = static_cast<std::int32_t>(values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
        result.d[i] = values[i];
    }
    return result;
}

nvinfer1::PluginTensorDesc desc(DataType type, TensorFormat format, nvinfer1::Dims shape) {
    nvinfer1::PluginTensorDesc result{};
    result.type = type;
    result.format = format;
    result.dims = shape;
    return result;
}

nvinfer1::DynamicPluginTensorDesc dynamic(DataType type, TensorFormat format,
                                          nvinfer1::Dims shape) {
    nvinfer1::DynamicPluginTensorDesc result{};
    result.desc = desc(type, format, shape);
    result.min = shape;
    result.max = shape;
    result.opt = shape;
    return result;
}

float const kAlpha[] = {0.5F, 2.0F};
std::int32_t const kCounts[] = {7};
char const kText[] = "hi";

Fields sample_fields() {
    PluginField fields[] = {
        PluginField{"alpha", kAlpha, PluginFieldType::kFLOAT32, 2},
        PluginField{"count", kCounts, PluginFieldType::kINT32, 1},
        PluginField{"label", kText, PluginFieldType::kCHAR, 2},
    };
    PluginFieldCollection collection{3, fields};
    Fields result;
    EXPECT_TRUE(Fields::parse(&collection, result));
    return result;
}

// The collection points into `fields`' own names and bytes, field by field.
void expect_collection_points_into(Fields& fields) {
    PluginFieldCollection const* collection = fields.collection();
    ASSERT_NE(collection, nullptr);
    ASSERT_EQ(collection->nbFields, static_cast<std::int32_t>(fields.values().size()));
    for (std::size_t i = 0; i < fields.values().size(); ++i) {
        auto const& value = fields.values()[i];
        EXPECT_EQ(collection->fields[i].name, value.name.c_str());
        EXPECT_EQ(collection->fields[i].data,
                  static_cast<void const*>(value.bytes.empty() ? nullptr : value.bytes.data()));
        EXPECT_EQ(collection->fields[i].type, value.type);
        EXPECT_EQ(collection->fields[i].length, value.length);
    }
}

class Reports : public ::testing::Test {
protected:
    void SetUp() override { tensoracle::cubin::set_logger_finder(&finder); }
    void TearDown() override { tensoracle::cubin::set_logger_finder(nullptr); }
    std::string last() const {
        return finder.logger.messages.empty() ? std::string{} : finder.logger.messages.back();
    }
    Finder finder;
};

} // namespace

// --- Fields ------------------------------------------------------------------------------------

TEST(Fields, ParseRefusesEveryMalformedCollectionAndLeavesTheResult) {
    float const one = 1.0F;
    std::int32_t const big = 0;
    auto refused = [](PluginFieldCollection const* collection) {
        Fields result = sample_fields();
        bool const parsed = Fields::parse(collection, result);
        EXPECT_EQ(result.values().size(), 3U);
        EXPECT_NE(result.find("alpha"), nullptr);
        return !parsed;
    };
    EXPECT_TRUE(refused(nullptr));
    PluginField good{"a", &one, PluginFieldType::kFLOAT32, 1};
    PluginFieldCollection negative{-1, &good};
    EXPECT_TRUE(refused(&negative));
    PluginFieldCollection no_fields{1, nullptr};
    EXPECT_TRUE(refused(&no_fields));
    PluginField unnamed{nullptr, &one, PluginFieldType::kFLOAT32, 1};
    PluginFieldCollection unnamed_collection{1, &unnamed};
    EXPECT_TRUE(refused(&unnamed_collection));
    for (PluginFieldType type :
         {PluginFieldType::kFLOAT64, PluginFieldType::kDIMS, PluginFieldType::kUNKNOWN,
          PluginFieldType::kBF16, PluginFieldType::kINT64, PluginFieldType::kFP8}) {
        PluginField odd{"a", &one, type, 1};
        PluginFieldCollection odd_collection{1, &odd};
        EXPECT_TRUE(refused(&odd_collection)) << static_cast<int>(type);
    }
    PluginField negative_length{"a", &one, PluginFieldType::kFLOAT32, -1};
    PluginFieldCollection negative_length_collection{1, &negative_length};
    EXPECT_TRUE(refused(&negative_length_collection));
    PluginField no_data{"a", nullptr, PluginFieldType::kFLOAT32, 1};
    PluginFieldCollection no_data_collection{1, &no_data};
    EXPECT_TRUE(refused(&no_data_collection));
    PluginField twice[] = {good, PluginField{"a", &big, PluginFieldType::kINT32, 1}};
    PluginFieldCollection twice_collection{2, twice};
    EXPECT_TRUE(refused(&twice_collection));
    // 128 MiB + 4 bytes: refused before a byte is read.
    PluginField huge{"a", &big, PluginFieldType::kINT32, (32 << 20) + 1};
    PluginFieldCollection huge_collection{1, &huge};
    EXPECT_TRUE(refused(&huge_collection));
}

TEST(Fields, ParseKeepsOrderTypesAndOwnedBytes) {
    std::vector<float> alpha{1.5F, -2.0F};
    std::int16_t const shorts[] = {1, -2, 3};
    std::int8_t const bytes[] = {-1};
    std::uint16_t const half = 0x3c00;
    PluginField given[] = {
        PluginField{"zeta", alpha.data(), PluginFieldType::kFLOAT32, 2},
        PluginField{"alpha", shorts, PluginFieldType::kINT16, 3},
        PluginField{"mid", bytes, PluginFieldType::kINT8, 1},
        PluginField{"h", &half, PluginFieldType::kFLOAT16, 1},
        PluginField{"empty", nullptr, PluginFieldType::kCHAR, 0},
    };
    PluginFieldCollection collection{5, given};
    Fields fields;
    ASSERT_TRUE(Fields::parse(&collection, fields));
    alpha[0] = 99.0F; // the fields own a copy
    ASSERT_EQ(fields.values().size(), 5U);
    std::vector<std::string> names;
    for (auto const& value : fields.values()) {
        names.push_back(value.name);
    }
    EXPECT_EQ(names, (std::vector<std::string>{"zeta", "alpha", "mid", "h", "empty"}));
    auto const* zeta = fields.find("zeta");
    ASSERT_NE(zeta, nullptr);
    EXPECT_EQ(zeta->type, PluginFieldType::kFLOAT32);
    EXPECT_EQ(zeta->length, 2);
    ASSERT_EQ(zeta->bytes.size(), 8U);
    float first = 0;
    std::memcpy(&first, zeta->bytes.data(), 4);
    EXPECT_EQ(first, 1.5F);
    EXPECT_EQ(fields.find("alpha")->bytes.size(), 6U);
    EXPECT_EQ(fields.find("h")->bytes.size(), 2U);
    EXPECT_TRUE(fields.find("empty")->bytes.empty());
    EXPECT_EQ(fields.find("missing"), nullptr);
    EXPECT_EQ(fields.find(nullptr), nullptr);
    expect_collection_points_into(fields);

    PluginFieldCollection nothing{0, nullptr};
    ASSERT_TRUE(Fields::parse(&nothing, fields));
    EXPECT_TRUE(fields.values().empty());
    EXPECT_EQ(fields.collection()->nbFields, 0);
}

TEST(Fields, CopiesAndMovesAreDeepAndRepointTheCollection) {
    auto original = std::make_unique<Fields>(sample_fields());
    Fields copy(*original);
    Fields assigned;
    assigned = *original;
    original.reset();
    expect_collection_points_into(copy);
    expect_collection_points_into(assigned);
    EXPECT_EQ(copy.find("label")->bytes, (std::vector<std::uint8_t>{'h', 'i'}));

    Fields moved(std::move(copy));
    expect_collection_points_into(moved);
    EXPECT_EQ(moved.values().size(), 3U);
    Fields move_assigned;
    move_assigned = std::move(assigned);
    expect_collection_points_into(move_assigned);
    EXPECT_EQ(move_assigned.values().size(), 3U);
    EXPECT_NE(moved.collection()->fields, move_assigned.collection()->fields);
}

TEST_F(Reports, CheckFieldsNamesThePluginTheFieldAndWhatWasExpected) {
    FieldRule const rules[] = {{"alpha", PluginFieldType::kFLOAT32, 1},
                               {"table", PluginFieldType::kINT32, FieldRule::kAnyLength}};
    std::int32_t const table[] = {1, 2, 3};
    float const alpha = 1.0F;
    auto check = [&](std::vector<PluginField> given) {
        PluginFieldCollection collection{static_cast<std::int32_t>(given.size()), given.data()};
        Fields result;
        return tensoracle::cubin::check_fields("Scale", &collection, rules, 2, result);
    };
    EXPECT_TRUE(check({{"table", table, PluginFieldType::kINT32, 3},
                       {"alpha", &alpha, PluginFieldType::kFLOAT32, 1}}));
    EXPECT_FALSE(check({{"alpha", table, PluginFieldType::kINT32, 1},
                        {"table", table, PluginFieldType::kINT32, 3}}));
    EXPECT_NE(last().find("plugin 'Scale': field 'alpha' has type kINT32, expected kFLOAT32"),
              std::string::npos)
        << last();
    EXPECT_FALSE(check({{"alpha", &alpha, PluginFieldType::kFLOAT32, 1},
                        {"table", table, PluginFieldType::kINT32, 0}}));
    EXPECT_NE(last().find("field 'table' holds 0 values, expected one or more"), std::string::npos)
        << last();
    EXPECT_FALSE(check({{"alpha", &alpha, PluginFieldType::kFLOAT32, 1}}));
    EXPECT_NE(last().find("field 'table' (kINT32 x one or more) is missing"), std::string::npos)
        << last();
    EXPECT_FALSE(check({{"alpha", &alpha, PluginFieldType::kFLOAT32, 1},
                        {"table", table, PluginFieldType::kINT32, 3},
                        {"beta", &alpha, PluginFieldType::kFLOAT32, 1}}));
    EXPECT_NE(last().find("unknown field 'beta', expected one of: alpha, table"), std::string::npos)
        << last();
    EXPECT_FALSE(check({{"alpha", &alpha, PluginFieldType::kFLOAT32, 1},
                        {"alpha", &alpha, PluginFieldType::kFLOAT32, 1}}));
    EXPECT_NE(last().find("field 'alpha' is given twice"), std::string::npos) << last();
}

// --- PluginBase --------------------------------------------------------------------------------

TEST(PluginBase, ConstructorChecksTheDeclaration) {
    PluginIO empty;
    empty.inputs.clear();
    EXPECT_THROW(Minimal{empty}, std::invalid_argument);
    PluginIO negative;
    negative.shape_input_index = -1;
    EXPECT_THROW(Minimal{negative}, std::invalid_argument);
    PluginIO beyond;
    beyond.shape_input_index = 1;
    EXPECT_THROW(Minimal{beyond}, std::invalid_argument);
    EXPECT_NO_THROW(Minimal{});
}

TEST(PluginBase, IdentityCapabilitiesAndConstants) {
    static char const name[] = "Minimal";
    Minimal plugin;
    EXPECT_STREQ(plugin.getPluginName(), name);
    EXPECT_STREQ(plugin.getPluginVersion(), "1");
    EXPECT_STREQ(plugin.getPluginNamespace(), "ns");
    EXPECT_EQ(plugin.getNbOutputs(), 1);
    EXPECT_EQ(plugin.getWorkspaceSize(nullptr, 1, nullptr, 1), 0U);
    EXPECT_STREQ(plugin.getTimingCacheID(), "Minimal");
    EXPECT_STREQ(plugin.getMetadataString(), "Minimal");
    EXPECT_EQ(plugin.getCapabilityInterface(nvinfer1::PluginCapabilityType::kCORE),
              static_cast<nvinfer1::IPluginCapability*>(
                  static_cast<nvinfer1::IPluginV3OneCore*>(&plugin)));
    EXPECT_EQ(plugin.getCapabilityInterface(nvinfer1::PluginCapabilityType::kBUILD),
              static_cast<nvinfer1::IPluginCapability*>(
                  static_cast<nvinfer1::IPluginV3OneBuild*>(&plugin)));
    EXPECT_EQ(plugin.getCapabilityInterface(nvinfer1::PluginCapabilityType::kRUNTIME),
              static_cast<nvinfer1::IPluginCapability*>(
                  static_cast<nvinfer1::IPluginV3OneRuntime*>(&plugin)));
    EXPECT_EQ(plugin.getCapabilityInterface(static_cast<nvinfer1::PluginCapabilityType>(77)),
              nullptr);
}

TEST_F(Reports, SupportsFormatCombinationExaminesOnlyThePosition) {
    TwoInputPlugin plugin{Fields{}};
    std::vector<nvinfer1::DynamicPluginTensorDesc> io{
        dynamic(DataType::kFLOAT, TensorFormat::kLINEAR, dims({2})),
        dynamic(DataType::kHALF, TensorFormat::kHWC8, dims({2})),
        dynamic(DataType::kINT32, TensorFormat::kLINEAR, dims({2}))};
    for (std::int32_t position = 0; position < 3; ++position) {
        EXPECT_TRUE(plugin.supportsFormatCombination(position, io.data(), 2, 1)) << position;
    }
    EXPECT_FALSE(plugin.supportsFormatCombination(3, io.data(), 2, 1));
    EXPECT_FALSE(plugin.supportsFormatCombination(-1, io.data(), 2, 1));
    EXPECT_FALSE(plugin.supportsFormatCombination(0, nullptr, 2, 1));
    EXPECT_FALSE(plugin.supportsFormatCombination(0, io.data(), 1, 1));
    EXPECT_FALSE(plugin.supportsFormatCombination(0, io.data(), 2, 2));
    io[1].desc.format = TensorFormat::kLINEAR;
    EXPECT_TRUE(plugin.supportsFormatCombination(0, io.data(), 2, 1)); // position 1 not examined
    EXPECT_FALSE(plugin.supportsFormatCombination(1, io.data(), 2, 1));
    io[2].desc.type = DataType::kFLOAT;
    EXPECT_FALSE(plugin.supportsFormatCombination(2, io.data(), 2, 1));
}

TEST_F(Reports, GetOutputDataTypes) {
    TwoInputPlugin plugin{Fields{}};
    DataType inputs[] = {DataType::kFLOAT, DataType::kHALF};
    DataType output = DataType::kBOOL;
    EXPECT_EQ(plugin.getOutputDataTypes(&output, 1, inputs, 2), 0);
    EXPECT_EQ(output, DataType::kINT32);
    EXPECT_EQ(plugin.getOutputDataTypes(nullptr, 1, inputs, 2), -1);
    EXPECT_EQ(plugin.getOutputDataTypes(&output, 1, nullptr, 2), -1);
    EXPECT_EQ(plugin.getOutputDataTypes(&output, 2, inputs, 2), -1);
    EXPECT_EQ(plugin.getOutputDataTypes(&output, 1, inputs, 1), -1);
    inputs[1] = DataType::kFLOAT;
    EXPECT_EQ(plugin.getOutputDataTypes(&output, 1, inputs, 2), -1);
    EXPECT_NE(last().find("plugin 'TwoInput': getOutputDataTypes: input 1 has type kFLOAT, "
                          "expected kHALF"),
              std::string::npos)
        << last();
}

TEST(PluginBase, GetOutputShapesCopiesTheShapeInput) {
    TwoInputPlugin plugin{Fields{}};
    ExprBuilder builder;
    int markers[4] = {};
    nvinfer1::DimsExprs inputs[2]{};
    inputs[0].nbDims = 1;
    inputs[0].d[0] = reinterpret_cast<nvinfer1::IDimensionExpr const*>(&markers[0]);
    inputs[1].nbDims = 2;
    inputs[1].d[0] = reinterpret_cast<nvinfer1::IDimensionExpr const*>(&markers[1]);
    inputs[1].d[1] = reinterpret_cast<nvinfer1::IDimensionExpr const*>(&markers[2]);
    nvinfer1::DimsExprs output{};
    EXPECT_EQ(plugin.getOutputShapes(inputs, 2, nullptr, 0, &output, 1, builder), 0);
    EXPECT_EQ(output.nbDims, 2);
    EXPECT_EQ(output.d[0], inputs[1].d[0]);
    EXPECT_EQ(output.d[1], inputs[1].d[1]);
    EXPECT_EQ(plugin.getOutputShapes(nullptr, 2, nullptr, 0, &output, 1, builder), -1);
    EXPECT_EQ(plugin.getOutputShapes(inputs, 2, nullptr, 0, nullptr, 1, builder), -1);
    EXPECT_EQ(plugin.getOutputShapes(inputs, 1, nullptr, 0, &output, 1, builder), -1);
    EXPECT_EQ(plugin.getOutputShapes(inputs, 2, inputs, 1, &output, 1, builder), -1);
    EXPECT_EQ(plugin.getOutputShapes(inputs, 2, nullptr, 0, &output, 2, builder), -1);
}

TEST_F(Reports, ConfigurePluginChecksTensorsAndPassesDimsToValidateShape) {
    TwoInputPlugin plugin{Fields{}};
    nvinfer1::DynamicPluginTensorDesc inputs[] = {
        dynamic(DataType::kFLOAT, TensorFormat::kLINEAR, dims({-1, 8})),
        dynamic(DataType::kHALF, TensorFormat::kHWC8, dims({3, 4, 5}))};
    nvinfer1::DynamicPluginTensorDesc outputs[] = {
        dynamic(DataType::kINT32, TensorFormat::kLINEAR, dims({3, 4, 5}))};
    EXPECT_EQ(plugin.configurePlugin(inputs, 2, outputs, 1), 0);
    ASSERT_EQ(plugin.seen_inputs.size(), 2U);
    EXPECT_EQ(plugin.seen_inputs[0].nbDims, 2);
    EXPECT_EQ(plugin.seen_inputs[0].d[0], -1);
    EXPECT_EQ(plugin.seen_inputs[1].d[2], 5);
    EXPECT_EQ(plugin.seen_output.nbDims, 3);

    EXPECT_EQ(plugin.configurePlugin(nullptr, 2, outputs, 1), -1);
    EXPECT_EQ(plugin.configurePlugin(inputs, 2, nullptr, 1), -1);
    EXPECT_EQ(plugin.configurePlugin(inputs, 2, outputs, 2), -1);
    EXPECT_EQ(plugin.configurePlugin(inputs, 1, outputs, 1), -1);
    EXPECT_NE(last().find("configurePlugin: got 1 inputs and 1 outputs, expected 2 inputs"),
              std::string::npos)
        << last();
    inputs[1].desc.format = TensorFormat::kLINEAR;
    EXPECT_EQ(plugin.configurePlugin(inputs, 2, outputs, 1), -1);
    EXPECT_NE(last().find("plugin 'TwoInput': configurePlugin: input 1 is kHALF/kLINEAR, "
                          "expected kHALF/kHWC8"),
              std::string::npos)
        << last();
    inputs[1].desc.format = TensorFormat::kHWC8;
    outputs[0].desc.type = DataType::kFLOAT;
    EXPECT_EQ(plugin.configurePlugin(inputs, 2, outputs, 1), -1);
    EXPECT_NE(last().find("output 0 is kFLOAT/kLINEAR, expected kINT32/kLINEAR"), std::string::npos)
        << last();

    TwoInputPlugin refusing{Fields{}, 7};
    outputs[0].desc.type = DataType::kINT32;
    EXPECT_EQ(refusing.configurePlugin(inputs, 2, outputs, 1), 7);
    EXPECT_NE(last().find("[-1, 8], [3, 4, 5]"), std::string::npos) << last();
}

TEST_F(Reports, OnShapeChangeRunsTheSameChecksWithRuntimeDims) {
    TwoInputPlugin plugin{Fields{}};
    nvinfer1::PluginTensorDesc inputs[] = {desc(DataType::kFLOAT, TensorFormat::kLINEAR, dims({6})),
                                           desc(DataType::kHALF, TensorFormat::kHWC8, dims({2}))};
    nvinfer1::PluginTensorDesc outputs[] = {
        desc(DataType::kINT32, TensorFormat::kLINEAR, dims({2}))};
    EXPECT_EQ(plugin.onShapeChange(inputs, 2, outputs, 1), 0);
    ASSERT_EQ(plugin.seen_inputs.size(), 2U);
    EXPECT_EQ(plugin.seen_inputs[0].d[0], 6);
    EXPECT_EQ(plugin.onShapeChange(inputs, 2, outputs, 0), -1);
    inputs[0].type = DataType::kINT8;
    EXPECT_EQ(plugin.onShapeChange(inputs, 2, outputs, 1), -1);
    EXPECT_NE(last().find("onShapeChange: input 0 is kINT8/kLINEAR, expected kFLOAT/kLINEAR"),
              std::string::npos)
        << last();
    TwoInputPlugin refusing{Fields{}, 3};
    inputs[0].type = DataType::kFLOAT;
    EXPECT_EQ(refusing.onShapeChange(inputs, 2, outputs, 1), 3);
}

TEST_F(Reports, AttachToContextClonesAndReportsThroughTheRecorder) {
    TwoInputPlugin plugin{sample_fields()};
    Recorder recorder;
    ResourceContext context{&recorder};
    std::unique_ptr<nvinfer1::IPluginV3> attached{plugin.attachToContext(&context)};
    ASSERT_NE(attached, nullptr);
    auto* clone = dynamic_cast<TwoInputPlugin*>(attached.get());
    ASSERT_NE(clone, nullptr);
    EXPECT_NE(clone, &plugin);
    EXPECT_EQ(clone->recorder(), &recorder);
    EXPECT_EQ(plugin.recorder(), nullptr);
    EXPECT_EQ(clone->own_fields().values().size(), 3U);
    DataType inputs[] = {DataType::kFLOAT, DataType::kFLOAT};
    DataType output{};
    std::size_t const logged = finder.logger.messages.size();
    EXPECT_EQ(clone->getOutputDataTypes(&output, 1, inputs, 2), -1);
    ASSERT_EQ(recorder.messages.size(), 1U);
    EXPECT_NE(recorder.messages[0].find("input 1 has type kFLOAT, expected kHALF"),
              std::string::npos);
    EXPECT_EQ(finder.logger.messages.size(), logged); // the recorder, not the logger
}

TEST(PluginBase, GetFieldsToSerializeIsTheOwnedCollection) {
    TwoInputPlugin plugin{sample_fields()};
    PluginFieldCollection const* collection = plugin.getFieldsToSerialize();
    ASSERT_NE(collection, nullptr);
    ASSERT_EQ(collection->nbFields, 3);
    EXPECT_STREQ(collection->fields[0].name, "alpha");
    EXPECT_EQ(collection->fields[0].type, PluginFieldType::kFLOAT32);
    EXPECT_EQ(collection->fields[0].length, 2);
    EXPECT_EQ(std::memcmp(collection->fields[0].data, kAlpha, sizeof(kAlpha)), 0);
    EXPECT_STREQ(collection->fields[1].name, "count");
    EXPECT_STREQ(collection->fields[2].name, "label");
    EXPECT_EQ(collection->fields[2].length, 2);
    EXPECT_EQ(collection->fields[0].data, plugin.own_fields().values()[0].bytes.data());
}

TEST(Reporting, WithoutRecorderOrLoggerGoesToStandardError) {
    tensoracle::cubin::set_logger_finder(nullptr);
    testing::internal::CaptureStderr();
    tensoracle::cubin::report_error(nullptr, "plugin 'X': something");
    EXPECT_NE(testing::internal::GetCapturedStderr().find("plugin 'X': something"),
              std::string::npos);
}

// --- Kernel, DeviceBytes, sha256, the bundle ---------------------------------------------------

namespace {

ArgumentRule const kRules[] = {{ArgumentKind::kPointer, 16},
                               {ArgumentKind::kPointer, 1},
                               {ArgumentKind::kInt32, 16},
                               {ArgumentKind::kFloat32, 1}};

KernelImage image_with(ArgumentRule const* rules, std::size_t count) {
    static unsigned char const bytes[] = {1, 2, 3};
    return KernelImage{bytes, sizeof(bytes), "00", "k", 86, 32, 0, 0, 0, count, rules};
}

} // namespace

TEST(Kernel, AcceptsChecksCountsNullsAndDivisibility) {
    Kernel kernel{image_with(kRules, 4)};
    CUdeviceptr x = 0x1000;
    CUdeviceptr y = 0x1003;
    std::int32_t n = 64;
    float alpha = 0.5F;
    void* arguments[] = {&x, &y, &n, &alpha};
    EXPECT_TRUE(kernel.accepts(arguments, 4));
    EXPECT_FALSE(kernel.accepts(nullptr, 4));
    EXPECT_FALSE(kernel.accepts(arguments, 3));
    EXPECT_FALSE(kernel.accepts(arguments, 0));
    void* with_null[] = {&x, nullptr, &n, &alpha};
    EXPECT_FALSE(kernel.accepts(with_null, 4));
    x = 0x1008; // not a multiple of 16
    EXPECT_FALSE(kernel.accepts(arguments, 4));
    x = 0; // a null pointer is refused when a divisor is declared
    EXPECT_FALSE(kernel.accepts(arguments, 4));
    x = 0x2000;
    n = 0; // 0 and negative multiples pass
    EXPECT_TRUE(kernel.accepts(arguments, 4));
    n = -32;
    EXPECT_TRUE(kernel.accepts(arguments, 4));
    n = 24;
    EXPECT_FALSE(kernel.accepts(arguments, 4));

    ArgumentRule const zero[] = {{ArgumentKind::kInt32, 0}};
    ArgumentRule const three[] = {{ArgumentKind::kInt32, 3}};
    ArgumentRule const float_divisor[] = {{ArgumentKind::kFloat32, 2}};
    ArgumentRule const unspecialized[] = {{ArgumentKind::kPointer, 1}};
    void* one[] = {&n};
    EXPECT_FALSE(Kernel{image_with(zero, 1)}.accepts(one, 1));
    EXPECT_FALSE(Kernel{image_with(three, 1)}.accepts(one, 1));
    EXPECT_FALSE(Kernel{image_with(float_divisor, 1)}.accepts(one, 1));
    CUdeviceptr null_pointer = 0;
    void* pointer[] = {&null_pointer};
    EXPECT_TRUE(Kernel{image_with(unspecialized, 1)}.accepts(pointer, 1));
    EXPECT_FALSE(Kernel{image_with(nullptr, 1)}.accepts(pointer, 1));

    std::vector<ArgumentRule> fifteen(15, ArgumentRule{ArgumentKind::kInt32, 1});
    std::vector<void*> many(15, &n);
    EXPECT_FALSE(Kernel{image_with(fifteen.data(), 15)}.accepts(many.data(), 15));
    EXPECT_TRUE(Kernel{image_with(fifteen.data(), 14)}.accepts(many.data(), 14));
}

TEST(Kernel, LaunchRefusesBadArgumentsThenAsksTheDriver) {
    Kernel kernel{image_with(kRules, 4)};
    CUdeviceptr x = 0x1000;
    CUdeviceptr y = 0x1000;
    std::int32_t n = 16;
    float alpha = 1.0F;
    void* arguments[] = {&x, &y, &n, &alpha};
    EXPECT_EQ(kernel.launch(0, 128, arguments, 4, nullptr), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(kernel.launch(1, 0, arguments, 4, nullptr), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(kernel.launch(1, 128, arguments, 3, nullptr), CUDA_ERROR_INVALID_VALUE);
    n = 3;
    EXPECT_EQ(kernel.launch(1, 128, arguments, 4, nullptr), CUDA_ERROR_INVALID_VALUE);
    n = 32;
    // Run with the link-time stub as libcuda.so.1: no context can be obtained.
    EXPECT_EQ(kernel.launch(1, 128, arguments, 4, nullptr), CUDA_ERROR_STUB_LIBRARY);
}

TEST(DeviceBytes, EmptyBytesAreInvalidAndTheDriversErrorIsReturned) {
    DeviceBytes empty{{}};
    CUdeviceptr pointer = 0;
    EXPECT_EQ(empty.for_current_context(pointer), CUDA_ERROR_INVALID_VALUE);
    DeviceBytes bytes{{1, 2, 3}};
    EXPECT_EQ(bytes.for_current_context(pointer), CUDA_ERROR_STUB_LIBRARY);
    EXPECT_EQ(pointer, 0U);
}

std::string expected_x(std::size_t size) {
    static std::vector<std::pair<std::size_t, std::string>> const digests{
        {55U, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072"},
        {63U, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2"},
        {64U, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c"},
        {65U, "9537c5fdf120482f7d58d25e9ed583f52c02b4e304ea814db1633ad565aed7e9"},
        {119U, "000b48d4edf0fa7bee3c6236ecd2785baa5db4eeb8bb54341b029e0d9fa5fb0c"},
    };
    for (auto const& [length, digest] : digests) {
        if (length == size) {
            return digest;
        }
    }
    return {};
}

TEST(Sha256, KnownVectors) {
    EXPECT_EQ(tensoracle::cubin::sha256("", 0),
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(tensoracle::cubin::sha256(nullptr, 0),
              "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(tensoracle::cubin::sha256("abc", 3),
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    std::string const two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    EXPECT_EQ(tensoracle::cubin::sha256(two_blocks.data(), two_blocks.size()),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    std::string const million(1000000, 'a');
    EXPECT_EQ(tensoracle::cubin::sha256(million.data(), million.size()),
              "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    for (std::size_t const size :
         {std::size_t{55}, std::size_t{63}, std::size_t{64}, std::size_t{65},
          std::size_t{119}}) { // around the padding boundaries
        std::string const text(size, 'x');
        EXPECT_EQ(tensoracle::cubin::sha256(text.data(), size), expected_x(size)) << size;
    }
}

extern "C" char const tensoracle_bundle_sha256[];

TEST(Bundle, FindBundleImageReturnsTheFixturesEntries) {
    using tensoracle::cubin::find_bundle_image;
    EXPECT_EQ(find_bundle_image(nullptr), nullptr);
    EXPECT_EQ(find_bundle_image("sm86.nothing"), nullptr);
    KernelImage const* scale = find_bundle_image("sm86.scale");
    ASSERT_NE(scale, nullptr);
    EXPECT_EQ(scale->target_sm, 86);
    EXPECT_STREQ(scale->entry_symbol, "scale_kernel");
    EXPECT_EQ(scale->registers_per_thread, 32);
    EXPECT_EQ(scale->public_argument_count, 4U);
    EXPECT_EQ(scale->argument_rules[2].kind, ArgumentKind::kInt32);
    EXPECT_EQ(scale->argument_rules[2].divisible_by, 16U);
    EXPECT_EQ(tensoracle::cubin::sha256(scale->bytes, scale->size), scale->sha256);
    KernelImage const* fill = find_bundle_image("sm120.fill");
    ASSERT_NE(fill, nullptr);
    EXPECT_EQ(fill->target_sm, 120);
    EXPECT_EQ(fill->dynamic_shared_bytes, 1024);
    EXPECT_EQ(tensoracle::cubin::sha256(fill->bytes, fill->size), fill->sha256);
    EXPECT_EQ(std::strlen(tensoracle_bundle_sha256), 64U);
}
