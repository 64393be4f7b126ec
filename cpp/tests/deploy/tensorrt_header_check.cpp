// Compiled (not run) by the CTest tensorrt_header_check_* (tests/deploy/tensorrt_header.cmake)
// against each fetched TensorRT 11 version's headers, as C++17 and as C++20, with the project's
// warnings as errors: tensoracle/deploy/tensorrt.hpp must compile where an application compiles
// it. What needs no TensorRT library is asserted at compile time; nothing here calls TensorRT.
#include "tensoracle/deploy/tensorrt.hpp"

#include <type_traits>

// The deploy headers include no third-party header: an application with any nlohmann_json (or
// JSON_DIAGNOSTICS), or none, compiles and links them.
#ifdef INCLUDE_NLOHMANN_JSON_HPP_
#error "a deploy header includes nlohmann/json.hpp"
#endif

namespace tt = tensoracle::deploy::tensorrt;

// The names the Python package (and so the manifest) writes for TensorRT's enum values.
static_assert(tt::dtype_name(nvinfer1::DataType::kFLOAT) == "FLOAT");
static_assert(tt::dtype_name(nvinfer1::DataType::kBF16) == "BF16");
static_assert(tt::dtype_name(nvinfer1::DataType::kE8M0) == "E8M0");
// Every DataType maps to the TensorRT type of its name, and back.
constexpr bool data_types_map_both_ways() {
    for (tensoracle::deploy::DataTypeInfo const& info : tensoracle::deploy::kDataTypes) {
        nvinfer1::DataType const type = tt::to_tensorrt(info.type);
        if (tt::dtype_name(type) != info.name || tt::from_tensorrt(type) != info.type) {
            return false;
        }
    }
    return true;
}
static_assert(data_types_map_both_ways());
static_assert(tt::to_tensorrt(tensoracle::deploy::DataType::bfloat16) == nvinfer1::DataType::kBF16);
static_assert(tt::from_tensorrt(nvinfer1::DataType::kHALF) ==
              tensoracle::deploy::DataType::float16);
static_assert(tt::format_name(nvinfer1::TensorFormat::kLINEAR) == "LINEAR");
static_assert(tt::format_name(nvinfer1::TensorFormat::kCHW32) == "CHW32");
static_assert(tt::location_name(nvinfer1::TensorLocation::kHOST) == "HOST");

// getInferLibVersion()'s number for these headers, without the build number.
static_assert(tt::header_library_version() ==
              NV_TENSORRT_MAJOR * 10000 + NV_TENSORRT_MINOR * 100 + NV_TENSORRT_PATCH);
static_assert(tt::header_library_version() >= 110000);

// An execution unit is moved, never copied: its context is TensorRT's, one per unit.
static_assert(std::is_nothrow_move_constructible_v<tt::Execution>);
static_assert(!std::is_copy_constructible_v<tt::Execution>);

// Every entry point, taken by address so that each is compiled as an application would use it.
[[maybe_unused]] auto const kRuntimeBackend = &tt::runtime_backend;
[[maybe_unused]] auto const kBackendForLibrary = &tt::backend_for_library;
[[maybe_unused]] std::vector<tensoracle::deploy::TensorDescription> (*const kCheckIo)(
    nvinfer1::ICudaEngine const&, tensoracle::deploy::DeployedEngine const&) = &tt::check_io;
[[maybe_unused]] auto const kDescribeIo = &tt::describe_io;
[[maybe_unused]] auto const kShapeOf = &tt::shape_of;
[[maybe_unused]] auto const kDimsOf = &tt::dims_of;

[[maybe_unused]] void use(nvinfer1::IRuntime& runtime,
                          tensoracle::deploy::DeployedEngine const& deployed, cudaStream_t stream) {
    std::shared_ptr<nvinfer1::ICudaEngine> const engine = tt::deserialize(runtime, deployed);
    tt::Execution unit(engine, deployed);
    unit.set_input_shapes({{"x", {2, 3}}});
    unit.bind({{"x", nullptr}, {"y", nullptr}});
    unit.enqueue(stream);
    unit.enqueue({{"x", nullptr}, {"y", nullptr}}, stream);
    [[maybe_unused]] auto const bytes = unit.bytes("y");
    tt::Execution moved = std::move(unit);
    moved.close();
}

// The short path, and the owned runtime it uses.
[[maybe_unused]] void use_short_path(cudaStream_t stream) {
    tt::Engine const engine = tt::open_engine("deploy.json", "encoder");
    tt::Execution unit = engine.create_execution();
    unit.set_input_shapes({{"x", {2, 3}}});
    unit.enqueue({{"x", nullptr}, {"y", nullptr}}, stream);
    std::shared_ptr<tt::Runtime> const runtime =
        tt::Runtime::create(std::make_shared<tt::StderrLogger>(nvinfer1::ILogger::Severity::kINFO));
    tt::EngineOptions options;
    options.runtime = runtime;
    tensoracle::deploy::Manifest const manifest = tensoracle::deploy::read_manifest("deploy.json");
    tt::Engine const other = tt::open_engine_for(
        manifest, "encoder", tensoracle::deploy::describe_current_gpu(), options);
    [[maybe_unused]] std::shared_ptr<nvinfer1::ICudaEngine> const shared = other.shared();
}
