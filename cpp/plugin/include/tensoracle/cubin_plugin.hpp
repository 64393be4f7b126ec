// tensoracle's cubin plugin SDK (C++17): owned plugin fields, a TensorRT IPluginV3 base class for
// single-output plugins with a fixed type/format declaration, and the kernel images a generated
// bundle.cpp embeds, with a launcher that loads each image once per CUDA context.
//
// The SDK is this header and src/cubin_plugin.cpp, compiled into the plugin library together with
// the plugin's own sources and the bundle's bundle.cpp (see tensoracle_add_cubin_plugin). It
// exports no symbol itself; the plugin exports getCreators (and usually setLoggerFinder, which can
// forward to set_logger_finder below). Calls TensorRT makes are noexcept: a refused call reports
// why (plugin, tensor or field, the value given and the value expected) through the error
// recorder TensorRT attached, else TensorRT's logger, else standard error, and returns TensorRT's
// failure value.
#pragma once

#include "NvInfer.h"

#include <cstddef>
#include <cstdint>
#include <cuda.h>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace tensoracle::cubin {

// --- fields ----------------------------------------------------------------------------------

// One plugin field with its values copied: `length` elements of `type`, `bytes` holding
// length × element size bytes.
struct FieldValue {
    std::string name;
    nvinfer1::PluginFieldType type;
    std::int32_t length;
    std::vector<std::uint8_t> bytes;
};

struct FieldRule;

// The fields of one plugin, in the order TensorRT gave them, owning every name and value.
class Fields {
public:
    // Copies `source` into `result` and returns true; returns false (leaving `result` as it was)
    // for a malformed collection or an unsupported field type. Supported: kFLOAT32, kINT32,
    // kFLOAT16, kINT16, kINT8, kCHAR.
    static bool parse(nvinfer1::PluginFieldCollection const* source, Fields& result) noexcept;

    Fields() = default;
    Fields(Fields const& other);
    Fields& operator=(Fields const& other);
    Fields(Fields&& other) noexcept;
    Fields& operator=(Fields&& other) noexcept;
    ~Fields() = default;

    // The first field called `name`, or nullptr.
    FieldValue const* find(char const* name) const noexcept;
    std::vector<FieldValue> const& values() const noexcept { return values_; }
    // A view of these fields for TensorRT (getFieldsToSerialize); valid until this object is
    // changed, moved from or destroyed.
    nvinfer1::PluginFieldCollection const* collection() noexcept;

private:
    // check_fields parses once and reports why a collection was refused.
    friend bool check_fields(char const* plugin_name, nvinfer1::PluginFieldCollection const* source,
                             FieldRule const* rules, std::size_t rule_count,
                             Fields& result) noexcept;

    void point_collection_here();

    std::vector<FieldValue> values_;
    std::vector<nvinfer1::PluginField> view_;
    nvinfer1::PluginFieldCollection collection_{0, nullptr};
};

// What a creator expects of one field, for check_fields: its name, type and element count
// (kAnyLength: one or more).
struct FieldRule {
    static constexpr std::int32_t kAnyLength = -1;
    char const* name;
    nvinfer1::PluginFieldType type;
    std::int32_t length;
};

// For creators: parses `source` and checks it against `rules` (every rule's field present once,
// with that type and length; no other field). On success stores the fields in `result` and
// returns true; otherwise reports a message naming `plugin_name`, the field, what was given and
// what was expected (see report_error) and returns false.
bool check_fields(char const* plugin_name, nvinfer1::PluginFieldCollection const* source,
                  FieldRule const* rules, std::size_t rule_count, Fields& result) noexcept;

// --- error reporting -------------------------------------------------------------------------

// Remembers TensorRT's logger finder; a plugin's exported setLoggerFinder forwards here.
void set_logger_finder(nvinfer1::ILoggerFinder* finder) noexcept;

// Reports an error: to `recorder` when non-null, else to TensorRT's logger (set_logger_finder),
// else to standard error.
void report_error(nvinfer1::IErrorRecorder* recorder, char const* message) noexcept;

// --- tensors and the plugin base -------------------------------------------------------------

struct TensorSpec {
    nvinfer1::DataType type{nvinfer1::DataType::kFLOAT};
    nvinfer1::TensorFormat format{nvinfer1::TensorFormat::kLINEAR};
};

// The declared inputs (network order), the single output, and the input whose dimensions the
// output takes.
struct PluginIO {
    std::vector<TensorSpec> inputs{TensorSpec{}};
    TensorSpec output{};
    std::int32_t shape_input_index{0};
};

// The IPluginV3 lifecycle of a one-output plugin. `name` and `plugin_namespace` are kept as
// pointers (give static strings); `fields` and `io` are copied. A derived plugin implements
// clone(), enqueue() and validate_shape().
class PluginBase : public nvinfer1::IPluginV3,
                   public nvinfer1::IPluginV3OneCore,
                   public nvinfer1::IPluginV3OneBuild,
                   public nvinfer1::IPluginV3OneRuntime {
public:
    // Throws std::invalid_argument for no inputs, too many inputs, or a shape_input_index that
    // is not an input.
    PluginBase(char const* name, char const* plugin_namespace, Fields fields, PluginIO io = {});
    ~PluginBase() noexcept override = default;

    // IPluginV3
    nvinfer1::IPluginCapability*
    getCapabilityInterface(nvinfer1::PluginCapabilityType type) noexcept override;

    // IPluginV3OneCore
    char const* getPluginName() const noexcept override;
    char const* getPluginVersion() const noexcept override;
    char const* getPluginNamespace() const noexcept override;

    // IPluginV3OneBuild
    std::int32_t getNbOutputs() const noexcept override;
    bool supportsFormatCombination(std::int32_t position,
                                   nvinfer1::DynamicPluginTensorDesc const* in_out,
                                   std::int32_t input_count,
                                   std::int32_t output_count) noexcept override;
    std::int32_t getOutputDataTypes(nvinfer1::DataType* output_types, std::int32_t output_count,
                                    nvinfer1::DataType const* input_types,
                                    std::int32_t input_count) const noexcept override;
    std::int32_t getOutputShapes(nvinfer1::DimsExprs const* inputs, std::int32_t input_count,
                                 nvinfer1::DimsExprs const* shape_inputs,
                                 std::int32_t shape_input_count, nvinfer1::DimsExprs* outputs,
                                 std::int32_t output_count,
                                 nvinfer1::IExprBuilder& builder) noexcept override;
    std::int32_t configurePlugin(nvinfer1::DynamicPluginTensorDesc const* inputs,
                                 std::int32_t input_count,
                                 nvinfer1::DynamicPluginTensorDesc const* outputs,
                                 std::int32_t output_count) noexcept override;
    std::size_t getWorkspaceSize(nvinfer1::DynamicPluginTensorDesc const* inputs,
                                 std::int32_t input_count,
                                 nvinfer1::DynamicPluginTensorDesc const* outputs,
                                 std::int32_t output_count) const noexcept override;
    char const* getTimingCacheID() noexcept override;
    char const* getMetadataString() noexcept override;

    // IPluginV3OneRuntime
    std::int32_t onShapeChange(nvinfer1::PluginTensorDesc const* inputs, std::int32_t input_count,
                               nvinfer1::PluginTensorDesc const* outputs,
                               std::int32_t output_count) noexcept override;
    nvinfer1::IPluginV3*
    attachToContext(nvinfer1::IPluginResourceContext* context) noexcept override;
    nvinfer1::PluginFieldCollection const* getFieldsToSerialize() noexcept override;

protected:
    Fields const& fields() const noexcept { return fields_; }
    PluginIO const& io() const noexcept { return io_; }
    // The recorder of the execution context this plugin was attached to, or nullptr.
    nvinfer1::IErrorRecorder* error_recorder() const noexcept { return recorder_; }
    // Reports `message`, prefixed with the plugin's name, through error_recorder() (else the
    // logger, else standard error).
    void report(std::string const& message) const noexcept;

    // 0 accepts the dimensions of every input (declaration order) and of the output; called by
    // configurePlugin (dimensions may be -1) and onShapeChange. `inputs` is valid during the call.
    virtual std::int32_t validate_shape(nvinfer1::Dims const* inputs, std::int32_t input_count,
                                        nvinfer1::Dims const& output) const noexcept = 0;

private:
    template <typename Desc>
    std::int32_t check_and_validate(char const* call, Desc const* inputs, std::int32_t input_count,
                                    Desc const* outputs, std::int32_t output_count) const noexcept;
    bool counts_match(char const* call, std::int32_t input_count,
                      std::int32_t output_count) const noexcept;

    char const* name_;
    char const* namespace_;
    Fields fields_;
    PluginIO io_;
    nvinfer1::IErrorRecorder* recorder_{nullptr};
};

// --- kernel images and launching -------------------------------------------------------------

enum class ArgumentKind : std::uint8_t { kPointer, kInt32, kFloat32 };

struct ArgumentRule {
    ArgumentKind kind;
    std::uint32_t divisible_by;
};

// One embedded cubin as bundle.cpp describes it. An aggregate: bundle.cpp initialises it in this
// field order.
struct KernelImage {
    unsigned char const* bytes;
    std::size_t size;
    char const* sha256;
    char const* entry_symbol;
    std::int32_t target_sm;
    std::int32_t registers_per_thread;
    std::int32_t dynamic_shared_bytes;
    std::int32_t global_scratch_bytes;
    std::int32_t profile_scratch_bytes;
    std::size_t public_argument_count;
    ArgumentRule const* argument_rules;
};

// The image with id "sm<SM>.<name>", or nullptr. Defined by the bundle's bundle.cpp.
KernelImage const* find_bundle_image(char const* id) noexcept;

// The SHA-256 of `size` bytes as 64 lowercase hex digits.
std::string sha256(void const* bytes, std::size_t size);

// Launches one kernel image, loading it once per CUDA context (on first use in that context).
class Kernel {
public:
    explicit Kernel(KernelImage image) noexcept;
    Kernel(Kernel const&) = delete;
    Kernel& operator=(Kernel const&) = delete;
    Kernel(Kernel&&) = delete;
    Kernel& operator=(Kernel&&) = delete;
    ~Kernel() noexcept;

    // Whether the arguments (each a pointer to the value) satisfy the image's argument rules.
    // Makes no CUDA call.
    bool accepts(void* const* arguments, std::size_t argument_count) const noexcept;
    // Enqueues the kernel on `stream` in the current context; returns the first error.
    CUresult launch(unsigned int grid, unsigned int block, void** arguments,
                    std::size_t argument_count, CUstream stream) noexcept;

private:
    struct Loaded {
        CUcontext context;
        CUmodule module;
        CUfunction function;
    };
    CUresult load(CUcontext context, CUfunction& function) noexcept;

    KernelImage image_;
    std::mutex mutex_;
    bool digest_checked_{false};
    std::map<unsigned long long, Loaded> loaded_; // by context id
};

// Bytes copied to device memory once per CUDA context, on first use there.
class DeviceBytes {
public:
    explicit DeviceBytes(std::vector<std::uint8_t> bytes);
    DeviceBytes(DeviceBytes const&) = delete;
    DeviceBytes& operator=(DeviceBytes const&) = delete;
    DeviceBytes(DeviceBytes&&) = delete;
    DeviceBytes& operator=(DeviceBytes&&) = delete;
    ~DeviceBytes() noexcept;

    // Sets `pointer` to this context's copy, making it first if needed.
    CUresult for_current_context(CUdeviceptr& pointer) noexcept;

private:
    std::vector<std::uint8_t> bytes_;
    std::mutex mutex_;
    std::map<unsigned long long, std::pair<CUcontext, CUdeviceptr>> copies_; // by context id
};

} // namespace tensoracle::cubin
