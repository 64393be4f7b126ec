// The example model package's TensorRT plugins, on the kernels of ../cubin_kernels:
//   TensoracleBiasAdd  out[r, c] = x[r, c] + bias[c]     inputs x (..., C), bias (C)
//   TensoracleScale    out = alpha * x                    field alpha (FLOAT32 x 1)
//   TensoracleRowDot   out[r] = sum_j a[r, j] * b[r, j]   inputs a, b (..., K), output (...)
// All tensors are fp32 / LINEAR. The row dot uses the variant compiled for multiples of 16 when
// the launch arguments meet its promise (Kernel::accepts) and the general one otherwise.
#include "tensoracle/cubin_plugin.hpp"

#include <array>
#include <exception>
#include <iostream>
#include <memory>

namespace {

using namespace tensoracle::cubin;
namespace cuda = tensoracle::cuda;
using nvinfer1::Dims;
using nvinfer1::PluginTensorDesc;

constexpr char const* plugin_namespace = "tensoracle_example";
constexpr std::int64_t block = 256; // BLOCK of bias_add and scale in kernels.py

cuda::DevicePtr address(void const* pointer) {
    return reinterpret_cast<cuda::DevicePtr>(pointer);
}

unsigned blocks(std::int64_t count, std::int64_t per_block) {
    return static_cast<unsigned>((count + per_block - 1) / per_block);
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

class BiasAdd final : public PluginBase {
public:
    explicit BiasAdd(Fields fields)
        : PluginBase("TensoracleBiasAdd", plugin_namespace, std::move(fields),
                     PluginIO{{TensorSpec{}, TensorSpec{}}, TensorSpec{}, 0}) {}

protected:
    std::unique_ptr<PluginBase> copy() const override { return std::make_unique<BiasAdd>(*this); }

    bool validate_shape(Dims const* inputs, std::int32_t /*count*/,
                        Dims const& output) const noexcept override {
        Dims const& x = inputs[0];
        Dims const& bias = inputs[1];
        if (x.nbDims < 1 || bias.nbDims != 1) {
            return false;
        }
        std::int64_t const columns = x.d[x.nbDims - 1];
        bool const match = columns < 0 || bias.d[0] < 0 || columns == bias.d[0];
        return match && same(x, output);
    }

    void execute(PluginTensorDesc const* input_desc, PluginTensorDesc const& /*output_desc*/,
                 void const* const* inputs, void* const* outputs, cuda::Stream stream) override {
        Dims const& x = input_desc[0].dims;
        std::int64_t const columns = x.d[x.nbDims - 1];
        std::int64_t const rows = columns == 0 ? 0 : volume(x) / columns;
        if (rows == 0) {
            return;
        }
        std::array const args = {
            ArgValue::pointer(address(inputs[0])), ArgValue::pointer(address(inputs[1])),
            ArgValue::pointer(address(outputs[0])), i32_arg(columns, "the number of columns")};
        kernel("bias_add")
            .launch(Grid{static_cast<unsigned>(rows), blocks(columns, block), 1}, stream, args);
    }
};

class Scale final : public PluginBase {
public:
    explicit Scale(Fields fields)
        : PluginBase("TensoracleScale", plugin_namespace, std::move(fields)),
          alpha_(this->fields().f32("alpha")) {}

protected:
    std::unique_ptr<PluginBase> copy() const override { return std::make_unique<Scale>(*this); }

    void execute(PluginTensorDesc const* input_desc, PluginTensorDesc const& /*output_desc*/,
                 void const* const* inputs, void* const* outputs, cuda::Stream stream) override {
        std::int64_t const count = volume(input_desc[0].dims);
        if (count == 0) {
            return;
        }
        std::array const args = {ArgValue::pointer(address(inputs[0])),
                                 ArgValue::pointer(address(outputs[0])),
                                 i32_arg(count, "the number of elements"), ArgValue::f32(alpha_)};
        kernel("scale").launch(Grid{blocks(count, block), 1, 1}, stream, args);
    }

private:
    float alpha_;
};

class RowDot final : public PluginBase {
public:
    explicit RowDot(Fields fields)
        : PluginBase("TensoracleRowDot", plugin_namespace, std::move(fields),
                     PluginIO{{TensorSpec{}, TensorSpec{}}, TensorSpec{}, 0}) {}

    // The output drops the last dimension, which the declaration cannot express.
    std::int32_t getOutputShapes(nvinfer1::DimsExprs const* inputs, std::int32_t nbInputs,
                                 nvinfer1::DimsExprs const* /*shapeInputs*/,
                                 std::int32_t /*nbShapeInputs*/, nvinfer1::DimsExprs* outputs,
                                 std::int32_t nbOutputs,
                                 nvinfer1::IExprBuilder& /*exprBuilder*/) noexcept override {
        if (nbInputs != 2 || nbOutputs != 1 || inputs[0].nbDims < 2) {
            report("getOutputShapes needs two inputs of rank 2 or more and one output");
            return -1;
        }
        outputs[0].nbDims = inputs[0].nbDims - 1;
        for (std::int32_t i = 0; i < outputs[0].nbDims; ++i) {
            outputs[0].d[i] = inputs[0].d[i];
        }
        return 0;
    }

protected:
    std::unique_ptr<PluginBase> copy() const override { return std::make_unique<RowDot>(*this); }

    bool validate_shape(Dims const* inputs, std::int32_t /*count*/,
                        Dims const& output) const noexcept override {
        Dims const& a = inputs[0];
        if (a.nbDims < 2 || !same(a, inputs[1]) || output.nbDims != a.nbDims - 1) {
            return false;
        }
        for (std::int32_t i = 0; i < output.nbDims; ++i) {
            if (a.d[i] >= 0 && output.d[i] >= 0 && a.d[i] != output.d[i]) {
                return false;
            }
        }
        return true;
    }

    void execute(PluginTensorDesc const* input_desc, PluginTensorDesc const& /*output_desc*/,
                 void const* const* inputs, void* const* outputs, cuda::Stream stream) override {
        Dims const& a = input_desc[0].dims;
        std::int64_t const k = a.d[a.nbDims - 1];
        std::int64_t const rows = k == 0 ? 0 : volume(a) / k;
        if (rows == 0) {
            return;
        }
        std::array const args = {
            ArgValue::pointer(address(inputs[0])), ArgValue::pointer(address(inputs[1])),
            ArgValue::pointer(address(outputs[0])), i32_arg(k, "the row length")};
        Kernel const& specialised = kernel("row_dot_div16");
        Kernel const& chosen = specialised.accepts(args) ? specialised : kernel("row_dot");
        log_message(nvinfer1::ILogger::Severity::kVERBOSE,
                    "TensoracleRowDot launches " + std::string{chosen.record().name});
        chosen.launch(Grid{static_cast<unsigned>(rows), 1, 1}, stream, args);
    }
};

template <typename Plugin>
PluginCreator::Factory factory() {
    return [](Fields fields) { return std::make_unique<Plugin>(std::move(fields)); };
}

// The creators are made on the first getCreators call, not at load time, so that a failure
// (out of memory) is reported to TensorRT instead of ending the process while it loads us.
std::array<nvinfer1::IPluginCreatorInterface*, 3> const& creators() {
    static PluginCreator bias{"TensoracleBiasAdd", "1", plugin_namespace, {}, factory<BiasAdd>()};
    static PluginCreator scale{"TensoracleScale",
                               "1",
                               plugin_namespace,
                               {FieldSpec{"alpha", nvinfer1::PluginFieldType::kFLOAT32, 1}},
                               factory<Scale>()};
    static PluginCreator row_dot{"TensoracleRowDot", "1", plugin_namespace, {}, factory<RowDot>()};
    static std::array<nvinfer1::IPluginCreatorInterface*, 3> const all{&bias, &scale, &row_dot};
    return all;
}

} // namespace

TENSORACLE_PLUGIN_EXPORT nvinfer1::IPluginCreatorInterface* const*
getCreators(std::int32_t& count) {
    try {
        auto const& all = creators();
        count = static_cast<std::int32_t>(all.size());
        return all.data();
    } catch (std::exception const& error) {
        std::cerr << "tensoracle_example_plugin: cannot create the plugin creators: "
                  << error.what() << '\n';
        count = 0;
        return nullptr;
    }
}
