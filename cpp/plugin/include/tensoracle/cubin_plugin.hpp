// The common part of a cubin plugin for TensorRT: typed fields, the IPluginV3 lifecycle and the
// tensor declaration, on top of the cubin runtime (cubin_runtime.hpp) that loads and launches
// the bundle compiled into the same library.
//
// A model package derives one class from PluginBase per plugin, implements execute() (and, where
// needed, validate_shape() or the V3 methods the declaration cannot express), and lists one
// PluginCreator per plugin in its exported getCreators(). Everything TensorRT calls is noexcept:
// a failure is reported through TensorRT's logger (and the error recorder of the context, when
// TensorRT attached one) with a message naming the plugin, the field or tensor, the value and what
// was expected; the call then returns TensorRT's failure value and the process carries on.
//
// The library links no TensorRT library: TensorRT reaches it through the interfaces it passes in,
// so the same plugin loads into the full, the lean and the dispatch runtime. The CUDA driver is
// loaded when the first kernel launches, so creators register on machines without a GPU.
#pragma once

#include "tensoracle/cubin_runtime.hpp"

#include <NvInferRuntime.h>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// Marks getCreators (and the SDK's setLoggerFinder) as the library's only exported symbols.
#define TENSORACLE_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))

namespace tensoracle::cubin {

// One tensor's data type and storage format, as TensorRT negotiates them.
struct TensorSpec {
    nvinfer1::DataType type = nvinfer1::DataType::kFLOAT;
    nvinfer1::TensorFormat format = nvinfer1::TensorFormat::kLINEAR;
};

// The plugin's inputs in network order, its single output, and the input whose shape the output
// copies. The default is one fp32 / LINEAR input and output shaped like input 0.
struct PluginIO {
    std::vector<TensorSpec> inputs{TensorSpec{}};
    TensorSpec output{};
    std::int32_t shape_input_index = 0;
};

// A creator's declaration of one field: its name, TensorRT type and number of values
// (any_length: one or more).
struct FieldSpec {
    static constexpr std::int32_t any_length = -1;
    std::string name;
    nvinfer1::PluginFieldType type;
    std::int32_t length = 1;
};

// One typed field value, owning its bytes.
class Field {
public:
    Field(std::string name, nvinfer1::PluginFieldType type, std::int32_t length,
          std::span<std::byte const> bytes);

    static Field f32(std::string name, std::vector<float> const& values);
    static Field f64(std::string name, std::vector<double> const& values);
    static Field i32(std::string name, std::vector<std::int32_t> const& values);
    static Field i64(std::string name, std::vector<std::int64_t> const& values);
    static Field text(std::string name, std::string_view value);

    std::string const& name() const noexcept { return name_; }
    nvinfer1::PluginFieldType type() const noexcept { return type_; }
    std::int32_t length() const noexcept { return length_; }
    std::span<std::byte const> bytes() const noexcept { return bytes_; }

    // The values read as T; throws InvalidArgument unless T matches the field's type.
    template <typename T>
    std::vector<T> values() const;

private:
    std::string name_;
    nvinfer1::PluginFieldType type_;
    std::int32_t length_;
    std::vector<std::byte> bytes_;
};

// The fields of one plugin, in the order they were given.
class Fields {
public:
    Fields() = default;
    explicit Fields(std::vector<Field> fields) : fields_(std::move(fields)) {}

    std::vector<Field> const& all() const noexcept { return fields_; }
    // The field called `name`; throws InvalidArgument naming it when absent.
    Field const& get(std::string_view name) const;
    // The single fp32 / i32 value of a field declared with length 1.
    float f32(std::string_view name) const;
    std::int32_t i32(std::string_view name) const;

private:
    std::vector<Field> fields_;
};

// The name TensorRT uses for a field type ("FLOAT32", "INT32", ...), for messages.
char const* field_type_name(nvinfer1::PluginFieldType type) noexcept;
// A TensorRT data type and format as text ("FLOAT", "LINEAR"), for messages.
char const* data_type_name(nvinfer1::DataType type) noexcept;
char const* format_name(nvinfer1::TensorFormat format) noexcept;
// "[2, -1, 8]"
std::string dims_text(nvinfer1::Dims const& dims);

// Sends `message` to TensorRT's logger (found through setLoggerFinder) at `severity`, or to
// standard error when TensorRT gave the library no logger.
void log_message(nvinfer1::ILogger::Severity severity, std::string const& message) noexcept;

class PluginBase : public nvinfer1::IPluginV3,
                   public nvinfer1::IPluginV3OneCore,
                   public nvinfer1::IPluginV3OneBuild,
                   public nvinfer1::IPluginV3OneRuntime {
public:
    // Throws std::invalid_argument for an empty input list or a shape_input_index outside it.
    PluginBase(std::string name, std::string plugin_namespace, Fields fields,
               PluginIO io = PluginIO{});
    ~PluginBase() override = default;
    PluginBase& operator=(PluginBase const&) = delete;

    Fields const& fields() const noexcept { return fields_; }
    PluginIO const& io() const noexcept { return io_; }

    // IPluginV3
    nvinfer1::IPluginCapability*
    getCapabilityInterface(nvinfer1::PluginCapabilityType type) noexcept override;
    nvinfer1::IPluginV3* clone() noexcept override;

    // IPluginV3OneCore
    char const* getPluginName() const noexcept override { return name_.c_str(); }
    char const* getPluginVersion() const noexcept override { return "1"; }
    char const* getPluginNamespace() const noexcept override { return namespace_.c_str(); }

    // IPluginV3OneBuild
    std::int32_t getNbOutputs() const noexcept override { return 1; }
    bool supportsFormatCombination(std::int32_t pos, nvinfer1::DynamicPluginTensorDesc const* inOut,
                                   std::int32_t nbInputs, std::int32_t nbOutputs) noexcept override;
    std::int32_t getOutputDataTypes(nvinfer1::DataType* outputTypes, std::int32_t nbOutputs,
                                    nvinfer1::DataType const* inputTypes,
                                    std::int32_t nbInputs) const noexcept override;
    std::int32_t getOutputShapes(nvinfer1::DimsExprs const* inputs, std::int32_t nbInputs,
                                 nvinfer1::DimsExprs const* shapeInputs, std::int32_t nbShapeInputs,
                                 nvinfer1::DimsExprs* outputs, std::int32_t nbOutputs,
                                 nvinfer1::IExprBuilder& exprBuilder) noexcept override;
    std::int32_t configurePlugin(nvinfer1::DynamicPluginTensorDesc const* in, std::int32_t nbInputs,
                                 nvinfer1::DynamicPluginTensorDesc const* out,
                                 std::int32_t nbOutputs) noexcept override;

    // IPluginV3OneRuntime
    std::int32_t onShapeChange(nvinfer1::PluginTensorDesc const* in, std::int32_t nbInputs,
                               nvinfer1::PluginTensorDesc const* out,
                               std::int32_t nbOutputs) noexcept override;
    std::int32_t enqueue(nvinfer1::PluginTensorDesc const* inputDesc,
                         nvinfer1::PluginTensorDesc const* outputDesc, void const* const* inputs,
                         void* const* outputs, void* workspace,
                         cudaStream_t stream) noexcept override;
    nvinfer1::IPluginV3*
    attachToContext(nvinfer1::IPluginResourceContext* context) noexcept override;
    nvinfer1::PluginFieldCollection const* getFieldsToSerialize() noexcept override;

protected:
    PluginBase(PluginBase const& other);

    // A copy of the derived plugin (for clone and attachToContext).
    virtual std::unique_ptr<PluginBase> copy() const = 0;
    // Checks the dimensions of every input (declaration order) and of the output. Called by
    // configurePlugin, where dimensions may be -1 (not known yet), and by onShapeChange.
    virtual bool validate_shape(nvinfer1::Dims const* inputs, std::int32_t input_count,
                                nvinfer1::Dims const& output) const noexcept;
    // Runs the plugin on TensorRT's stream. Throw to fail the enqueue; the message is reported.
    virtual void execute(nvinfer1::PluginTensorDesc const* input_desc,
                         nvinfer1::PluginTensorDesc const& output_desc, void const* const* inputs,
                         void* const* outputs, cuda::Stream stream) = 0;

    // The bundle's kernel variant `name` (see CubinRuntime::kernel).
    Kernel const& kernel(std::string_view name) const;
    CubinRuntime& runtime() const noexcept { return *runtime_; }

    // Reports `message` as an error of this plugin (prefixed with its name).
    void report(std::string const& message) const noexcept;

private:
    // Checks tensor counts, types and formats against io_; reports and returns false otherwise.
    template <typename Desc>
    bool check_tensors(char const* call, Desc const* in, std::int32_t nbInputs, Desc const* out,
                       std::int32_t nbOutputs) const noexcept;
    bool check_count(char const* call, std::int32_t nbInputs,
                     std::int32_t nbOutputs) const noexcept;

    std::string name_;
    std::string namespace_;
    Fields fields_;
    PluginIO io_;
    std::shared_ptr<CubinRuntime> runtime_;
    nvinfer1::IErrorRecorder* recorder_ = nullptr;
    std::vector<nvinfer1::PluginField> serialized_;
    nvinfer1::PluginFieldCollection collection_{};
};

// A creator for one plugin: declares its fields, checks the fields TensorRT passes against them
// (unknown, missing, repeated, wrong type or count are refused with a message naming the plugin,
// the field, what was given and what was expected) and calls `make` with the checked fields.
class PluginCreator : public nvinfer1::IPluginCreatorV3One {
public:
    using Factory = std::function<std::unique_ptr<PluginBase>(Fields)>;

    PluginCreator(std::string name, std::string version, std::string plugin_namespace,
                  std::vector<FieldSpec> fields, Factory make);

    nvinfer1::IPluginV3* createPlugin(char const* name, nvinfer1::PluginFieldCollection const* fc,
                                      nvinfer1::TensorRTPhase phase) noexcept override;
    nvinfer1::PluginFieldCollection const* getFieldNames() noexcept override { return &names_; }
    char const* getPluginName() const noexcept override { return name_.c_str(); }
    char const* getPluginVersion() const noexcept override { return version_.c_str(); }
    char const* getPluginNamespace() const noexcept override { return namespace_.c_str(); }

    // The checked fields, in the order given; throws InvalidArgument with the reason otherwise.
    Fields parse(nvinfer1::PluginFieldCollection const* fc) const;

private:
    std::string name_;
    std::string version_;
    std::string namespace_;
    std::vector<FieldSpec> specs_;
    Factory make_;
    std::vector<nvinfer1::PluginField> declared_;
    nvinfer1::PluginFieldCollection names_{};
};

// The number of elements of `dims`; throws InvalidArgument for a negative dimension.
std::int64_t volume(nvinfer1::Dims const& dims);
// `value` as an i32 kernel argument; throws InvalidArgument naming `what` when it does not fit.
ArgValue i32_arg(std::int64_t value, std::string_view what);

} // namespace tensoracle::cubin
