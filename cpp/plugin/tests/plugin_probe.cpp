// Drives a cubin plugin library through a real TensorRT runtime's plugin registry and the
// IPluginV3 capability interfaces, which the Python bindings cannot all reach.
//
//   plugin_probe LIBNVINFER PLUGIN_LIBRARY [--gpu DUMP_DIR]
//
// LIBNVINFER is a TensorRT runtime library (libnvinfer_lean.so.11 of the lean runtime works);
// the probe dlopens it and calls its getPluginRegistry(). PLUGIN_LIBRARY is the example plugin
// (examples/cubin_plugin). Every check prints "ok <what>" or "FAIL <what>: <detail>"; the exit
// status is 1 when any check failed. With --gpu, the plugins also run on device buffers in two
// CUDA contexts and inputs and outputs are written to DUMP_DIR as raw float32 files for
// check_plugin_dump.py, which compares them with NumPy. One program over 400 lines: every check
// walks the same registry, plugin objects and contexts in order, and its steps read top to bottom.
#include "cuda/loaded_driver.hpp"

#include <NvInferRuntime.h>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

// The probe calls TensorRT 11's plugin registry through its own header: the 10.x headers declare
// an IPluginRegistry with four more virtual methods (the IPluginV2 creator calls TensorRT 11 no
// longer has), and calling the 11.x registry through that class would jump to the wrong entries.
static_assert(NV_TENSORRT_MAJOR >= 11, "plugin_probe needs the TensorRT 11 headers");

namespace {

using nvinfer1::DataType;
using nvinfer1::Dims;
using nvinfer1::DimsExprs;
using nvinfer1::DynamicPluginTensorDesc;
using nvinfer1::IPluginCreatorV3One;
using nvinfer1::IPluginV3;
using nvinfer1::IPluginV3OneBuild;
using nvinfer1::IPluginV3OneCore;
using nvinfer1::IPluginV3OneRuntime;
using nvinfer1::PluginCapabilityType;
using nvinfer1::PluginField;
using nvinfer1::PluginFieldCollection;
using nvinfer1::PluginFieldType;
using nvinfer1::PluginTensorDesc;
using nvinfer1::TensorFormat;
namespace cuda = tensoracle::cuda;

constexpr char const* plugin_namespace = "tensoracle_example";
std::atomic<int> failures{0};
std::mutex output_mutex;

void check(bool ok, std::string const& what, std::string const& detail = {}) {
    std::lock_guard const lock(output_mutex);
    if (ok) {
        std::cout << "ok " << what << '\n';
    } else {
        ++failures;
        std::cout << "FAIL " << what << (detail.empty() ? "" : ": " + detail) << '\n';
    }
    std::cout.flush();
}

// Keeps every message the plugin logs, so that checks can look for the expected error text.
class Logger : public nvinfer1::ILogger {
public:
    void log(Severity severity, char const* message) noexcept override {
        std::lock_guard const lock(mutex_);
        messages.emplace_back(message);
        if (severity <= Severity::kWARNING) {
            std::cout << "  [plugin log] " << message << '\n';
        }
    }
    bool saw_exactly(std::string const& text) {
        std::lock_guard const lock(mutex_);
        for (std::string const& message : messages) {
            if (message == text) {
                return true;
            }
        }
        return false;
    }
    void clear() {
        std::lock_guard const lock(mutex_);
        messages.clear();
    }
    bool saw(std::string const& text) {
        std::lock_guard const lock(mutex_);
        for (std::string const& message : messages) {
            if (message.find(text) != std::string::npos) {
                return true;
            }
        }
        return false;
    }
    std::vector<std::string> messages;

private:
    std::mutex mutex_;
};

class Finder : public nvinfer1::ILoggerFinder {
public:
    explicit Finder(Logger& logger) : logger_(&logger) {}
    nvinfer1::ILogger* findLogger() override { return logger_; }

private:
    Logger* logger_;
};

Logger logger;
Finder finder{logger};

// Runs `call` and checks that it logged `expected`.
void expect_message(std::string const& what, std::string const& expected,
                    std::function<bool()> const& call) {
    logger.clear();
    bool const refused = call();
    check(refused && logger.saw(expected), what,
          "refused=" + std::to_string(refused) + ", expected a message containing '" + expected +
              "'" + (logger.messages.empty() ? "" : ", got '" + logger.messages.back() + "'"));
}

Dims dims(std::initializer_list<std::int64_t> values) {
    Dims result{};
    result.nbDims = static_cast<std::int32_t>(values.size());
    std::int32_t i = 0;
    for (std::int64_t value : values) {
        result.d[i++] = value;
    }
    return result;
}

PluginTensorDesc desc(Dims shape, DataType type = DataType::kFLOAT,
                      TensorFormat format = TensorFormat::kLINEAR) {
    PluginTensorDesc result{};
    result.dims = shape;
    result.type = type;
    result.format = format;
    result.scale = 1.0F;
    return result;
}

DynamicPluginTensorDesc dynamic(Dims shape, DataType type = DataType::kFLOAT,
                                TensorFormat format = TensorFormat::kLINEAR) {
    DynamicPluginTensorDesc result{};
    result.desc = desc(shape, type, format);
    result.min = shape;
    result.max = shape;
    result.opt = shape;
    return result;
}

template <typename Capability>
Capability* capability(IPluginV3* plugin, PluginCapabilityType type) {
    return static_cast<Capability*>(plugin->getCapabilityInterface(type));
}

struct Plugin {
    IPluginV3* plugin = nullptr;
    ~Plugin() { delete plugin; }
    IPluginV3OneCore* core() const {
        return capability<IPluginV3OneCore>(plugin, PluginCapabilityType::kCORE);
    }
    IPluginV3OneBuild* build() const {
        return capability<IPluginV3OneBuild>(plugin, PluginCapabilityType::kBUILD);
    }
    IPluginV3OneRuntime* runtime() const {
        return capability<IPluginV3OneRuntime>(plugin, PluginCapabilityType::kRUNTIME);
    }
};

std::vector<float> alpha_of(IPluginV3OneRuntime* runtime) {
    PluginFieldCollection const* fields = runtime->getFieldsToSerialize();
    std::vector<float> values;
    for (std::int32_t i = 0; fields != nullptr && i < fields->nbFields; ++i) {
        if (std::string{fields->fields[i].name} == "alpha" &&
            fields->fields[i].type == PluginFieldType::kFLOAT32) {
            auto const* data = static_cast<float const*>(fields->fields[i].data);
            values.assign(data, data + fields->fields[i].length);
        }
    }
    return values;
}

// The digest of the bundle compiled into the plugin library (its tensoracle_bundle_sha256), which
// every example plugin requires as its field bundle_sha256.
std::string bundle_digest;

PluginField digest_field(std::string const& digest) {
    return PluginField{"bundle_sha256", digest.data(), PluginFieldType::kCHAR,
                       static_cast<std::int32_t>(digest.size())};
}

// Creates a plugin from `fields`, with the library's bundle digest in front of them.
IPluginV3* create(IPluginCreatorV3One* creator, std::vector<PluginField> fields) {
    fields.insert(fields.begin(), digest_field(bundle_digest));
    PluginFieldCollection collection{static_cast<std::int32_t>(fields.size()), fields.data()};
    return creator->createPlugin("probe", &collection, nvinfer1::TensorRTPhase::kBUILD);
}

// Creates a plugin from exactly `fields`.
IPluginV3* create_exactly(IPluginCreatorV3One* creator, std::vector<PluginField> const& fields) {
    PluginFieldCollection collection{static_cast<std::int32_t>(fields.size()), fields.data()};
    return creator->createPlugin("probe", &collection, nvinfer1::TensorRTPhase::kBUILD);
}

// ---- checks without a GPU -------------------------------------------------------------------

void check_build_interfaces(IPluginCreatorV3One* scale_creator, IPluginCreatorV3One* dot_creator,
                            IPluginCreatorV3One* bias_creator) {
    float const alpha = 2.5F;
    Plugin scale{
        create(scale_creator, {PluginField{"alpha", &alpha, PluginFieldType::kFLOAT32, 1}})};
    check(scale.plugin != nullptr, "TensoracleScale created from fields {alpha: 2.5}");
    if (scale.plugin == nullptr) {
        return;
    }
    IPluginV3OneCore* core = scale.core();
    check(core != nullptr && std::string{core->getPluginName()} == "TensoracleScale" &&
              std::string{core->getPluginVersion()} == "1" &&
              std::string{core->getPluginNamespace()} == plugin_namespace,
          "core capability names the plugin, version 1 and its namespace");
    check(std::string{core->getInterfaceInfo().kind} == "PLUGIN_V3ONE_CORE" &&
              std::string{scale.build()->getInterfaceInfo().kind} == "PLUGIN_V3ONE_BUILD" &&
              std::string{scale.runtime()->getInterfaceInfo().kind} == "PLUGIN_V3ONE_RUNTIME",
          "capability interfaces report their V3ONE kinds");

    IPluginV3OneBuild* build = scale.build();
    check(build->getNbOutputs() == 1, "one output");
    std::array fp32{dynamic(dims({4, 8})), dynamic(dims({4, 8}))};
    std::array half{dynamic(dims({4, 8}), DataType::kHALF), dynamic(dims({4, 8}))};
    std::array hwc8{dynamic(dims({1, 8, 2, 2}), DataType::kFLOAT, TensorFormat::kHWC8),
                    dynamic(dims({1, 8, 2, 2}))};
    check(build->supportsFormatCombination(0, fp32.data(), 1, 1) &&
              build->supportsFormatCombination(1, fp32.data(), 1, 1),
          "format negotiation accepts FLOAT / LINEAR for input and output");
    check(!build->supportsFormatCombination(0, half.data(), 1, 1) &&
              !build->supportsFormatCombination(0, hwc8.data(), 1, 1),
          "format negotiation declines HALF and HWC8");
    DataType out_type = DataType::kINT8;
    DataType const in_type = DataType::kFLOAT;
    check(build->getOutputDataTypes(&out_type, 1, &in_type, 1) == 0 && out_type == DataType::kFLOAT,
          "output type FLOAT for a FLOAT input");
    DataType const half_type = DataType::kHALF;
    expect_message(
        "getOutputDataTypes refuses a HALF input",
        "plugin 'TensoracleScale': getOutputDataTypes: input 0 has type kHALF, expected kFLOAT",
        [&] { return build->getOutputDataTypes(&out_type, 1, &half_type, 1) != 0; });

    // Dimension expressions are TensorRT objects the plugin only copies: distinct addresses
    // stand in for them, and the check is which address lands where.
    std::array<char, 8> markers{};
    auto const expr = [&](int i) {
        return reinterpret_cast<nvinfer1::IDimensionExpr const*>(&markers.at(i));
    };
    DimsExprs in_exprs{};
    in_exprs.nbDims = 3;
    in_exprs.d[0] = expr(0);
    in_exprs.d[1] = expr(1);
    in_exprs.d[2] = expr(2);
    std::array two_inputs{in_exprs, in_exprs};
    DimsExprs out_exprs{};
    // getOutputShapes takes a builder it may call; these plugins do not, so it has no backing.
    struct UnusedBuilder : nvinfer1::IExprBuilder {};
    UnusedBuilder no_builder;
    check(build->getOutputShapes(&in_exprs, 1, nullptr, 0, &out_exprs, 1, no_builder) == 0 &&
              out_exprs.nbDims == 3 && out_exprs.d[0] == expr(0) && out_exprs.d[2] == expr(2),
          "output shape copies input 0 (declared shape_input_index)");

    check(build->configurePlugin(&fp32[0], 1, &fp32[1], 1) == 0, "configurePlugin accepts FLOAT");
    expect_message("configurePlugin refuses HWC8, naming tensor, value and expectation",
                   "configurePlugin: input 0 is kFLOAT/kHWC8, expected kFLOAT/kLINEAR",
                   [&] { return build->configurePlugin(&hwc8[0], 1, &hwc8[1], 1) != 0; });
    expect_message("configurePlugin refuses two inputs for a one-input plugin",
                   "got 2 inputs and 1 outputs, expected 1 inputs and 1 output",
                   [&] { return build->configurePlugin(fp32.data(), 2, &fp32[1], 1) != 0; });

    IPluginV3OneRuntime* runtime = scale.runtime();
    std::array shapes{desc(dims({4, 8})), desc(dims({4, 8}))};
    check(runtime->onShapeChange(&shapes[0], 1, &shapes[1], 1) == 0, "onShapeChange accepts");
    check(alpha_of(runtime) == std::vector<float>{2.5F}, "getFieldsToSerialize gives alpha 2.5");

    // Serialized fields create an equal plugin.
    PluginFieldCollection const* serialized = runtime->getFieldsToSerialize();
    Plugin restored{
        scale_creator->createPlugin("restored", serialized, nvinfer1::TensorRTPhase::kRUNTIME)};
    check(restored.plugin != nullptr && alpha_of(restored.runtime()) == std::vector<float>{2.5F},
          "serialized fields create an equal plugin");
    Plugin copy{scale.plugin->clone()};
    check(copy.plugin != nullptr && copy.plugin != scale.plugin &&
              alpha_of(copy.runtime()) == std::vector<float>{2.5F} &&
              std::string{copy.core()->getPluginName()} == "TensoracleScale",
          "clone keeps name and fields");
    Plugin attached{runtime->attachToContext(nullptr)};
    check(attached.plugin != nullptr && alpha_of(attached.runtime()) == std::vector<float>{2.5F},
          "attachToContext gives a plugin with the same fields");

    // Without a CUDA driver the launch fails, is reported, and the process carries on.
    if (!cuda::Driver::unavailable_reason().empty()) {
        std::array<void const*, 1> in{reinterpret_cast<void const*>(0x1000)};
        std::array<void*, 1> out{reinterpret_cast<void*>(0x2000)};
        expect_message("enqueue without a CUDA driver fails with a message, no crash",
                       "plugin 'TensoracleScale': enqueue failed: ", [&] {
                           return runtime->enqueue(&shapes[0], &shapes[1], in.data(), out.data(),
                                                   nullptr, nullptr) != 0;
                       });
    }

    // The row dot overrides the output shape: the last dimension is dropped.
    Plugin dot{create(dot_creator, {})};
    check(dot.plugin != nullptr, "TensoracleRowDot created without fields");
    if (dot.plugin != nullptr) {
        check(dot.build()->getOutputShapes(two_inputs.data(), 2, nullptr, 0, &out_exprs, 1,
                                           no_builder) == 0 &&
                  out_exprs.nbDims == 2 && out_exprs.d[0] == expr(0) && out_exprs.d[1] == expr(1),
              "row dot output shape drops the last dimension");
        std::array good{dynamic(dims({8, 64})), dynamic(dims({8, 64})), dynamic(dims({8}))};
        std::array bad{dynamic(dims({8, 64})), dynamic(dims({8, 32})), dynamic(dims({8}))};
        std::array wild{dynamic(dims({-1, 64})), dynamic(dims({-1, 64})), dynamic(dims({-1}))};
        check(dot.build()->configurePlugin(good.data(), 2, &good[2], 1) == 0 &&
                  dot.build()->configurePlugin(wild.data(), 2, &wild[2], 1) == 0,
              "row dot configures matching and wildcard shapes");
        expect_message("row dot refuses inputs of different shapes (validate_shape)",
                       "validate_shape refused inputs [8, 64], [8, 32] and output [8]", [&] {
                           return dot.build()->configurePlugin(bad.data(), 2, &bad[2], 1) != 0;
                       });
    }
    std::array<float, 8> const eight{};
    Plugin bias{
        create(bias_creator, {PluginField{"bias", eight.data(), PluginFieldType::kFLOAT32, 8}})};
    check(bias.plugin != nullptr, "TensoracleBiasAdd created from fields {bias: 8 values}");
    if (bias.plugin != nullptr) {
        std::array good{dynamic(dims({4, 8})), dynamic(dims({4, 8}))};
        std::array bad{dynamic(dims({4, 7})), dynamic(dims({4, 7}))};
        check(bias.build()->configurePlugin(&good[0], 1, &good[1], 1) == 0,
              "bias add configures rows of 8 for a bias of 8");
        expect_message("bias add refuses rows of another length than its bias (validate_shape)",
                       "validate_shape refused inputs [4, 7] and output [4, 7]",
                       [&] { return bias.build()->configurePlugin(&bad[0], 1, &bad[1], 1) != 0; });
    }
}

void check_bad_fields(IPluginCreatorV3One* scale_creator, IPluginCreatorV3One* dot_creator) {
    std::int32_t const integer = 2;
    std::array<float, 2> const pair{1.0F, 2.0F};
    float const alpha = 1.0F;
    auto const refuses = [](IPluginCreatorV3One* creator, std::vector<PluginField> const& fields,
                            bool digest = true) {
        IPluginV3* plugin = digest ? create(creator, fields) : create_exactly(creator, fields);
        delete plugin;
        return plugin == nullptr;
    };
    PluginField const good_alpha{"alpha", &alpha, PluginFieldType::kFLOAT32, 1};
    expect_message("a field of the wrong type is refused",
                   "plugin 'TensoracleScale': field 'alpha' has type kINT32, expected kFLOAT32",
                   [&] {
                       return refuses(scale_creator,
                                      {PluginField{"alpha", &integer, PluginFieldType::kINT32, 1}});
                   });
    expect_message("a field with the wrong count is refused",
                   "plugin 'TensoracleScale': field 'alpha' holds 2 values, expected 1", [&] {
                       return refuses(scale_creator, {PluginField{"alpha", pair.data(),
                                                                  PluginFieldType::kFLOAT32, 2}});
                   });
    expect_message("a missing field is refused",
                   "plugin 'TensoracleScale': field 'alpha' (kFLOAT32 x 1) is missing",
                   [&] { return refuses(scale_creator, {}); });
    expect_message("an unknown field is refused",
                   "plugin 'TensoracleScale': unknown field 'beta', expected one of: "
                   "bundle_sha256, alpha",
                   [&] {
                       return refuses(
                           scale_creator,
                           {good_alpha, PluginField{"beta", &alpha, PluginFieldType::kFLOAT32, 1}});
                   });
    expect_message("a field given twice is refused",
                   "plugin 'TensoracleScale': field 'alpha' is given twice", [&] {
                       return refuses(scale_creator, {good_alpha, good_alpha});
                   });
    expect_message("a field for a plugin without its own fields is refused",
                   "plugin 'TensoracleRowDot': unknown field 'alpha', expected one of: "
                   "bundle_sha256",
                   [&] { return refuses(dot_creator, {good_alpha}); });
    expect_message("a plugin without the bundle digest is refused",
                   "plugin 'TensoracleScale': field 'bundle_sha256' (kCHAR x 64) is missing",
                   [&] { return refuses(scale_creator, {good_alpha}, false); });
    std::string other = bundle_digest;
    other[0] = other[0] == '0' ? '1' : '0';
    expect_message("a plugin of another bundle is refused, naming both digests",
                   "field 'bundle_sha256' is '" + other +
                       "', expected the digest of this library's bundle '" + bundle_digest + "'",
                   [&] {
                       return refuses(scale_creator, {digest_field(other), good_alpha}, false);
                   });
}

// ---- checks on a GPU ------------------------------------------------------------------------

class DeviceBuffer {
public:
    explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
        cuda::Driver const& driver = cuda::Driver::get();
        driver.check(driver.mem_alloc(&address_, bytes_ + 64), "cuMemAlloc");
    }
    ~DeviceBuffer() { cuda::Driver::get().mem_free(address_); }
    DeviceBuffer(DeviceBuffer const&) = delete;
    DeviceBuffer& operator=(DeviceBuffer const&) = delete;
    // The device address `offset` bytes into the buffer (to pass misaligned pointers).
    void* at(std::size_t offset = 0) const { return reinterpret_cast<void*>(address_ + offset); }
    void write(std::vector<float> const& values, std::size_t offset = 0) const {
        cuda::Driver const& driver = cuda::Driver::get();
        driver.check(
            driver.memcpy_htod(address_ + offset, values.data(), values.size() * sizeof(float)),
            "cuMemcpyHtoD");
    }
    std::vector<float> read(std::size_t count, std::size_t offset = 0) const {
        std::vector<float> values(count);
        cuda::Driver const& driver = cuda::Driver::get();
        driver.check(driver.ctx_synchronize(), "cuCtxSynchronize");
        driver.check(driver.memcpy_dtoh(values.data(), address_ + offset, count * sizeof(float)),
                     "cuMemcpyDtoH");
        return values;
    }

private:
    std::size_t bytes_;
    cuda::DevicePtr address_ = 0;
};

std::vector<float> random_floats(std::size_t count, unsigned seed) {
    std::mt19937 generator(seed);
    std::uniform_real_distribution<float> distribution(-1.0F, 1.0F);
    std::vector<float> values(count);
    for (float& value : values) {
        value = distribution(generator);
    }
    return values;
}

void dump(std::string const& directory, std::string const& name, std::vector<float> const& values) {
    std::ofstream out(directory + "/" + name + ".f32", std::ios::binary);
    out.write(reinterpret_cast<char const*>(values.data()),
              static_cast<std::streamsize>(values.size() * sizeof(float)));
}

// Runs `plugin` once through onShapeChange and enqueue on device buffers; returns enqueue's status.
int run(Plugin const& plugin, std::vector<PluginTensorDesc> const& inputs,
        PluginTensorDesc const& output, std::vector<void const*> const& in, void* out) {
    IPluginV3OneRuntime* runtime = plugin.runtime();
    if (runtime->onShapeChange(inputs.data(), static_cast<std::int32_t>(inputs.size()), &output,
                               1) != 0) {
        return -2;
    }
    std::array<void*, 1> outs{out};
    return runtime->enqueue(inputs.data(), &output, in.data(), outs.data(), nullptr, nullptr);
}

// One pass over every plugin in the current context; `tag` prefixes the dumped file names.
// `alone`: no other thread logs meanwhile, so the variant the row dot logged can be checked.
void run_all(std::string const& directory, std::string const& tag, bool alone,
             IPluginCreatorV3One* bias_c, IPluginCreatorV3One* scale_c,
             IPluginCreatorV3One* dot_c) {
    float const alpha = -2.5F;
    std::int64_t const rows = 64;
    std::int64_t const cols = 300;
    auto const x = random_floats(rows * cols, 1);
    auto const b = random_floats(cols, 2);
    Plugin bias{create(bias_c, {PluginField{"bias", b.data(), PluginFieldType::kFLOAT32,
                                            static_cast<std::int32_t>(cols)}})};
    Plugin scale{create(scale_c, {PluginField{"alpha", &alpha, PluginFieldType::kFLOAT32, 1}})};
    Plugin dot{create(dot_c, {})};
    // TensorRT gives each execution context its own attached clone; so does the probe.
    Plugin bias_run{bias.runtime()->attachToContext(nullptr)};
    Plugin scale_run{scale.runtime()->attachToContext(nullptr)};
    Plugin dot_run{dot.runtime()->attachToContext(nullptr)};

    DeviceBuffer dx(x.size() * 4);
    DeviceBuffer dout(x.size() * 4);
    dx.write(x);
    int status =
        run(bias_run, {desc(dims({rows, cols}))}, desc(dims({rows, cols})), {dx.at()}, dout.at());
    check(status == 0, tag + " TensoracleBiasAdd enqueue (64 x 300)");
    dump(directory, tag + "bias_x", x);
    dump(directory, tag + "bias_b", b);
    dump(directory, tag + "bias_out", dout.read(x.size()));

    std::int64_t const n = 10000;
    auto const s = random_floats(n, 3);
    DeviceBuffer ds(n * 4);
    DeviceBuffer dsout(n * 4);
    ds.write(s);
    status = run(scale_run, {desc(dims({n}))}, desc(dims({n})), {ds.at()}, dsout.at());
    check(status == 0, tag + " TensoracleScale enqueue (10000, alpha -2.5)");
    dump(directory, tag + "scale_x", s);
    dump(directory, tag + "scale_out", dsout.read(n));

    struct DotCase {
        std::string name;
        std::int64_t k;
        std::size_t offset; // bytes added to every pointer
        std::string variant;
    };
    std::vector<DotCase> const cases{{"dot_k1024", 1024, 0, "row_dot_div16"},
                                     {"dot_k1000", 1000, 0, "row_dot"},
                                     {"dot_k1024_misaligned", 1024, 4, "row_dot"}};
    for (DotCase const& c : cases) {
        std::int64_t const dot_rows = 48;
        auto const a = random_floats(dot_rows * c.k, 4);
        auto const bb = random_floats(dot_rows * c.k, 5);
        DeviceBuffer da(a.size() * 4);
        DeviceBuffer dbb(bb.size() * 4);
        DeviceBuffer dd(dot_rows * 4);
        da.write(a, c.offset);
        dbb.write(bb, c.offset);
        logger.clear();
        status = run(dot_run, {desc(dims({dot_rows, c.k})), desc(dims({dot_rows, c.k}))},
                     desc(dims({dot_rows})), {da.at(c.offset), dbb.at(c.offset)}, dd.at(c.offset));
        bool const variant = !alone || logger.saw_exactly("TensoracleRowDot launches " + c.variant);
        check(status == 0 && variant, tag + " TensoracleRowDot enqueue " + c.name +
                                          (alone ? " runs " + c.variant : std::string{}));
        dump(directory, tag + c.name + "_a", a);
        dump(directory, tag + c.name + "_b", bb);
        dump(directory, tag + c.name + "_out", dd.read(dot_rows, c.offset));
    }
}

void check_gpu(std::string const& directory, IPluginCreatorV3One* bias_c,
               IPluginCreatorV3One* scale_c, IPluginCreatorV3One* dot_c) {
    std::string const reason = cuda::Driver::unavailable_reason();
    check(reason.empty(), "CUDA driver and device present", reason);
    if (!reason.empty()) {
        return;
    }
    cuda::Driver const& driver = cuda::Driver::get();
    cuda::Device device = 0;
    driver.check(driver.device_get(&device, 0), "cuDeviceGet");
    std::array<char, 128> name{};
    driver.check(driver.device_get_name(name.data(), name.size(), device), "cuDeviceGetName");
    std::cout << "device: " << name.data() << ", sm"
              << driver.attribute(cuda::DeviceAttribute::compute_capability_major, device)
              << driver.attribute(cuda::DeviceAttribute::compute_capability_minor, device) << '\n';

    std::array<cuda::Context, 2> contexts{};
    for (cuda::Context& context : contexts) {
        driver.check(driver.ctx_create(&context, 0, device), "cuCtxCreate");
    }
    driver.check(driver.ctx_set_current(contexts[0]), "cuCtxSetCurrent");
    run_all(directory, "ctx0_", true, bias_c, scale_c, dot_c);
    // Both contexts at once, one thread each: each loads its own modules.
    std::array<std::thread, 2> threads;
    for (std::size_t i = 0; i < threads.size(); ++i) {
        threads.at(i) = std::thread([&, i] {
            try {
                driver.check(driver.ctx_set_current(contexts.at(i)), "cuCtxSetCurrent");
                run_all(directory, "thread" + std::to_string(i) + "_", false, bias_c, scale_c,
                        dot_c);
            } catch (std::exception const& error) {
                check(false, "thread " + std::to_string(i), error.what());
            }
        });
    }
    for (std::thread& thread : threads) {
        thread.join();
    }
    // Destroying one context leaves the other working.
    driver.check(driver.ctx_set_current(nullptr), "cuCtxSetCurrent");
    driver.check(driver.ctx_destroy(contexts[0]), "cuCtxDestroy");
    driver.check(driver.ctx_set_current(contexts[1]), "cuCtxSetCurrent");
    run_all(directory, "after_", true, bias_c, scale_c, dot_c);
    driver.check(driver.ctx_set_current(nullptr), "cuCtxSetCurrent");
    driver.check(driver.ctx_destroy(contexts[1]), "cuCtxDestroy");
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 3 && !(argc == 5 && std::string{argv[3]} == "--gpu")) {
        std::cerr << "usage: plugin_probe LIBNVINFER PLUGIN_LIBRARY [--gpu DUMP_DIR]\n";
        return 2;
    }
    std::cout << "TensorRT headers: " << NV_TENSORRT_MAJOR << '.' << NV_TENSORRT_MINOR << '.'
              << NV_TENSORRT_PATCH << '.' << NV_TENSORRT_BUILD << '\n';
    void* tensorrt = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    check(tensorrt != nullptr, std::string{"dlopen "} + argv[1], tensorrt ? "" : dlerror());
    if (tensorrt == nullptr) {
        return 1;
    }
    using RegistryFunction = nvinfer1::IPluginRegistry* (*)();
    auto get_registry = reinterpret_cast<RegistryFunction>(dlsym(tensorrt, "getPluginRegistry"));
    using VersionFunction = std::int32_t (*)();
    auto get_version = reinterpret_cast<VersionFunction>(dlsym(tensorrt, "getInferLibVersion"));
    if (get_version != nullptr) {
        std::cout << "TensorRT runtime library version: " << get_version() << '\n';
    }
    nvinfer1::IPluginRegistry* registry = get_registry != nullptr ? get_registry() : nullptr;
    check(registry != nullptr, "getPluginRegistry() answers");
    if (registry == nullptr) {
        return 1;
    }
    std::int32_t before = 0;
    registry->getAllCreators(&before);
    void* handle = registry->loadLibrary(argv[2]);
    check(handle != nullptr, "the registry loads the plugin library");
    std::int32_t after = 0;
    registry->getAllCreators(&after);
    std::cout << "registry creators: " << before << " before loading, " << after << " after\n";
    if (handle == nullptr) {
        return 1;
    }
    // The same library, as the registry loaded it: its own creator list and logger hook.
    void* library = dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD);
    using CreatorsFunction = nvinfer1::IPluginCreatorInterface* const* (*)(std::int32_t&);
    auto get_creators = reinterpret_cast<CreatorsFunction>(dlsym(library, "getCreators"));
    using FinderFunction = void (*)(nvinfer1::ILoggerFinder*);
    auto set_finder = reinterpret_cast<FinderFunction>(dlsym(library, "setLoggerFinder"));
    check(get_creators != nullptr && set_finder != nullptr,
          "the library exports getCreators and setLoggerFinder");
    if (get_creators == nullptr || set_finder == nullptr) {
        return 1;
    }
    set_finder(&finder);
    auto const* digest = static_cast<char const*>(dlsym(library, "tensoracle_bundle_sha256"));
    check(digest != nullptr && std::strlen(digest) == 64,
          "the library exports its bundle digest tensoracle_bundle_sha256 (64 hex digits)");
    if (digest == nullptr) {
        return 1;
    }
    bundle_digest = digest;
    std::int32_t count = 0;
    nvinfer1::IPluginCreatorInterface* const* own = get_creators(count);

    std::array<char const*, 3> const names{"TensoracleBiasAdd", "TensoracleScale",
                                           "TensoracleRowDot"};
    std::array<IPluginCreatorV3One*, 3> creators{};
    for (std::size_t i = 0; i < names.size(); ++i) {
        nvinfer1::IPluginCreatorInterface* found =
            registry->getCreator(names.at(i), "1", plugin_namespace);
        bool const same = found != nullptr && i < static_cast<std::size_t>(count) &&
                          found == own[i] &&
                          std::string{found->getInterfaceInfo().kind} == "PLUGIN CREATOR_V3ONE";
        check(same, std::string{"registry finds "} + names.at(i) +
                        " by name, version 1 and namespace (the library's own creator)");
        if (!same) {
            return 1;
        }
        creators.at(i) = static_cast<IPluginCreatorV3One*>(found);
    }
    check(registry->getCreator("TensoracleScale", "1", "") == nullptr &&
              registry->getCreator("TensoracleScale", "2", plugin_namespace) == nullptr,
          "no creator under another namespace or version");
    PluginFieldCollection const* declared = creators[1]->getFieldNames();
    check(declared != nullptr && declared->nbFields == 2 &&
              std::string{declared->fields[0].name} == "bundle_sha256" &&
              declared->fields[0].type == PluginFieldType::kCHAR &&
              declared->fields[0].length == 64 &&
              std::string{declared->fields[1].name} == "alpha" &&
              declared->fields[1].type == PluginFieldType::kFLOAT32 &&
              declared->fields[1].length == 1,
          "TensoracleScale declares the fields bundle_sha256 (CHAR x 64) and alpha (FLOAT32 x 1)");

    check_build_interfaces(creators[1], creators[2], creators[0]);
    check_bad_fields(creators[1], creators[2]);
    if (argc == 5) {
        try {
            check_gpu(argv[4], creators[0], creators[1], creators[2]);
        } catch (std::exception const& error) {
            check(false, "GPU run", error.what());
        }
    }
    registry->deregisterLibrary(handle);
    if (failures == 0) {
        std::cout << "all checks passed\n";
    } else {
        std::cout << failures << " checks failed\n";
    }
    return failures == 0 ? 0 : 1;
}
