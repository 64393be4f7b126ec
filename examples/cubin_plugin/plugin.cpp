// The example model package's TensorRT plugins, on tensoracle's cubin plugin SDK:
//   TensoracleBiasAdd  out[..., c] = x[..., c] + bias[c]   field bias (FLOAT32 x C)
//   TensoracleScale    out = alpha * x                      field alpha (FLOAT32 x 1)
//   TensoracleRowDot   out[...] = sum_k a[..., k] * b[..., k]   inputs a, b (..., K)
// All tensors are fp32 / LINEAR. Every plugin also takes the field bundle_sha256 (CHAR x 64),
// which must equal the digest of the bundle compiled into this library, so an engine serialized
// with plugins of another bundle is refused when it is deserialized.
//
// What the plugin decides (the SDK does the rest): which image of the bundle runs on the current
// device, the launch sizes, the weights' place on the device (the bias, through DeviceBytes),
// and the row dot's variant: the one compiled for multiples of 16 when Kernel::accepts says its
// promise holds, the general one otherwise.
#include "tensoracle/cubin_plugin.hpp"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>
#include <vector>

#if defined(_WIN32)
#define TENSORACLE_EXPORT __declspec(dllexport)
#else
#define TENSORACLE_EXPORT __attribute__((visibility("default")))
#endif

// Defined by the bundle's generated bundle.cpp.
extern "C" char const tensoracle_bundle_sha256[];

namespace {

using namespace tensoracle::cubin;
using nvinfer1::Dims;
using nvinfer1::PluginField;
using nvinfer1::PluginFieldCollection;
using nvinfer1::PluginFieldType;
using nvinfer1::PluginTensorDesc;

constexpr char const* kNamespace = "tensoracle_example";
constexpr std::int64_t kBlockElements = 256;   // BLOCK of bias_add and scale (kernels.py)
constexpr unsigned int kBlockThreads = 4 * 32; // num_warps 4, the producer's default
constexpr std::size_t kDigestLength = 64;

// TensorRT's logger finder, given to setLoggerFinder below (the SDK gets it too, for its reports).
std::atomic<nvinfer1::ILoggerFinder*> logger_finder{nullptr};

// A verbose message for TensorRT's log (which variant ran, for example).
void log_verbose(char const* message) noexcept {
    nvinfer1::ILoggerFinder* finder = logger_finder.load();
    nvinfer1::ILogger* logger = finder != nullptr ? finder->findLogger() : nullptr;
    if (logger != nullptr) {
        logger->log(nvinfer1::ILogger::Severity::kVERBOSE, message);
    }
}

// A number as text. (Not std::to_string, and below not std::make_shared: with GCC both leave a
// unique global symbol in the library, and a library exporting one can never be unloaded.)
std::string text(long long value) {
    std::array<char, 24> digits{};
    int const length = std::snprintf(digits.data(), digits.size(), "%lld", value);
    return {digits.data(), length > 0 ? static_cast<std::size_t>(length) : 0};
}

// The number of elements of `dims`, or -1 when a dimension is unknown or the count overflows.
std::int64_t element_count(Dims const& dims) {
    std::int64_t count = 1;
    for (std::int32_t i = 0; i < dims.nbDims; ++i) {
        if (dims.d[i] < 0 ||
            (dims.d[i] > 0 && count > std::numeric_limits<std::int64_t>::max() / dims.d[i])) {
            return -1;
        }
        count *= dims.d[i];
    }
    return count;
}

// Two dimension lists agree where both are known (-1 is not known yet).
bool same(Dims const& a, Dims const& b) {
    if (a.nbDims != b.nbDims) {
        return false;
    }
    for (std::int32_t i = 0; i < a.nbDims; ++i) {
        if (a.d[i] >= 0 && b.d[i] >= 0 && a.d[i] != b.d[i]) {
            return false;
        }
    }
    return true;
}

// The kernels of this library's bundle, one Kernel per image, made when first asked for and
// shared by every plugin object alive, so that each image is loaded once per CUDA context; the
// modules are unloaded with the last plugin object.
class KernelTable {
public:
    // The image `name` built for the SM of the current context's device, or nullptr with `why`.
    Kernel* for_current_device(char const* name, std::string& why) {
        CUdevice device = 0;
        int major = 0;
        int minor = 0;
        CUresult status = cuCtxGetDevice(&device);
        if (status == CUDA_SUCCESS) {
            status =
                cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
        }
        if (status == CUDA_SUCCESS) {
            status =
                cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
        }
        if (status != CUDA_SUCCESS) {
            why = "cannot read the current device's compute capability (CUresult " +
                  text(static_cast<int>(status)) + ")";
            return nullptr;
        }
        std::string const id = "sm" + text(major * 10 + minor) + "." + name;
        std::lock_guard<std::mutex> const lock(mutex_);
        auto const found = kernels_.find(id);
        if (found != kernels_.end()) {
            return found->second.get();
        }
        KernelImage const* image = find_bundle_image(id.c_str());
        if (image == nullptr) {
            why = "the bundle has no image '" + id + "' for this device (sm" +
                  text(major * 10 + minor) + ")";
            return nullptr;
        }
        return kernels_.emplace(id, std::make_unique<Kernel>(*image)).first->second.get();
    }

    static std::shared_ptr<KernelTable> shared() {
        static std::mutex mutex;
        static std::weak_ptr<KernelTable> current;
        std::lock_guard<std::mutex> const lock(mutex);
        std::shared_ptr<KernelTable> table = current.lock();
        if (!table) {
            table =
                std::shared_ptr<KernelTable>(new KernelTable()); // NOLINT(modernize-make-shared)
            current = table;
        }
        return table;
    }

private:
    std::mutex mutex_;
    std::map<std::string, std::unique_ptr<Kernel>> kernels_;
};

// What the three plugins share: the kernel table and launching one kernel with a report.
class ExamplePlugin : public PluginBase {
public:
    ExamplePlugin(char const* name, Fields fields, PluginIO io)
        : PluginBase(name, kNamespace, std::move(fields), std::move(io)),
          kernels_(KernelTable::shared()) {}

protected:
    // Launches `kernel` over `grid` blocks on `stream`; 0 on success, else reports and returns 1.
    std::int32_t launch(Kernel* kernel, unsigned int grid, void** arguments,
                        std::size_t argument_count, cudaStream_t stream) const noexcept {
        CUresult const status = kernel->launch(grid, kBlockThreads, arguments, argument_count,
                                               reinterpret_cast<CUstream>(stream));
        if (status != CUDA_SUCCESS) {
            char const* error_name = nullptr;
            if (cuGetErrorName(status, &error_name) != CUDA_SUCCESS || error_name == nullptr) {
                error_name = "unknown CUresult";
            }
            report(std::string{"enqueue failed: the kernel launch returned "} + error_name + " (" +
                   text(static_cast<int>(status)) + ")");
            return 1;
        }
        return 0;
    }

    // Whether an element count fits the kernels' 32-bit count argument; reports when it does not.
    bool fits_kernel_count(std::int64_t count) const noexcept {
        if (count >= 0 && count <= std::numeric_limits<std::int32_t>::max()) {
            return true;
        }
        try {
            report("enqueue failed: " + text(count) +
                   " elements do not fit the kernel's 32-bit count");
        } catch (...) { // NOLINT(bugprone-empty-catch): out of memory, nothing left to report with
        }
        return false;
    }

    // The image `name` for the current device, or nullptr after reporting why.
    Kernel* kernel(char const* name) const noexcept {
        try {
            std::string why;
            Kernel* found = kernels_->for_current_device(name, why);
            if (found == nullptr) {
                report("enqueue failed: " + why);
            }
            return found;
        } catch (std::exception const& error) {
            report(std::string{"enqueue failed: "} + error.what());
            return nullptr;
        }
    }

private:
    std::shared_ptr<KernelTable> kernels_;
};

// --- TensoracleBiasAdd ------------------------------------------------------------------------

std::vector<std::uint8_t> field_bytes(Fields const& fields, char const* name) {
    FieldValue const* value = fields.find(name);
    return value != nullptr ? value->bytes : std::vector<std::uint8_t>{};
}

class BiasAdd final : public ExamplePlugin {
public:
    explicit BiasAdd(Fields const& fields)
        : BiasAdd(fields, std::shared_ptr<DeviceBytes>( // NOLINT(modernize-make-shared)
                              new DeviceBytes(field_bytes(fields, "bias")))) {}

    nvinfer1::IPluginV3* clone() noexcept override {
        try {
            return new BiasAdd(fields(), bias_);
        } catch (...) {
            return nullptr;
        }
    }

    std::int32_t enqueue(PluginTensorDesc const* input_desc, PluginTensorDesc const* /*output*/,
                         void const* const* inputs, void* const* outputs, void* /*workspace*/,
                         cudaStream_t stream) noexcept override {
        std::int64_t const count = element_count(input_desc[0].dims);
        if (count == 0) {
            return 0;
        }
        if (!fits_kernel_count(count)) {
            return 1;
        }
        Kernel* bias_add = kernel("bias_add");
        CUdeviceptr bias = 0;
        if (bias_add == nullptr) {
            return 1;
        }
        CUresult const placed = bias_->for_current_context(bias);
        if (placed != CUDA_SUCCESS) {
            report("enqueue failed: cannot place the bias on the device (CUresult " +
                   text(static_cast<int>(placed)) + ")");
            return 1;
        }
        auto x = reinterpret_cast<CUdeviceptr>(inputs[0]);
        auto out = reinterpret_cast<CUdeviceptr>(outputs[0]);
        auto n = static_cast<std::int32_t>(count);
        std::int32_t columns = columns_;
        std::array<void*, 5> arguments{&x, &bias, &out, &n, &columns};
        auto const grid = static_cast<unsigned int>((count + kBlockElements - 1) / kBlockElements);
        return launch(bias_add, grid, arguments.data(), arguments.size(), stream);
    }

protected:
    std::int32_t validate_shape(Dims const* inputs, std::int32_t /*input_count*/,
                                Dims const& output) const noexcept override {
        Dims const& x = inputs[0];
        bool const columns_match =
            x.nbDims >= 1 && (x.d[x.nbDims - 1] < 0 || x.d[x.nbDims - 1] == columns_);
        return columns_match && same(x, output) ? 0 : 1;
    }

private:
    BiasAdd(Fields const& fields, std::shared_ptr<DeviceBytes> bias)
        : ExamplePlugin("TensoracleBiasAdd", fields, PluginIO{}), bias_(std::move(bias)),
          columns_(fields.find("bias")->length) {}

    std::shared_ptr<DeviceBytes> bias_; // one device copy per context, shared by the clones
    std::int32_t columns_;
};

// --- TensoracleScale --------------------------------------------------------------------------

class Scale final : public ExamplePlugin {
public:
    explicit Scale(Fields const& fields) : ExamplePlugin("TensoracleScale", fields, PluginIO{}) {
        std::memcpy(&alpha_, fields.find("alpha")->bytes.data(), sizeof(alpha_));
    }

    nvinfer1::IPluginV3* clone() noexcept override {
        try {
            return new Scale(fields());
        } catch (...) {
            return nullptr;
        }
    }

    std::int32_t enqueue(PluginTensorDesc const* input_desc, PluginTensorDesc const* /*output*/,
                         void const* const* inputs, void* const* outputs, void* /*workspace*/,
                         cudaStream_t stream) noexcept override {
        std::int64_t const count = element_count(input_desc[0].dims);
        if (count == 0) {
            return 0;
        }
        if (!fits_kernel_count(count)) {
            return 1;
        }
        Kernel* scale = kernel("scale");
        if (scale == nullptr) {
            return 1;
        }
        auto x = reinterpret_cast<CUdeviceptr>(inputs[0]);
        auto out = reinterpret_cast<CUdeviceptr>(outputs[0]);
        auto n = static_cast<std::int32_t>(count);
        float alpha = alpha_;
        std::array<void*, 4> arguments{&x, &out, &n, &alpha};
        auto const grid = static_cast<unsigned int>((count + kBlockElements - 1) / kBlockElements);
        return launch(scale, grid, arguments.data(), arguments.size(), stream);
    }

protected:
    std::int32_t validate_shape(Dims const* inputs, std::int32_t /*input_count*/,
                                Dims const& output) const noexcept override {
        return same(inputs[0], output) ? 0 : 1;
    }

private:
    float alpha_ = 0.0F;
};

// --- TensoracleRowDot -------------------------------------------------------------------------

PluginIO two_inputs() {
    PluginIO io;
    io.inputs = {TensorSpec{}, TensorSpec{}};
    return io;
}

class RowDot final : public ExamplePlugin {
public:
    explicit RowDot(Fields const& fields)
        : ExamplePlugin("TensoracleRowDot", fields, two_inputs()) {}

    nvinfer1::IPluginV3* clone() noexcept override {
        try {
            return new RowDot(fields());
        } catch (...) {
            return nullptr;
        }
    }

    // The output drops the last dimension, which PluginIO's shape rule cannot express.
    std::int32_t getOutputShapes(nvinfer1::DimsExprs const* inputs, std::int32_t input_count,
                                 nvinfer1::DimsExprs const* /*shape_inputs*/,
                                 std::int32_t shape_input_count, nvinfer1::DimsExprs* outputs,
                                 std::int32_t output_count,
                                 nvinfer1::IExprBuilder& /*builder*/) noexcept override {
        if (inputs == nullptr || outputs == nullptr || input_count != 2 || output_count != 1 ||
            shape_input_count != 0 || inputs[0].nbDims < 2) {
            report("getOutputShapes needs two inputs of rank 2 or more and one output");
            return -1;
        }
        outputs[0].nbDims = inputs[0].nbDims - 1;
        for (std::int32_t i = 0; i < outputs[0].nbDims; ++i) {
            outputs[0].d[i] = inputs[0].d[i];
        }
        return 0;
    }

    std::int32_t enqueue(PluginTensorDesc const* input_desc, PluginTensorDesc const* /*output*/,
                         void const* const* inputs, void* const* outputs, void* /*workspace*/,
                         cudaStream_t stream) noexcept override {
        Dims const& a = input_desc[0].dims;
        std::int64_t const k = a.d[a.nbDims - 1];
        std::int64_t const count = element_count(a);
        std::int64_t const rows = k == 0 ? 0 : count / k;
        if (rows == 0) {
            return 0;
        }
        if (count < 0 || k > std::numeric_limits<std::int32_t>::max() ||
            rows > std::numeric_limits<std::int32_t>::max()) {
            report("enqueue failed: " + text(rows) + " rows of " + text(k) +
                   " values do not fit the kernel's 32-bit sizes");
            return 1;
        }
        auto a_ptr = reinterpret_cast<CUdeviceptr>(inputs[0]);
        auto b_ptr = reinterpret_cast<CUdeviceptr>(inputs[1]);
        auto out = reinterpret_cast<CUdeviceptr>(outputs[0]);
        auto length = static_cast<std::int32_t>(k);
        std::array<void*, 4> arguments{&a_ptr, &b_ptr, &out, &length};
        Kernel* specialised = kernel("row_dot_div16");
        if (specialised == nullptr) {
            return 1;
        }
        bool const promise_holds = specialised->accepts(arguments.data(), arguments.size());
        Kernel* chosen = promise_holds ? specialised : kernel("row_dot");
        if (chosen == nullptr) {
            return 1;
        }
        log_verbose(promise_holds ? "TensoracleRowDot launches row_dot_div16"
                                  : "TensoracleRowDot launches row_dot");
        return launch(chosen, static_cast<unsigned int>(rows), arguments.data(), arguments.size(),
                      stream);
    }

protected:
    std::int32_t validate_shape(Dims const* inputs, std::int32_t /*input_count*/,
                                Dims const& output) const noexcept override {
        Dims const& a = inputs[0];
        if (a.nbDims < 2 || !same(a, inputs[1]) || output.nbDims != a.nbDims - 1) {
            return 1;
        }
        for (std::int32_t i = 0; i < output.nbDims; ++i) {
            if (a.d[i] >= 0 && output.d[i] >= 0 && a.d[i] != output.d[i]) {
                return 1;
            }
        }
        return 0;
    }
};

// --- creators ---------------------------------------------------------------------------------

// Every plugin's first field: the digest of the bundle its engine was built with.
constexpr FieldRule kDigestRule{"bundle_sha256", PluginFieldType::kCHAR,
                                static_cast<std::int32_t>(kDigestLength)};

void report_creator_error(char const* plugin, std::string const& message) noexcept {
    try {
        report_error(nullptr, (std::string{"plugin '"} + plugin + "': " + message).c_str());
    } catch (...) { // NOLINT(bugprone-empty-catch): out of memory, nothing left to report with
    }
}

// The creator of `Plugin`: its fields are bundle_sha256 and then `rules`, checked by the SDK's
// check_fields (unknown, missing, repeated, wrong type or count), and the digest must be this
// library's.
template <typename Plugin>
class Creator final : public nvinfer1::IPluginCreatorV3One {
public:
    Creator(char const* name, std::vector<FieldRule> rules)
        : name_(name), rules_(std::move(rules)) {
        rules_.insert(rules_.begin(), kDigestRule);
        for (FieldRule const& rule : rules_) {
            declared_.emplace_back(rule.name, nullptr, rule.type, rule.length);
        }
        names_.nbFields = static_cast<std::int32_t>(declared_.size());
        names_.fields = declared_.data();
    }

    nvinfer1::IPluginV3* createPlugin(char const* /*name*/, PluginFieldCollection const* fc,
                                      nvinfer1::TensorRTPhase /*phase*/) noexcept override {
        Fields fields;
        if (!check_fields(name_, fc, rules_.data(), rules_.size(), fields)) {
            return nullptr;
        }
        try {
            std::vector<std::uint8_t> const& digest = fields.find(kDigestRule.name)->bytes;
            if (std::memcmp(digest.data(), tensoracle_bundle_sha256, kDigestLength) != 0) {
                report_creator_error(name_,
                                     "field 'bundle_sha256' is '" +
                                         std::string(digest.begin(), digest.end()) +
                                         "', expected the digest of this library's bundle '" +
                                         std::string{tensoracle_bundle_sha256} +
                                         "' (the engine was built with plugins of another bundle)");
                return nullptr;
            }
            return new Plugin(fields); // NOLINT(cppcoreguidelines-owning-memory): TensorRT owns it
        } catch (std::exception const& error) {
            report_creator_error(name_, std::string{"cannot create the plugin: "} + error.what());
            return nullptr;
        }
    }

    PluginFieldCollection const* getFieldNames() noexcept override { return &names_; }
    char const* getPluginName() const noexcept override { return name_; }
    char const* getPluginVersion() const noexcept override { return "1"; }
    char const* getPluginNamespace() const noexcept override { return kNamespace; }

private:
    char const* name_;
    std::vector<FieldRule> rules_;
    std::vector<PluginField> declared_;
    PluginFieldCollection names_{};
};

// The creators are made on the first getCreators call, not at load time, so that a failure
// (out of memory) is reported to TensorRT instead of ending the process while it loads us.
std::array<nvinfer1::IPluginCreatorInterface*, 3> const& creators() {
    static Creator<BiasAdd> bias{"TensoracleBiasAdd",
                                 {{"bias", PluginFieldType::kFLOAT32, FieldRule::kAnyLength}}};
    static Creator<Scale> scale{"TensoracleScale", {{"alpha", PluginFieldType::kFLOAT32, 1}}};
    static Creator<RowDot> row_dot{"TensoracleRowDot", {}};
    static std::array<nvinfer1::IPluginCreatorInterface*, 3> const all{&bias, &scale, &row_dot};
    return all;
}

} // namespace

extern "C" TENSORACLE_EXPORT nvinfer1::IPluginCreatorInterface* const*
getCreators(std::int32_t& count) noexcept {
    try {
        auto const& all = creators();
        count = static_cast<std::int32_t>(all.size());
        return all.data();
    } catch (std::exception const& error) {
        report_creator_error("tensoracle_example",
                             std::string{"cannot create the plugin creators: "} + error.what());
        count = 0;
        return nullptr;
    }
}

extern "C" TENSORACLE_EXPORT void setLoggerFinder(nvinfer1::ILoggerFinder* finder) noexcept {
    logger_finder.store(finder);
    set_logger_finder(finder);
}
