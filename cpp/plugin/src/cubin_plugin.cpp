// The SDK's implementation: field parsing, error reporting, PluginBase, SHA-256 and the per-context
// kernel and device-memory caches. Self-contained: TensorRT is reached only through the
// interfaces it passes in, the CUDA driver through its C API.
// One file although it holds several parts: TensoracleCubinPlugin.cmake compiles the SDK into each
// plugin as this one source beside its header, and the installed SDK is those two files.
#include "tensoracle/cubin_plugin.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace tensoracle::cubin {
namespace {

using nvinfer1::PluginFieldType;

constexpr std::size_t kMaxFieldBytes = std::size_t{128} << 20U;
constexpr std::size_t kMaxArguments = 14;

std::atomic<nvinfer1::ILoggerFinder*> logger_finder{nullptr};

// Decimal text of an integer. Not std::to_string: libstdc++'s one leaves a GNU-unique symbol in
// the plugin's dynamic symbol table, which would keep the library from ever being unloaded.
template <typename T>
std::string number(T value) {
    std::array<char, 24> text{};
    if constexpr (std::is_signed_v<T>) {
        static_cast<void>(
            std::snprintf(text.data(), text.size(), "%lld", static_cast<long long>(value)));
    } else {
        static_cast<void>(std::snprintf(text.data(), text.size(), "%llu",
                                        static_cast<unsigned long long>(value)));
    }
    return std::string{text.data()};
}

std::size_t element_size(PluginFieldType type) noexcept {
    switch (type) {
    case PluginFieldType::kFLOAT32:
    case PluginFieldType::kINT32:
        return 4;
    case PluginFieldType::kFLOAT16:
    case PluginFieldType::kINT16:
        return 2;
    case PluginFieldType::kINT8:
    case PluginFieldType::kCHAR:
        return 1;
    default:
        return 0;
    }
}

char const* field_type_name(PluginFieldType type) noexcept {
    switch (type) {
    case PluginFieldType::kFLOAT16:
        return "kFLOAT16";
    case PluginFieldType::kFLOAT32:
        return "kFLOAT32";
    case PluginFieldType::kFLOAT64:
        return "kFLOAT64";
    case PluginFieldType::kINT8:
        return "kINT8";
    case PluginFieldType::kINT16:
        return "kINT16";
    case PluginFieldType::kINT32:
        return "kINT32";
    case PluginFieldType::kCHAR:
        return "kCHAR";
    case PluginFieldType::kDIMS:
        return "kDIMS";
    case PluginFieldType::kUNKNOWN:
        return "kUNKNOWN";
    case PluginFieldType::kBF16:
        return "kBF16";
    case PluginFieldType::kINT64:
        return "kINT64";
    case PluginFieldType::kFP8:
        return "kFP8";
    default:
        return "an unsupported type";
    }
}

char const* data_type_name(nvinfer1::DataType type) noexcept {
    using nvinfer1::DataType;
    switch (type) {
    case DataType::kFLOAT:
        return "kFLOAT";
    case DataType::kHALF:
        return "kHALF";
    case DataType::kINT8:
        return "kINT8";
    case DataType::kINT32:
        return "kINT32";
    case DataType::kBOOL:
        return "kBOOL";
    case DataType::kUINT8:
        return "kUINT8";
    case DataType::kFP8:
        return "kFP8";
    case DataType::kBF16:
        return "kBF16";
    case DataType::kINT64:
        return "kINT64";
    default:
        return "another data type";
    }
}

char const* format_name(nvinfer1::TensorFormat format) noexcept {
    using nvinfer1::TensorFormat;
    switch (format) {
    case TensorFormat::kLINEAR:
        return "kLINEAR";
    case TensorFormat::kCHW2:
        return "kCHW2";
    case TensorFormat::kHWC8:
        return "kHWC8";
    case TensorFormat::kCHW4:
        return "kCHW4";
    case TensorFormat::kCHW16:
        return "kCHW16";
    case TensorFormat::kCHW32:
        return "kCHW32";
    case TensorFormat::kHWC:
        return "kHWC";
    default:
        return "another format";
    }
}

std::string tensor_text(nvinfer1::DataType type, nvinfer1::TensorFormat format) {
    return std::string{data_type_name(type)} + "/" + format_name(format);
}

std::string dims_text(nvinfer1::Dims const& dims) {
    std::string text = "[";
    std::int32_t const count = std::min(std::max(dims.nbDims, 0), nvinfer1::Dims::MAX_DIMS);
    for (std::int32_t i = 0; i < count; ++i) {
        text += (i == 0 ? "" : ", ") + number(dims.d[i]);
    }
    return text + "]";
}

std::string quoted(char const* text) {
    return text != nullptr ? "'" + std::string{text} + "'" : std::string{"(unnamed)"};
}

// Copies `source` into `result`; on a refusal returns false and sets `reason`.
bool parse_fields(nvinfer1::PluginFieldCollection const* source, std::vector<FieldValue>& result,
                  std::string& reason) {
    if (source == nullptr) {
        reason = "no field collection was given";
        return false;
    }
    if (source->nbFields < 0 || (source->nbFields > 0 && source->fields == nullptr)) {
        reason = "the field collection holds " + number(source->nbFields) + " fields at " +
                 (source->fields == nullptr ? "a null pointer" : "an address");
        return false;
    }
    std::vector<FieldValue> parsed;
    parsed.reserve(static_cast<std::size_t>(source->nbFields));
    for (std::int32_t i = 0; i < source->nbFields; ++i) {
        nvinfer1::PluginField const& field = source->fields[i];
        std::string const where = "field " + number(i);
        if (field.name == nullptr) {
            reason = where + " has no name";
            return false;
        }
        std::string const name = "field '" + std::string{field.name} + "'";
        std::size_t const size = element_size(field.type);
        if (size == 0) {
            reason = name + " has type " + field_type_name(field.type) +
                     ", expected kFLOAT32, kINT32, kFLOAT16, kINT16, kINT8 or kCHAR";
            return false;
        }
        if (field.length < 0) {
            reason = name + " has length " + number(field.length) + ", expected >= 0";
            return false;
        }
        if (field.data == nullptr && field.length > 0) {
            reason = name + " has " + number(field.length) + " values and no data";
            return false;
        }
        auto const bytes = static_cast<std::size_t>(field.length) * size;
        if (bytes > kMaxFieldBytes) {
            reason = name + " holds " + number(bytes) + " bytes, more than 128 MiB";
            return false;
        }
        for (FieldValue const& seen : parsed) {
            if (seen.name == field.name) {
                reason = name + " is given twice";
                return false;
            }
        }
        auto const* data = static_cast<std::uint8_t const*>(field.data);
        FieldValue value{field.name, field.type, field.length,
                         bytes > 0 ? std::vector<std::uint8_t>(data, data + bytes)
                                   : std::vector<std::uint8_t>{}};
        parsed.push_back(std::move(value));
    }
    result = std::move(parsed);
    return true;
}

} // namespace

// --- error reporting -------------------------------------------------------------------------

void set_logger_finder(nvinfer1::ILoggerFinder* finder) noexcept {
    logger_finder.store(finder);
}

void report_error(nvinfer1::IErrorRecorder* recorder, char const* message) noexcept {
    char const* text = message != nullptr ? message : "(no message)";
    if (recorder != nullptr) {
        recorder->reportError(nvinfer1::ErrorCode::kINVALID_ARGUMENT, text);
        return;
    }
    nvinfer1::ILoggerFinder* finder = logger_finder.load();
    nvinfer1::ILogger* logger = finder != nullptr ? finder->findLogger() : nullptr;
    if (logger != nullptr) {
        logger->log(nvinfer1::ILogger::Severity::kERROR, text);
        return;
    }
    static_cast<void>(std::fprintf(stderr, "tensoracle plugin: %s\n", text));
}

// --- fields ----------------------------------------------------------------------------------

bool Fields::parse(nvinfer1::PluginFieldCollection const* source, Fields& result) noexcept {
    try {
        Fields parsed;
        std::string reason;
        if (!parse_fields(source, parsed.values_, reason)) {
            return false;
        }
        parsed.point_collection_here();
        result = std::move(parsed);
        return true;
    } catch (std::exception const&) {
        return false;
    }
}

Fields::Fields(Fields const& other) : values_(other.values_) {
    point_collection_here();
}

Fields& Fields::operator=(Fields const& other) {
    if (this != &other) {
        Fields copy(other);
        *this = std::move(copy);
    }
    return *this;
}

// Moving the vectors keeps their elements where they are, so the view stays valid; only the
// collection's pointer is taken over.
Fields::Fields(Fields&& other) noexcept
    : values_(std::move(other.values_)), view_(std::move(other.view_)) {
    collection_.nbFields = static_cast<std::int32_t>(view_.size());
    collection_.fields = view_.data();
    other.values_.clear();
    other.view_.clear();
    other.collection_ = nvinfer1::PluginFieldCollection{0, nullptr};
}

Fields& Fields::operator=(Fields&& other) noexcept {
    if (this != &other) {
        values_ = std::move(other.values_);
        view_ = std::move(other.view_);
        collection_.nbFields = static_cast<std::int32_t>(view_.size());
        collection_.fields = view_.data();
        other.values_.clear();
        other.view_.clear();
        other.collection_ = nvinfer1::PluginFieldCollection{0, nullptr};
    }
    return *this;
}

void Fields::point_collection_here() {
    view_.clear();
    view_.reserve(values_.size());
    for (FieldValue const& value : values_) {
        view_.emplace_back(value.name.c_str(), value.bytes.empty() ? nullptr : value.bytes.data(),
                           value.type, value.length);
    }
    collection_.nbFields = static_cast<std::int32_t>(view_.size());
    collection_.fields = view_.data();
}

FieldValue const* Fields::find(char const* name) const noexcept {
    if (name == nullptr) {
        return nullptr;
    }
    for (FieldValue const& value : values_) {
        if (value.name == name) {
            return &value;
        }
    }
    return nullptr;
}

nvinfer1::PluginFieldCollection const* Fields::collection() noexcept {
    return &collection_;
}

bool check_fields(char const* plugin_name, nvinfer1::PluginFieldCollection const* source,
                  FieldRule const* rules, std::size_t rule_count, Fields& result) noexcept {
    try {
        std::string const who = "plugin " + quoted(plugin_name) + ": ";
        Fields checked;
        std::string reason;
        if (!parse_fields(source, checked.values_, reason)) {
            report_error(nullptr, (who + reason).c_str());
            return false;
        }
        checked.point_collection_here();
        std::vector<FieldValue> const& parsed = checked.values();
        std::string known;
        for (std::size_t r = 0; r < rule_count; ++r) {
            known += (r == 0 ? "" : ", ") + std::string{rules[r].name};
        }
        for (FieldValue const& value : parsed) {
            FieldRule const* rule = nullptr;
            for (std::size_t r = 0; r < rule_count && rule == nullptr; ++r) {
                if (value.name == rules[r].name) {
                    rule = &rules[r];
                }
            }
            std::string const field = "field '" + value.name + "'";
            if (rule == nullptr) {
                reason = "unknown " + field + ", expected one of: " +
                         (known.empty() ? std::string{"(no fields)"} : known);
            } else if (value.type != rule->type) {
                reason = field + " has type " + field_type_name(value.type) + ", expected " +
                         field_type_name(rule->type);
            } else if (rule->length == FieldRule::kAnyLength ? value.length < 1
                                                             : value.length != rule->length) {
                reason = field + " holds " + number(value.length) + " values, expected " +
                         (rule->length == FieldRule::kAnyLength ? std::string{"one or more"}
                                                                : number(rule->length));
            }
            if (!reason.empty()) {
                report_error(nullptr, (who + reason).c_str());
                return false;
            }
        }
        for (std::size_t r = 0; r < rule_count; ++r) {
            bool const present =
                std::any_of(parsed.begin(), parsed.end(),
                            [&](FieldValue const& value) { return value.name == rules[r].name; });
            if (!present) {
                std::string message = who;
                message += "field '";
                message += rules[r].name;
                message += "' (";
                message += field_type_name(rules[r].type);
                message += " x ";
                message += rules[r].length == FieldRule::kAnyLength ? std::string{"one or more"}
                                                                    : number(rules[r].length);
                message += ") is missing";
                report_error(nullptr, message.c_str());
                return false;
            }
        }
        result = std::move(checked);
        return true;
    } catch (std::exception const& error) {
        report_error(nullptr, error.what());
        return false;
    }
}

// --- PluginBase ------------------------------------------------------------------------------

PluginBase::PluginBase(char const* name, char const* plugin_namespace, Fields fields, PluginIO io)
    : name_(name), namespace_(plugin_namespace), fields_(std::move(fields)), io_(std::move(io)) {
    if (io_.inputs.empty() ||
        io_.inputs.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
        throw std::invalid_argument("plugin " + quoted(name_) + " declares " +
                                    number(io_.inputs.size()) + " inputs, expected 1 to INT32_MAX");
    }
    if (io_.shape_input_index < 0 ||
        static_cast<std::size_t>(io_.shape_input_index) >= io_.inputs.size()) {
        throw std::invalid_argument("plugin " + quoted(name_) + ": shape_input_index is " +
                                    number(io_.shape_input_index) + ", expected 0 to " +
                                    number(io_.inputs.size() - 1));
    }
}

void PluginBase::report(std::string const& message) const noexcept {
    try {
        report_error(recorder_, ("plugin " + quoted(name_) + ": " + message).c_str());
    } catch (std::exception const&) {
        report_error(recorder_, message.c_str());
    }
}

nvinfer1::IPluginCapability*
PluginBase::getCapabilityInterface(nvinfer1::PluginCapabilityType type) noexcept {
    switch (type) {
    case nvinfer1::PluginCapabilityType::kCORE:
        return static_cast<nvinfer1::IPluginV3OneCore*>(this);
    case nvinfer1::PluginCapabilityType::kBUILD:
        return static_cast<nvinfer1::IPluginV3OneBuild*>(this);
    case nvinfer1::PluginCapabilityType::kRUNTIME:
        return static_cast<nvinfer1::IPluginV3OneRuntime*>(this);
    default:
        return nullptr;
    }
}

char const* PluginBase::getPluginName() const noexcept {
    return name_;
}

char const* PluginBase::getPluginVersion() const noexcept {
    return "1";
}

char const* PluginBase::getPluginNamespace() const noexcept {
    return namespace_;
}

std::int32_t PluginBase::getNbOutputs() const noexcept {
    return 1;
}

bool PluginBase::counts_match(char const* call, std::int32_t input_count,
                              std::int32_t output_count) const noexcept {
    if (input_count >= 0 && static_cast<std::size_t>(input_count) == io_.inputs.size() &&
        output_count == 1) {
        return true;
    }
    try {
        report(std::string{call} + ": got " + number(input_count) + " inputs and " +
               number(output_count) + " outputs, expected " + number(io_.inputs.size()) +
               " inputs and 1 output");
    } catch (std::exception const&) {
        report(call);
    }
    return false;
}

bool PluginBase::supportsFormatCombination(std::int32_t position,
                                           nvinfer1::DynamicPluginTensorDesc const* in_out,
                                           std::int32_t input_count,
                                           std::int32_t output_count) noexcept {
    if (in_out == nullptr ||
        !counts_match("supportsFormatCombination", input_count, output_count) || position < 0 ||
        position > input_count) {
        return false;
    }
    TensorSpec const& wanted =
        position < input_count ? io_.inputs[static_cast<std::size_t>(position)] : io_.output;
    nvinfer1::PluginTensorDesc const& given = in_out[position].desc;
    // TensorRT asks about many combinations while choosing one: a "no" is an answer, not an error.
    return given.type == wanted.type && given.format == wanted.format;
}

std::int32_t PluginBase::getOutputDataTypes(nvinfer1::DataType* output_types,
                                            std::int32_t output_count,
                                            nvinfer1::DataType const* input_types,
                                            std::int32_t input_count) const noexcept {
    if (output_types == nullptr || input_types == nullptr ||
        !counts_match("getOutputDataTypes", input_count, output_count)) {
        return -1;
    }
    for (std::int32_t i = 0; i < input_count; ++i) {
        nvinfer1::DataType const wanted = io_.inputs[static_cast<std::size_t>(i)].type;
        if (input_types[i] != wanted) {
            try {
                report("getOutputDataTypes: input " + number(i) + " has type " +
                       data_type_name(input_types[i]) + ", expected " + data_type_name(wanted));
            } catch (std::exception const&) {
                report("getOutputDataTypes: an input type differs from the declaration");
            }
            return -1;
        }
    }
    output_types[0] = io_.output.type;
    return 0;
}

std::int32_t PluginBase::getOutputShapes(nvinfer1::DimsExprs const* inputs,
                                         std::int32_t input_count,
                                         nvinfer1::DimsExprs const* /*shape_inputs*/,
                                         std::int32_t shape_input_count,
                                         nvinfer1::DimsExprs* outputs, std::int32_t output_count,
                                         nvinfer1::IExprBuilder& /*builder*/) noexcept {
    if (inputs == nullptr || outputs == nullptr ||
        !counts_match("getOutputShapes", input_count, output_count)) {
        return -1;
    }
    if (shape_input_count != 0) {
        try {
            report("getOutputShapes: got " + number(shape_input_count) +
                   " shape inputs, expected 0");
        } catch (std::exception const&) {
            report("getOutputShapes: shape inputs are not supported");
        }
        return -1;
    }
    outputs[0] = inputs[io_.shape_input_index];
    return 0;
}

namespace {
nvinfer1::PluginTensorDesc const& desc_of(nvinfer1::DynamicPluginTensorDesc const& tensor) {
    return tensor.desc;
}
nvinfer1::PluginTensorDesc const& desc_of(nvinfer1::PluginTensorDesc const& tensor) {
    return tensor;
}
} // namespace

template <typename Desc>
std::int32_t PluginBase::check_and_validate(char const* call, Desc const* inputs,
                                            std::int32_t input_count, Desc const* outputs,
                                            std::int32_t output_count) const noexcept {
    try {
        if (inputs == nullptr || outputs == nullptr) {
            report(std::string{call} + ": got no tensor descriptions (a null pointer)");
            return -1;
        }
        if (!counts_match(call, input_count, output_count)) {
            return -1;
        }
        auto const differs = [&](std::string const& tensor, nvinfer1::PluginTensorDesc const& given,
                                 TensorSpec const& wanted) {
            if (given.type == wanted.type && given.format == wanted.format) {
                return false;
            }
            report(std::string{call} + ": " + tensor + " is " +
                   tensor_text(given.type, given.format) + ", expected " +
                   tensor_text(wanted.type, wanted.format));
            return true;
        };
        std::vector<nvinfer1::Dims> dims;
        dims.reserve(static_cast<std::size_t>(input_count));
        for (std::int32_t i = 0; i < input_count; ++i) {
            nvinfer1::PluginTensorDesc const& given = desc_of(inputs[i]);
            if (differs("input " + number(i), given, io_.inputs[static_cast<std::size_t>(i)])) {
                return -1;
            }
            dims.push_back(given.dims);
        }
        nvinfer1::PluginTensorDesc const& output = desc_of(outputs[0]);
        if (differs("output 0", output, io_.output)) {
            return -1;
        }
        std::int32_t const verdict = validate_shape(dims.data(), input_count, output.dims);
        if (verdict != 0) {
            std::string shapes;
            for (nvinfer1::Dims const& d : dims) {
                shapes += (shapes.empty() ? "" : ", ") + dims_text(d);
            }
            report(std::string{call} + ": validate_shape refused inputs " + shapes +
                   " and output " + dims_text(output.dims) + " (returned " + number(verdict) + ")");
        }
        return verdict;
    } catch (std::exception const& error) {
        report(error.what());
        return -1;
    }
}

std::int32_t PluginBase::configurePlugin(nvinfer1::DynamicPluginTensorDesc const* inputs,
                                         std::int32_t input_count,
                                         nvinfer1::DynamicPluginTensorDesc const* outputs,
                                         std::int32_t output_count) noexcept {
    return check_and_validate("configurePlugin", inputs, input_count, outputs, output_count);
}

std::int32_t PluginBase::onShapeChange(nvinfer1::PluginTensorDesc const* inputs,
                                       std::int32_t input_count,
                                       nvinfer1::PluginTensorDesc const* outputs,
                                       std::int32_t output_count) noexcept {
    return check_and_validate("onShapeChange", inputs, input_count, outputs, output_count);
}

std::size_t PluginBase::getWorkspaceSize(nvinfer1::DynamicPluginTensorDesc const* /*inputs*/,
                                         std::int32_t /*input_count*/,
                                         nvinfer1::DynamicPluginTensorDesc const* /*outputs*/,
                                         std::int32_t /*output_count*/) const noexcept {
    return 0;
}

char const* PluginBase::getTimingCacheID() noexcept {
    return name_;
}

char const* PluginBase::getMetadataString() noexcept {
    return name_;
}

nvinfer1::IPluginV3*
PluginBase::attachToContext(nvinfer1::IPluginResourceContext* context) noexcept {
    nvinfer1::IPluginV3* attached = clone();
    if (attached == nullptr) {
        report("attachToContext: clone() returned no plugin");
        return nullptr;
    }
    // The clone reports through the context's recorder from now on.
    auto* base = dynamic_cast<PluginBase*>(attached);
    if (base != nullptr && context != nullptr) {
        base->recorder_ = context->getErrorRecorder();
    }
    return attached;
}

nvinfer1::PluginFieldCollection const* PluginBase::getFieldsToSerialize() noexcept {
    return fields_.collection();
}

// --- SHA-256 ---------------------------------------------------------------------------------

namespace {

class Sha256 {
public:
    void update(unsigned char const* data, std::size_t size) noexcept {
        total_ += size;
        while (size > 0) {
            std::size_t const take = std::min(size, block_.size() - filled_);
            std::memcpy(block_.data() + filled_, data, take);
            filled_ += take;
            data += take;
            size -= take;
            if (filled_ == block_.size()) {
                compress();
                filled_ = 0;
            }
        }
    }

    std::string hex() noexcept(false) {
        std::uint64_t const bits = static_cast<std::uint64_t>(total_) * 8U;
        block_[filled_++] = 0x80U;
        if (filled_ > 56) {
            std::fill(block_.begin() + static_cast<std::ptrdiff_t>(filled_), block_.end(), 0);
            compress();
            filled_ = 0;
        }
        std::fill(block_.begin() + static_cast<std::ptrdiff_t>(filled_), block_.begin() + 56, 0);
        for (std::size_t i = 0; i < 8; ++i) {
            block_[63 - i] = static_cast<unsigned char>(bits >> (8U * i));
        }
        compress();
        constexpr char const* kDigits = "0123456789abcdef";
        std::string text;
        text.reserve(64);
        for (std::uint32_t const word : state_) {
            for (int shift = 28; shift >= 0; shift -= 4) {
                text.push_back(kDigits[(word >> static_cast<unsigned>(shift)) & 0xFU]);
            }
        }
        return text;
    }

private:
    static std::uint32_t rotr(std::uint32_t x, unsigned n) noexcept {
        return (x >> n) | (x << (32U - n));
    }

    void compress() noexcept {
        static constexpr std::array<std::uint32_t, 64> kRound{
            0x428a2f98U, 0x71374491U, 0xb5c0fbcfU, 0xe9b5dba5U, 0x3956c25bU, 0x59f111f1U,
            0x923f82a4U, 0xab1c5ed5U, 0xd807aa98U, 0x12835b01U, 0x243185beU, 0x550c7dc3U,
            0x72be5d74U, 0x80deb1feU, 0x9bdc06a7U, 0xc19bf174U, 0xe49b69c1U, 0xefbe4786U,
            0x0fc19dc6U, 0x240ca1ccU, 0x2de92c6fU, 0x4a7484aaU, 0x5cb0a9dcU, 0x76f988daU,
            0x983e5152U, 0xa831c66dU, 0xb00327c8U, 0xbf597fc7U, 0xc6e00bf3U, 0xd5a79147U,
            0x06ca6351U, 0x14292967U, 0x27b70a85U, 0x2e1b2138U, 0x4d2c6dfcU, 0x53380d13U,
            0x650a7354U, 0x766a0abbU, 0x81c2c92eU, 0x92722c85U, 0xa2bfe8a1U, 0xa81a664bU,
            0xc24b8b70U, 0xc76c51a3U, 0xd192e819U, 0xd6990624U, 0xf40e3585U, 0x106aa070U,
            0x19a4c116U, 0x1e376c08U, 0x2748774cU, 0x34b0bcb5U, 0x391c0cb3U, 0x4ed8aa4aU,
            0x5b9cca4fU, 0x682e6ff3U, 0x748f82eeU, 0x78a5636fU, 0x84c87814U, 0x8cc70208U,
            0x90befffaU, 0xa4506cebU, 0xbef9a3f7U, 0xc67178f2U};
        std::array<std::uint32_t, 64> w{};
        for (std::size_t i = 0; i < 16; ++i) {
            w[i] = (std::uint32_t{block_[4 * i]} << 24U) |
                   (std::uint32_t{block_[(4 * i) + 1]} << 16U) |
                   (std::uint32_t{block_[(4 * i) + 2]} << 8U) | std::uint32_t{block_[(4 * i) + 3]};
        }
        for (std::size_t i = 16; i < 64; ++i) {
            std::uint32_t const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3U);
            std::uint32_t const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10U);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        std::array<std::uint32_t, 8> v = state_;
        for (std::size_t i = 0; i < 64; ++i) {
            std::uint32_t const s1 = rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25);
            std::uint32_t const choose = (v[4] & v[5]) ^ (~v[4] & v[6]);
            std::uint32_t const t1 = v[7] + s1 + choose + kRound[i] + w[i];
            std::uint32_t const s0 = rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22);
            std::uint32_t const majority = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
            std::uint32_t const t2 = s0 + majority;
            v[7] = v[6];
            v[6] = v[5];
            v[5] = v[4];
            v[4] = v[3] + t1;
            v[3] = v[2];
            v[2] = v[1];
            v[1] = v[0];
            v[0] = t1 + t2;
        }
        for (std::size_t i = 0; i < 8; ++i) {
            state_[i] += v[i];
        }
    }

    std::array<std::uint32_t, 8> state_{0x6a09e667U, 0xbb67ae85U, 0x3c6ef372U, 0xa54ff53aU,
                                        0x510e527fU, 0x9b05688cU, 0x1f83d9abU, 0x5be0cd19U};
    std::array<unsigned char, 64> block_{};
    std::size_t filled_{0};
    std::size_t total_{0};
};

bool is_power_of_two(std::uint32_t value) noexcept {
    return value != 0 && (value & (value - 1U)) == 0;
}

// The id of the current context (0 with none), or the driver's error.
CUresult current_context(CUcontext& context, unsigned long long& id) noexcept {
    context = nullptr;
    id = 0;
    CUresult result = cuCtxGetCurrent(&context);
    if (result != CUDA_SUCCESS) {
        return result;
    }
    if (context == nullptr) {
        return CUDA_ERROR_INVALID_CONTEXT;
    }
    result = cuCtxGetId(context, &id);
    return result;
}

// Makes `context` current if it still exists and is the one with `id`; the caller pops it.
bool push_if_alive(CUcontext context, unsigned long long id) noexcept {
    if (cuCtxPushCurrent(context) != CUDA_SUCCESS) {
        return false;
    }
    unsigned long long current = 0;
    if (cuCtxGetId(context, &current) == CUDA_SUCCESS && current == id) {
        return true;
    }
    CUcontext popped = nullptr;
    static_cast<void>(cuCtxPopCurrent(&popped));
    return false;
}

} // namespace

std::string sha256(void const* bytes, std::size_t size) {
    Sha256 hash;
    hash.update(static_cast<unsigned char const*>(bytes), bytes != nullptr ? size : 0);
    return hash.hex();
}

// --- Kernel ----------------------------------------------------------------------------------

Kernel::Kernel(KernelImage image) noexcept : image_(image) {}

Kernel::~Kernel() noexcept {
    std::lock_guard<std::mutex> const lock(mutex_);
    for (auto const& [id, loaded] : loaded_) {
        if (push_if_alive(loaded.context, id)) {
            static_cast<void>(cuModuleUnload(loaded.module));
            CUcontext popped = nullptr;
            static_cast<void>(cuCtxPopCurrent(&popped));
        }
    }
}

bool Kernel::accepts(void* const* arguments, std::size_t argument_count) const noexcept {
    if (arguments == nullptr || image_.argument_rules == nullptr || argument_count == 0 ||
        argument_count > kMaxArguments || argument_count != image_.public_argument_count) {
        return false;
    }
    for (std::size_t i = 0; i < argument_count; ++i) {
        ArgumentRule const& rule = image_.argument_rules[i];
        void const* argument = arguments[i];
        if (argument == nullptr || !is_power_of_two(rule.divisible_by)) {
            return false;
        }
        switch (rule.kind) {
        case ArgumentKind::kPointer: {
            CUdeviceptr pointer = 0;
            std::memcpy(&pointer, argument, sizeof(pointer));
            if (rule.divisible_by > 1 && (pointer == 0 || pointer % rule.divisible_by != 0)) {
                return false;
            }
            break;
        }
        case ArgumentKind::kInt32: {
            std::int32_t value = 0;
            std::memcpy(&value, argument, sizeof(value));
            auto const divisor = static_cast<std::int64_t>(rule.divisible_by);
            if (rule.divisible_by > 1 && static_cast<std::int64_t>(value) % divisor != 0) {
                return false;
            }
            break;
        }
        case ArgumentKind::kFloat32:
            if (rule.divisible_by != 1) {
                return false;
            }
            break;
        default:
            return false;
        }
    }
    return true;
}

CUresult Kernel::load(CUcontext context, CUfunction& function) noexcept {
    if (image_.bytes == nullptr || image_.size == 0 || image_.sha256 == nullptr ||
        image_.entry_symbol == nullptr || image_.global_scratch_bytes != 0 ||
        image_.profile_scratch_bytes != 0 || image_.dynamic_shared_bytes < 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (!digest_checked_) {
        try {
            if (sha256(image_.bytes, image_.size) != image_.sha256) {
                return CUDA_ERROR_INVALID_IMAGE;
            }
        } catch (std::bad_alloc const&) {
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        digest_checked_ = true;
    }
    CUdevice device = 0;
    CUresult result = cuCtxGetDevice(&device);
    int major = 0;
    int minor = 0;
    if (result == CUDA_SUCCESS) {
        result = cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device);
    }
    if (result == CUDA_SUCCESS) {
        result = cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device);
    }
    if (result != CUDA_SUCCESS) {
        return result;
    }
    if ((major * 10) + minor != image_.target_sm) {
        return CUDA_ERROR_INVALID_IMAGE;
    }
    CUmodule module = nullptr;
    result = cuModuleLoadData(&module, image_.bytes);
    if (result != CUDA_SUCCESS) {
        return result;
    }
    result = cuModuleGetFunction(&function, module, image_.entry_symbol);
    if (result == CUDA_SUCCESS && image_.dynamic_shared_bytes > 0) {
        result = cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    image_.dynamic_shared_bytes);
    }
    int registers = 0;
    if (result == CUDA_SUCCESS) {
        result = cuFuncGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, function);
    }
    if (result == CUDA_SUCCESS && registers != image_.registers_per_thread) {
        result = CUDA_ERROR_INVALID_IMAGE;
    }
    unsigned long long id = 0;
    if (result == CUDA_SUCCESS) {
        result = cuCtxGetId(context, &id);
    }
    if (result == CUDA_SUCCESS) {
        try {
            loaded_.emplace(id, Loaded{context, module, function});
        } catch (std::bad_alloc const&) {
            result = CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    if (result != CUDA_SUCCESS) {
        static_cast<void>(cuModuleUnload(module));
    }
    return result;
}

CUresult Kernel::launch(unsigned int grid, unsigned int block, void** arguments,
                        std::size_t argument_count, CUstream stream) noexcept {
    if (grid == 0 || block == 0 || !accepts(arguments, argument_count)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    CUfunction function = nullptr;
    {
        std::lock_guard<std::mutex> const lock(mutex_);
        CUcontext context = nullptr;
        unsigned long long id = 0;
        CUresult const result = current_context(context, id);
        if (result != CUDA_SUCCESS) {
            return result;
        }
        auto const found = loaded_.find(id);
        if (found != loaded_.end()) {
            function = found->second.function;
        } else {
            CUresult const loaded = load(context, function);
            if (loaded != CUDA_SUCCESS) {
                return loaded;
            }
        }
    }
    // The caller's arguments, then the two scratch pointers Triton kernels take last (always 0).
    CUdeviceptr global_scratch = 0;
    CUdeviceptr profile_scratch = 0;
    std::array<void*, kMaxArguments + 2> parameters{};
    std::copy(arguments, arguments + argument_count, parameters.begin());
    parameters[argument_count] = &global_scratch;
    parameters[argument_count + 1] = &profile_scratch;
    return cuLaunchKernel(function, grid, 1, 1, block, 1, 1,
                          static_cast<unsigned int>(image_.dynamic_shared_bytes), stream,
                          parameters.data(), nullptr);
}

// --- DeviceBytes -----------------------------------------------------------------------------

DeviceBytes::DeviceBytes(std::vector<std::uint8_t> bytes) : bytes_(std::move(bytes)) {}

DeviceBytes::~DeviceBytes() noexcept {
    std::lock_guard<std::mutex> const lock(mutex_);
    for (auto const& [id, copy] : copies_) {
        if (push_if_alive(copy.first, id)) {
            static_cast<void>(cuMemFree(copy.second));
            CUcontext popped = nullptr;
            static_cast<void>(cuCtxPopCurrent(&popped));
        }
    }
}

CUresult DeviceBytes::for_current_context(CUdeviceptr& pointer) noexcept {
    if (bytes_.empty()) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    std::lock_guard<std::mutex> const lock(mutex_);
    CUcontext context = nullptr;
    unsigned long long id = 0;
    CUresult result = current_context(context, id);
    if (result != CUDA_SUCCESS) {
        return result;
    }
    auto const found = copies_.find(id);
    if (found != copies_.end()) {
        pointer = found->second.second;
        return CUDA_SUCCESS;
    }
    CUdeviceptr device = 0;
    result = cuMemAlloc(&device, bytes_.size());
    if (result != CUDA_SUCCESS) {
        return result;
    }
    result = cuMemcpyHtoD(device, bytes_.data(), bytes_.size());
    if (result == CUDA_SUCCESS) {
        try {
            copies_.emplace(id, std::make_pair(context, device));
        } catch (std::bad_alloc const&) {
            result = CUDA_ERROR_OUT_OF_MEMORY;
        }
    }
    if (result != CUDA_SUCCESS) {
        static_cast<void>(cuMemFree(device));
        return result;
    }
    pointer = device;
    return CUDA_SUCCESS;
}

} // namespace tensoracle::cubin
