// A small plugin on the SDK, as a user writes one: a creator checking its fields with
// check_fields, a PluginBase subclass launching a bundle kernel, and the two exported entry
// points. Built by tensoracle_add_cubin_plugin in the SDK tests (and compiled in every
// compiler / standard / TensorRT header combination).
#include "tensoracle/cubin_plugin.hpp"

#include <cstdint>
#include <memory>
#include <new>

namespace {

using tensoracle::cubin::FieldRule;
using tensoracle::cubin::Fields;

constexpr char const* kName = "TensoracleSdkTestScale";
constexpr char const* kNamespace = "tensoracle_sdk_test";

class ScalePlugin final : public tensoracle::cubin::PluginBase {
public:
    explicit ScalePlugin(Fields fields) : PluginBase(kName, kNamespace, std::move(fields)) {}

    nvinfer1::IPluginV3* clone() noexcept override {
        try {
            return new (std::nothrow) ScalePlugin(fields());
        } catch (...) {
            return nullptr;
        }
    }

    std::int32_t enqueue(nvinfer1::PluginTensorDesc const* input_desc,
                         nvinfer1::PluginTensorDesc const* /*output_desc*/,
                         void const* const* inputs, void* const* outputs, void* /*workspace*/,
                         cudaStream_t stream) noexcept override {
        if (kernel_ == nullptr) {
            return -1;
        }
        CUdeviceptr x = reinterpret_cast<CUdeviceptr>(inputs[0]);
        CUdeviceptr y = reinterpret_cast<CUdeviceptr>(outputs[0]);
        std::int32_t count = 1;
        for (std::int32_t i = 0; i < input_desc[0].dims.nbDims; ++i) {
            count *= static_cast<std::int32_t>(input_desc[0].dims.d[i]);
        }
        float alpha = 1.0F;
        if (auto const* field = fields().find("alpha"); field != nullptr) {
            alpha = *reinterpret_cast<float const*>(field->bytes.data());
        }
        void* arguments[] = {&x, &y, &count, &alpha};
        CUresult const result = kernel_->launch(static_cast<unsigned int>((count + 127) / 128), 128,
                                                arguments, 4, reinterpret_cast<CUstream>(stream));
        return result == CUDA_SUCCESS ? 0 : -1;
    }

protected:
    std::int32_t validate_shape(nvinfer1::Dims const* inputs, std::int32_t input_count,
                                nvinfer1::Dims const& output) const noexcept override {
        return input_count == 1 && inputs[0].nbDims == output.nbDims ? 0 : 1;
    }

private:
    std::unique_ptr<tensoracle::cubin::Kernel> kernel_{
        tensoracle::cubin::find_bundle_image("sm86.scale") != nullptr
            ? std::make_unique<tensoracle::cubin::Kernel>(
                  *tensoracle::cubin::find_bundle_image("sm86.scale"))
            : nullptr};
};

class ScaleCreator final : public nvinfer1::IPluginCreatorV3One {
public:
    ScaleCreator() {
        names_.nbFields = 1;
        names_.fields = &declared_;
    }
    nvinfer1::IPluginV3* createPlugin(char const* /*name*/,
                                      nvinfer1::PluginFieldCollection const* fc,
                                      nvinfer1::TensorRTPhase /*phase*/) noexcept override {
        static FieldRule const rules[] = {{"alpha", nvinfer1::PluginFieldType::kFLOAT32, 1}};
        Fields fields;
        if (!tensoracle::cubin::check_fields(kName, fc, rules, 1, fields)) {
            return nullptr;
        }
        try {
            return new (std::nothrow) ScalePlugin(std::move(fields));
        } catch (...) {
            return nullptr;
        }
    }
    nvinfer1::PluginFieldCollection const* getFieldNames() noexcept override { return &names_; }
    char const* getPluginName() const noexcept override { return kName; }
    char const* getPluginVersion() const noexcept override { return "1"; }
    char const* getPluginNamespace() const noexcept override { return kNamespace; }

private:
    nvinfer1::PluginField declared_{"alpha", nullptr, nvinfer1::PluginFieldType::kFLOAT32, 1};
    nvinfer1::PluginFieldCollection names_{};
};

} // namespace

extern "C" __attribute__((visibility("default"))) nvinfer1::IPluginCreatorInterface* const*
getCreators(std::int32_t& count) noexcept {
    static ScaleCreator creator;
    static nvinfer1::IPluginCreatorInterface* const creators[] = {&creator};
    count = 1;
    return creators;
}

extern "C" __attribute__((visibility("default"))) void
setLoggerFinder(nvinfer1::ILoggerFinder* finder) noexcept {
    tensoracle::cubin::set_logger_finder(finder);
}
