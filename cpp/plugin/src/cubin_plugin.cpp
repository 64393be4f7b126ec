// The common plugin implementation: fields, tensor checks, the V3 lifecycle and error reporting.
#include "tensoracle/cubin_plugin.hpp"

#include "tensoracle/errors.hpp"

#include <atomic>
#include <cstring>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

namespace tensoracle::cubin {
namespace {

using nvinfer1::PluginFieldType;

std::atomic<nvinfer1::ILoggerFinder*> logger_finder{nullptr};

// The runtime of the bundle compiled into this library, shared by every plugin object alive so
// that each kernel is loaded once per CUDA context; released with the last plugin.
std::shared_ptr<CubinRuntime> shared_runtime() {
    static std::mutex mutex;
    static std::weak_ptr<CubinRuntime> current;
    std::lock_guard const lock(mutex);
    std::shared_ptr<CubinRuntime> runtime = current.lock();
    if (!runtime) {
        runtime = std::make_shared<CubinRuntime>(embedded_bundle());
        current = runtime;
    }
    return runtime;
}

std::size_t element_size(PluginFieldType type) {
    switch (type) {
    case PluginFieldType::kINT8:
    case PluginFieldType::kCHAR:
    case PluginFieldType::kFP8:
        return 1;
    case PluginFieldType::kFLOAT16:
    case PluginFieldType::kBF16:
    case PluginFieldType::kINT16:
        return 2;
    case PluginFieldType::kFLOAT32:
    case PluginFieldType::kINT32:
        return 4;
    case PluginFieldType::kFLOAT64:
    case PluginFieldType::kINT64:
        return 8;
    case PluginFieldType::kDIMS:
        return sizeof(nvinfer1::Dims);
    default:
        return 0; // kUNKNOWN and the packed 4-bit types are not supported as fields
    }
}

template <typename T>
constexpr PluginFieldType field_type_of() {
    if constexpr (std::is_same_v<T, float>) {
        return PluginFieldType::kFLOAT32;
    } else if constexpr (std::is_same_v<T, double>) {
        return PluginFieldType::kFLOAT64;
    } else if constexpr (std::is_same_v<T, std::int32_t>) {
        return PluginFieldType::kINT32;
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
        return PluginFieldType::kINT64;
    } else if constexpr (std::is_same_v<T, char>) {
        return PluginFieldType::kCHAR;
    } else {
        static_assert(std::is_same_v<T, nvinfer1::Dims>);
        return PluginFieldType::kDIMS;
    }
}

template <typename T>
Field make_field(std::string name, std::span<T const> values) {
    return Field{std::move(name), field_type_of<T>(), static_cast<std::int32_t>(values.size()),
                 std::as_bytes(values)};
}

std::string length_text(std::int32_t length) {
    return length == FieldSpec::any_length ? std::string{"one or more"} : std::to_string(length);
}

} // namespace

// --- fields ----------------------------------------------------------------------------------

Field::Field(std::string name, nvinfer1::PluginFieldType type, std::int32_t length,
             std::span<std::byte const> bytes)
    : name_(std::move(name)), type_(type), length_(length), bytes_(bytes.begin(), bytes.end()) {}

Field Field::f32(std::string name, std::vector<float> const& values) {
    return make_field<float>(std::move(name), values);
}
Field Field::f64(std::string name, std::vector<double> const& values) {
    return make_field<double>(std::move(name), values);
}
Field Field::i32(std::string name, std::vector<std::int32_t> const& values) {
    return make_field<std::int32_t>(std::move(name), values);
}
Field Field::i64(std::string name, std::vector<std::int64_t> const& values) {
    return make_field<std::int64_t>(std::move(name), values);
}
Field Field::text(std::string name, std::string_view value) {
    return make_field<char>(std::move(name), std::span<char const>{value.data(), value.size()});
}

template <typename T>
std::vector<T> Field::values() const {
    if (type_ != field_type_of<T>()) {
        throw InvalidArgument("field '" + name_ + "' holds " + field_type_name(type_) +
                              " values, read as " + field_type_name(field_type_of<T>()));
    }
    std::vector<T> values(bytes_.size() / sizeof(T));
    std::memcpy(values.data(), bytes_.data(), values.size() * sizeof(T));
    return values;
}
template std::vector<float> Field::values<float>() const;
template std::vector<double> Field::values<double>() const;
template std::vector<std::int32_t> Field::values<std::int32_t>() const;
template std::vector<std::int64_t> Field::values<std::int64_t>() const;
template std::vector<char> Field::values<char>() const;
template std::vector<nvinfer1::Dims> Field::values<nvinfer1::Dims>() const;

Field const& Fields::get(std::string_view name) const {
    for (Field const& field : fields_) {
        if (field.name() == name) {
            return field;
        }
    }
    throw InvalidArgument("no field '" + std::string{name} + "'");
}

float Fields::f32(std::string_view name) const {
    return get(name).values<float>().at(0);
}

std::int32_t Fields::i32(std::string_view name) const {
    return get(name).values<std::int32_t>().at(0);
}

char const* field_type_name(nvinfer1::PluginFieldType type) noexcept {
    switch (type) {
    case PluginFieldType::kFLOAT16:
        return "FLOAT16";
    case PluginFieldType::kFLOAT32:
        return "FLOAT32";
    case PluginFieldType::kFLOAT64:
        return "FLOAT64";
    case PluginFieldType::kINT8:
        return "INT8";
    case PluginFieldType::kINT16:
        return "INT16";
    case PluginFieldType::kINT32:
        return "INT32";
    case PluginFieldType::kCHAR:
        return "CHAR";
    case PluginFieldType::kDIMS:
        return "DIMS";
    case PluginFieldType::kBF16:
        return "BF16";
    case PluginFieldType::kINT64:
        return "INT64";
    case PluginFieldType::kFP8:
        return "FP8";
    case PluginFieldType::kINT4:
        return "INT4";
    case PluginFieldType::kFP4:
        return "FP4";
    default:
        return "UNKNOWN";
    }
}

char const* data_type_name(nvinfer1::DataType type) noexcept {
    using nvinfer1::DataType;
    switch (type) {
    case DataType::kFLOAT:
        return "FLOAT";
    case DataType::kHALF:
        return "HALF";
    case DataType::kINT8:
        return "INT8";
    case DataType::kINT32:
        return "INT32";
    case DataType::kBOOL:
        return "BOOL";
    case DataType::kUINT8:
        return "UINT8";
    case DataType::kFP8:
        return "FP8";
    case DataType::kBF16:
        return "BF16";
    case DataType::kINT64:
        return "INT64";
    case DataType::kINT4:
        return "INT4";
    case DataType::kFP4:
        return "FP4";
    default:
        return "UNKNOWN";
    }
}

char const* format_name(nvinfer1::TensorFormat format) noexcept {
    using nvinfer1::TensorFormat;
    switch (format) {
    case TensorFormat::kLINEAR:
        return "LINEAR";
    case TensorFormat::kCHW2:
        return "CHW2";
    case TensorFormat::kHWC8:
        return "HWC8";
    case TensorFormat::kCHW4:
        return "CHW4";
    case TensorFormat::kCHW16:
        return "CHW16";
    case TensorFormat::kCHW32:
        return "CHW32";
    case TensorFormat::kDHWC8:
        return "DHWC8";
    case TensorFormat::kCDHW32:
        return "CDHW32";
    case TensorFormat::kHWC:
        return "HWC";
    case TensorFormat::kDLA_LINEAR:
        return "DLA_LINEAR";
    case TensorFormat::kDLA_HWC4:
        return "DLA_HWC4";
    case TensorFormat::kHWC16:
        return "HWC16";
    case TensorFormat::kDHWC:
        return "DHWC";
    default:
        return "UNKNOWN";
    }
}

std::string dims_text(nvinfer1::Dims const& dims) {
    std::string text = "[";
    for (std::int32_t i = 0; i < dims.nbDims && i < nvinfer1::Dims::MAX_DIMS; ++i) {
        text += (i == 0 ? "" : ", ") + std::to_string(dims.d[i]);
    }
    return text + "]";
}

void log_message(nvinfer1::ILogger::Severity severity, std::string const& message) noexcept {
    nvinfer1::ILoggerFinder* finder = logger_finder.load();
    nvinfer1::ILogger* logger = finder != nullptr ? finder->findLogger() : nullptr;
    if (logger != nullptr) {
        logger->log(severity, message.c_str());
    } else if (severity <= nvinfer1::ILogger::Severity::kWARNING) {
        std::cerr << "tensoracle plugin: " << message << '\n';
    }
}

std::int64_t volume(nvinfer1::Dims const& dims) {
    std::int64_t count = 1;
    for (std::int32_t i = 0; i < dims.nbDims; ++i) {
        if (dims.d[i] < 0) {
            throw InvalidArgument("shape " + dims_text(dims) + " has an unknown dimension");
        }
        count *= dims.d[i];
    }
    return count;
}

ArgValue i32_arg(std::int64_t value, std::string_view what) {
    if (value < std::numeric_limits<std::int32_t>::min() ||
        value > std::numeric_limits<std::int32_t>::max()) {
        throw InvalidArgument(std::string{what} + " is " + std::to_string(value) +
                              ", beyond the kernel's 32-bit argument");
    }
    return ArgValue::i32(static_cast<std::int32_t>(value));
}

// --- PluginBase ------------------------------------------------------------------------------

PluginBase::PluginBase(std::string name, std::string plugin_namespace, Fields fields, PluginIO io)
    : name_(std::move(name)), namespace_(std::move(plugin_namespace)), fields_(std::move(fields)),
      io_(std::move(io)) {
    if (io_.inputs.empty()) {
        throw std::invalid_argument("plugin '" + name_ + "' declares no input tensor");
    }
    if (io_.shape_input_index < 0 ||
        static_cast<std::size_t>(io_.shape_input_index) >= io_.inputs.size()) {
        throw std::invalid_argument("plugin '" + name_ + "': shape_input_index " +
                                    std::to_string(io_.shape_input_index) +
                                    " is not an input (the plugin declares " +
                                    std::to_string(io_.inputs.size()) + " inputs)");
    }
    runtime_ = shared_runtime();
}

PluginBase::PluginBase(PluginBase const& other)
    : nvinfer1::IPluginV3(other), nvinfer1::IPluginV3OneCore(other),
      nvinfer1::IPluginV3OneBuild(other), nvinfer1::IPluginV3OneRuntime(other), name_(other.name_),
      namespace_(other.namespace_), fields_(other.fields_), io_(other.io_),
      runtime_(other.runtime_), recorder_(other.recorder_) {}

nvinfer1::IPluginCapability*
PluginBase::getCapabilityInterface(nvinfer1::PluginCapabilityType type) noexcept {
    switch (type) {
    case nvinfer1::PluginCapabilityType::kCORE:
        return static_cast<nvinfer1::IPluginV3OneCore*>(this);
    case nvinfer1::PluginCapabilityType::kBUILD:
        return static_cast<nvinfer1::IPluginV3OneBuild*>(this);
    case nvinfer1::PluginCapabilityType::kRUNTIME:
        return static_cast<nvinfer1::IPluginV3OneRuntime*>(this);
    }
    report("no capability interface of type " + std::to_string(static_cast<int>(type)));
    return nullptr;
}

nvinfer1::IPluginV3* PluginBase::clone() noexcept {
    try {
        return copy().release();
    } catch (std::exception const& error) {
        report(std::string{"clone failed: "} + error.what());
        return nullptr;
    }
}

void PluginBase::report(std::string const& message) const noexcept {
    try {
        std::string const text = "plugin '" + name_ + "': " + message;
        if (recorder_ != nullptr) {
            recorder_->reportError(nvinfer1::ErrorCode::kINVALID_ARGUMENT, text.c_str());
        }
        log_message(nvinfer1::ILogger::Severity::kERROR, text);
    } catch (...) { // NOLINT(bugprone-empty-catch): reporting must never throw into TensorRT
    }
}

bool PluginBase::check_count(char const* call, std::int32_t nbInputs,
                             std::int32_t nbOutputs) const noexcept {
    if (static_cast<std::size_t>(nbInputs) != io_.inputs.size() || nbOutputs != 1) {
        report(std::string{call} + " got " + std::to_string(nbInputs) + " inputs and " +
               std::to_string(nbOutputs) + " outputs, expected " +
               std::to_string(io_.inputs.size()) + " inputs and 1 output");
        return false;
    }
    return true;
}

namespace {
nvinfer1::PluginTensorDesc const& desc_of(nvinfer1::DynamicPluginTensorDesc const& d) {
    return d.desc;
}
nvinfer1::PluginTensorDesc const& desc_of(nvinfer1::PluginTensorDesc const& d) {
    return d;
}
} // namespace

template <typename Desc>
bool PluginBase::check_tensors(char const* call, Desc const* in, std::int32_t nbInputs,
                               Desc const* out, std::int32_t nbOutputs) const noexcept {
    if (!check_count(call, nbInputs, nbOutputs)) {
        return false;
    }
    auto const check = [&](std::string const& tensor, nvinfer1::PluginTensorDesc const& given,
                           TensorSpec const& wanted) {
        if (given.type != wanted.type || given.format != wanted.format) {
            report(std::string{call} + ": " + tensor + " is " + data_type_name(given.type) + " / " +
                   format_name(given.format) + ", expected " + data_type_name(wanted.type) + " / " +
                   format_name(wanted.format));
            return false;
        }
        return true;
    };
    std::vector<nvinfer1::Dims> dims;
    for (std::int32_t i = 0; i < nbInputs; ++i) {
        nvinfer1::PluginTensorDesc const& given = desc_of(in[i]);
        if (!check("input " + std::to_string(i), given, io_.inputs[static_cast<std::size_t>(i)])) {
            return false;
        }
        dims.push_back(given.dims);
    }
    nvinfer1::PluginTensorDesc const& output = desc_of(out[0]);
    if (!check("output 0", output, io_.output)) {
        return false;
    }
    if (!validate_shape(dims.data(), nbInputs, output.dims)) {
        std::string shapes;
        for (nvinfer1::Dims const& d : dims) {
            shapes += (shapes.empty() ? "" : ", ") + dims_text(d);
        }
        report(std::string{call} + ": the shapes are not supported: inputs " + shapes +
               ", output " + dims_text(output.dims));
        return false;
    }
    return true;
}

bool PluginBase::validate_shape(nvinfer1::Dims const* /*inputs*/, std::int32_t /*input_count*/,
                                nvinfer1::Dims const& /*output*/) const noexcept {
    return true;
}

bool PluginBase::supportsFormatCombination(std::int32_t pos,
                                           nvinfer1::DynamicPluginTensorDesc const* inOut,
                                           std::int32_t nbInputs, std::int32_t nbOutputs) noexcept {
    if (!check_count("supportsFormatCombination", nbInputs, nbOutputs) || pos < 0 ||
        pos > nbInputs) {
        return false;
    }
    TensorSpec const& wanted =
        pos < nbInputs ? io_.inputs[static_cast<std::size_t>(pos)] : io_.output;
    return inOut[pos].desc.type == wanted.type && inOut[pos].desc.format == wanted.format;
}

std::int32_t PluginBase::getOutputDataTypes(nvinfer1::DataType* outputTypes, std::int32_t nbOutputs,
                                            nvinfer1::DataType const* inputTypes,
                                            std::int32_t nbInputs) const noexcept {
    if (!check_count("getOutputDataTypes", nbInputs, nbOutputs)) {
        return -1;
    }
    for (std::int32_t i = 0; i < nbInputs; ++i) {
        nvinfer1::DataType const wanted = io_.inputs[static_cast<std::size_t>(i)].type;
        if (inputTypes[i] != wanted) {
            report("getOutputDataTypes: input " + std::to_string(i) + " is " +
                   data_type_name(inputTypes[i]) + ", expected " + data_type_name(wanted));
            return -1;
        }
    }
    outputTypes[0] = io_.output.type;
    return 0;
}

std::int32_t PluginBase::getOutputShapes(nvinfer1::DimsExprs const* inputs, std::int32_t nbInputs,
                                         nvinfer1::DimsExprs const* /*shapeInputs*/,
                                         std::int32_t /*nbShapeInputs*/,
                                         nvinfer1::DimsExprs* outputs, std::int32_t nbOutputs,
                                         nvinfer1::IExprBuilder& /*exprBuilder*/) noexcept {
    if (!check_count("getOutputShapes", nbInputs, nbOutputs)) {
        return -1;
    }
    outputs[0] = inputs[io_.shape_input_index];
    return 0;
}

std::int32_t PluginBase::configurePlugin(nvinfer1::DynamicPluginTensorDesc const* in,
                                         std::int32_t nbInputs,
                                         nvinfer1::DynamicPluginTensorDesc const* out,
                                         std::int32_t nbOutputs) noexcept {
    return check_tensors("configurePlugin", in, nbInputs, out, nbOutputs) ? 0 : -1;
}

std::int32_t PluginBase::onShapeChange(nvinfer1::PluginTensorDesc const* in, std::int32_t nbInputs,
                                       nvinfer1::PluginTensorDesc const* out,
                                       std::int32_t nbOutputs) noexcept {
    return check_tensors("onShapeChange", in, nbInputs, out, nbOutputs) ? 0 : -1;
}

std::int32_t PluginBase::enqueue(nvinfer1::PluginTensorDesc const* inputDesc,
                                 nvinfer1::PluginTensorDesc const* outputDesc,
                                 void const* const* inputs, void* const* outputs,
                                 void* /*workspace*/, cudaStream_t stream) noexcept {
    try {
        execute(inputDesc, outputDesc[0], inputs, outputs, reinterpret_cast<cuda::Stream>(stream));
        return 0;
    } catch (std::exception const& error) {
        report(std::string{"enqueue failed: "} + error.what());
        return -1;
    }
}

nvinfer1::IPluginV3*
PluginBase::attachToContext(nvinfer1::IPluginResourceContext* context) noexcept {
    try {
        std::unique_ptr<PluginBase> attached = copy();
        attached->recorder_ = context != nullptr ? context->getErrorRecorder() : nullptr;
        return attached.release();
    } catch (std::exception const& error) {
        report(std::string{"attachToContext failed: "} + error.what());
        return nullptr;
    }
}

nvinfer1::PluginFieldCollection const* PluginBase::getFieldsToSerialize() noexcept {
    try {
        serialized_.clear();
        for (Field const& field : fields_.all()) {
            serialized_.emplace_back(field.name().c_str(), field.bytes().data(), field.type(),
                                     field.length());
        }
        collection_.nbFields = static_cast<std::int32_t>(serialized_.size());
        collection_.fields = serialized_.data();
        return &collection_;
    } catch (std::exception const& error) {
        report(std::string{"getFieldsToSerialize failed: "} + error.what());
        return nullptr;
    }
}

Kernel const& PluginBase::kernel(std::string_view name) const {
    return runtime_->kernel(name);
}

// --- PluginCreator ---------------------------------------------------------------------------

PluginCreator::PluginCreator(std::string name, std::string version, std::string plugin_namespace,
                             std::vector<FieldSpec> fields, Factory make)
    : name_(std::move(name)), version_(std::move(version)), namespace_(std::move(plugin_namespace)),
      specs_(std::move(fields)), make_(std::move(make)) {
    for (FieldSpec const& spec : specs_) {
        declared_.emplace_back(spec.name.c_str(), nullptr, spec.type,
                               spec.length == FieldSpec::any_length ? 0 : spec.length);
    }
    names_.nbFields = static_cast<std::int32_t>(declared_.size());
    names_.fields = declared_.data();
}

Fields PluginCreator::parse(nvinfer1::PluginFieldCollection const* fc) const {
    std::string const who = "plugin '" + name_ + "'";
    std::vector<Field> parsed;
    std::int32_t const count = fc != nullptr ? fc->nbFields : 0;
    if (count < 0 || (count > 0 && fc->fields == nullptr)) {
        throw InvalidArgument(who + ": the field collection holds " + std::to_string(count) +
                              " fields without data");
    }
    std::string declared;
    for (FieldSpec const& spec : specs_) {
        declared += (declared.empty() ? "" : ", ") + spec.name;
    }
    // Messages are assembled outside the loop's expressions: one allocation each, not a chain.
    auto const refuse = [&who](std::initializer_list<std::string_view> parts) {
        std::string message = who;
        for (std::string_view const part : parts) {
            message += part;
        }
        return InvalidArgument(message);
    };
    for (std::int32_t i = 0; i < count; ++i) {
        nvinfer1::PluginField const& given = fc->fields[i];
        std::string const name = given.name != nullptr ? given.name : "";
        FieldSpec const* spec = nullptr;
        for (FieldSpec const& candidate : specs_) {
            if (candidate.name == name) {
                spec = &candidate;
            }
        }
        if (spec == nullptr) {
            std::string_view const known =
                declared.empty() ? std::string_view{"none"} : std::string_view{declared};
            throw refuse({" has no field '", name, "' (its fields: ", known, ")"});
        }
        for (Field const& seen : parsed) {
            if (seen.name() == name) {
                throw refuse({": field '", name, "' is given twice"});
            }
        }
        if (given.type != spec->type) {
            throw refuse({": field '", name, "' has type ", field_type_name(given.type),
                          ", expected ", field_type_name(spec->type)});
        }
        bool const length_ok = spec->length == FieldSpec::any_length ? given.length >= 1
                                                                     : given.length == spec->length;
        if (!length_ok) {
            throw refuse({": field '", name, "' holds ", std::to_string(given.length),
                          " values, expected ", length_text(spec->length)});
        }
        if (given.data == nullptr) {
            throw refuse({": field '", name, "' has no data"});
        }
        auto const size = element_size(given.type) * static_cast<std::size_t>(given.length);
        parsed.emplace_back(name, given.type, given.length,
                            std::span{static_cast<std::byte const*>(given.data), size});
    }
    for (FieldSpec const& spec : specs_) {
        bool found = false;
        for (Field const& field : parsed) {
            found = found || field.name() == spec.name;
        }
        if (!found) {
            throw InvalidArgument(who + ": field '" + spec.name + "' (" +
                                  field_type_name(spec.type) + " x " + length_text(spec.length) +
                                  ") is missing");
        }
    }
    return Fields{std::move(parsed)};
}

nvinfer1::IPluginV3* PluginCreator::createPlugin(char const* /*name*/,
                                                 nvinfer1::PluginFieldCollection const* fc,
                                                 nvinfer1::TensorRTPhase /*phase*/) noexcept {
    try {
        return make_(parse(fc)).release();
    } catch (std::exception const& error) {
        log_message(nvinfer1::ILogger::Severity::kERROR, error.what());
        return nullptr;
    }
}

} // namespace tensoracle::cubin

// TensorRT calls this once after loading the library, with the way to find its logger.
TENSORACLE_PLUGIN_EXPORT void setLoggerFinder(nvinfer1::ILoggerFinder* finder) {
    tensoracle::cubin::logger_finder.store(finder);
}
