// cpp_inference MANIFEST RECIPE INPUT_DIR OUTPUT_DIR [--expected DIR] [--shape NAME=D0xD1...]...
//
// Runs the engine of RECIPE_NAME that a deployment manifest (`tensoracle build --manifest`)
// names for the GPU current in this thread: selected, read from the cache folder and verified
// against the manifest (its signature too when TENSORACLE_REMOTE_VERIFY_KEY names a key), then
// deserialized by TensorRT. Each input is read from INPUT_DIR/<name>.bin (its raw little-endian
// elements in C order, as numpy's ndarray.tofile writes them), copied to device memory, the
// inference is enqueued on a stream of the application's own, and each output is written to
// OUTPUT_DIR/<name>.bin; with --expected, each output is compared with DIR/<name>.bin. A ranged
// input's shape is given with --shape (x=1x3x224x224). On any refusal it prints the error's
// message and exits 1 (2 for a wrong command line). See README.md.
#include <NvInferRuntime.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <cuda_runtime_api.h>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tensoracle/compare/compare.hpp>
#include <tensoracle/deploy/tensorrt.hpp>
#include <tensoracle/errors.hpp>
#include <utility>
#include <vector>

namespace deploy = tensoracle::deploy;
namespace trt = tensoracle::deploy::tensorrt;

namespace {

struct Arguments {
    std::filesystem::path manifest;
    std::string recipe;
    std::filesystem::path inputs;
    std::filesystem::path outputs;
    std::optional<std::filesystem::path> expected;
    std::vector<deploy::NamedShape> shapes;
};

class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

deploy::Shape parse_shape(std::string const& text, std::string const& argument) {
    deploy::Shape shape;
    std::istringstream parts(text);
    std::string part;
    while (std::getline(parts, part, 'x')) {
        std::size_t used = 0;
        long long value = -1;
        try {
            value = std::stoll(part, &used);
        } catch (std::exception const&) {
            used = 0;
        }
        if (used != part.size() || value < 0) {
            throw UsageError("--shape " + argument + ": '" + part + "' is not a dimension");
        }
        shape.push_back(value);
    }
    return shape;
}

Arguments parse(int argc, char** argv) {
    std::vector<std::string> const words(argv + 1, argv + argc);
    Arguments parsed;
    std::vector<std::string> positional;
    for (std::size_t index = 0; index < words.size(); ++index) {
        std::string const& word = words[index];
        if (word == "--expected" || word == "--shape") {
            if (index + 1 == words.size()) {
                throw UsageError(word + " needs a value");
            }
            std::string const& value = words[++index];
            if (word == "--expected") {
                parsed.expected = value;
                continue;
            }
            auto const equals = value.find('=');
            if (equals == std::string::npos || equals == 0) {
                throw UsageError("--shape " + value + ": write NAME=D0xD1...");
            }
            parsed.shapes.push_back(
                {value.substr(0, equals), parse_shape(value.substr(equals + 1), value)});
        } else {
            positional.push_back(word);
        }
    }
    if (positional.size() != 4) {
        throw UsageError("expected MANIFEST RECIPE INPUT_DIR OUTPUT_DIR");
    }
    parsed.manifest = positional[0];
    parsed.recipe = positional[1];
    parsed.inputs = positional[2];
    parsed.outputs = positional[3];
    return parsed;
}

// ---- CUDA, owned -------------------------------------------------------------------------------

void check(cudaError_t status, char const* call) {
    if (status != cudaSuccess) {
        throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                                 cudaGetErrorString(status) + ")");
    }
}

class DeviceBuffer {
public:
    explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
        check(cudaMalloc(&data_, bytes == 0 ? 1 : bytes), "cudaMalloc"); // 256-byte aligned
    }
    DeviceBuffer(DeviceBuffer&& other) noexcept
        : data_(std::exchange(other.data_, nullptr)), bytes_(other.bytes_) {}
    DeviceBuffer(DeviceBuffer const&) = delete;
    DeviceBuffer& operator=(DeviceBuffer const&) = delete;
    DeviceBuffer& operator=(DeviceBuffer&&) = delete;
    ~DeviceBuffer() {
        if (data_ != nullptr) {
            (void)cudaFree(data_);
        }
    }
    void* data() const noexcept { return data_; }
    std::size_t bytes() const noexcept { return bytes_; }

private:
    void* data_ = nullptr;
    std::size_t bytes_;
};

class Stream {
public:
    Stream() {
        check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    }
    Stream(Stream const&) = delete;
    Stream& operator=(Stream const&) = delete;
    Stream(Stream&&) = delete;
    Stream& operator=(Stream&&) = delete;
    ~Stream() { (void)cudaStreamDestroy(stream_); }
    cudaStream_t get() const noexcept { return stream_; }

private:
    cudaStream_t stream_ = nullptr;
};

// ---- files -------------------------------------------------------------------------------------

std::vector<std::byte> read_tensor(std::filesystem::path const& path, std::uint64_t expected) {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        throw std::runtime_error("cannot read '" + path.string() + "'");
    }
    std::vector<char> const bytes((std::istreambuf_iterator<char>(file)),
                                  std::istreambuf_iterator<char>());
    if (bytes.size() != expected) {
        throw std::runtime_error("'" + path.string() + "' holds " + std::to_string(bytes.size()) +
                                 " bytes; the tensor has " + std::to_string(expected));
    }
    std::vector<std::byte> data(bytes.size());
    std::memcpy(data.data(), bytes.data(), bytes.size());
    return data;
}

void write_tensor(std::filesystem::path const& path, std::vector<std::byte> const& data) {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<char const*>(data.data()),
               static_cast<std::streamsize>(data.size()));
    if (!file) {
        throw std::runtime_error("cannot write '" + path.string() + "'");
    }
}

// ---- comparison --------------------------------------------------------------------------------

// The comparison's name for a TensorRT dtype; nothing for one it does not read (FP8, INT4, ...).
std::optional<tensoracle::ElementType> element_type(std::string const& dtype) {
    static std::map<std::string, tensoracle::ElementType> const kTypes{
        {"FLOAT", tensoracle::ElementType::float32}, {"HALF", tensoracle::ElementType::float16},
        {"BF16", tensoracle::ElementType::bfloat16}, {"INT8", tensoracle::ElementType::int8},
        {"INT32", tensoracle::ElementType::int32},   {"INT64", tensoracle::ElementType::int64},
        {"UINT8", tensoracle::ElementType::uint8},   {"BOOL", tensoracle::ElementType::boolean}};
    auto const found = kTypes.find(dtype);
    return found == kTypes.end() ? std::nullopt : std::optional(found->second);
}

std::string compared(std::vector<std::byte> const& output, std::vector<std::byte> const& expected,
                     std::string const& dtype, deploy::Shape const& shape) {
    auto const type = element_type(dtype);
    if (!type) {
        return "not compared (" + dtype + " is not a type the comparison reads)";
    }
    std::vector<std::int64_t> strides(shape.size());
    std::int64_t stride = static_cast<std::int64_t>(tensoracle::element_size(*type));
    for (std::size_t axis = shape.size(); axis-- > 0;) {
        strides[axis] = stride;
        stride *= shape[axis];
    }
    tensoracle::ArrayView const candidate{output.data(), *type, shape, strides};
    tensoracle::ArrayView const reference{expected.data(), *type, shape, strides};
    if (tensoracle::element_kind(*type) != tensoracle::ElementKind::floating) {
        return std::to_string(tensoracle::count_mismatches(candidate, reference)) +
               " of the elements differ";
    }
    tensoracle::FloatComparison const result = tensoracle::compare_floating(candidate, reference);
    std::ostringstream text;
    text << result.element_count << " elements";
    if (result.max_abs_error) {
        text << ", max abs error " << *result.max_abs_error;
    }
    if (result.relative_l2_error) {
        text << ", relative L2 error " << *result.relative_l2_error;
    }
    if (result.cosine_similarity) {
        text << ", cosine similarity " << *result.cosine_similarity;
    }
    if (result.candidate_nonfinite_count + result.reference_nonfinite_count > 0) {
        text << ", " << result.candidate_nonfinite_count << " non-finite (output) and "
             << result.reference_nonfinite_count << " (expected)";
    }
    return text.str();
}

// ---- the application ---------------------------------------------------------------------------

int run(Arguments const& arguments) {
    // Selected for the GPU current in this thread and the TensorRT library loaded, read from the
    // cache folder and verified against the manifest before TensorRT sees a byte, deserialized.
    trt::Engine const engine = trt::open_engine(arguments.manifest, arguments.recipe);
    std::cout << "selected " << engine.entry().file_name << " for CUDA device " << engine.device()
              << ": " << engine.why() << "\n";
    // Its IO checked against the manifest entry; the context created.
    trt::Execution unit = engine.create_execution();
    if (!unit.ranged_input_names().empty()) {
        unit.set_input_shapes(arguments.shapes);
    }

    Stream const stream;
    std::vector<DeviceBuffer> buffers;
    std::vector<deploy::TensorAddress> addresses;
    for (std::string const& name : unit.input_names()) {
        std::vector<std::byte> const data =
            read_tensor(arguments.inputs / (name + ".bin"), unit.bytes(name));
        buffers.emplace_back(data.size());
        check(cudaMemcpyAsync(buffers.back().data(), data.data(), data.size(),
                              cudaMemcpyHostToDevice, stream.get()),
              "cudaMemcpyAsync");
        check(cudaStreamSynchronize(stream.get()), "cudaStreamSynchronize"); // `data` goes next
        addresses.push_back({name, buffers.back().data()});
    }
    std::map<std::string, std::vector<std::byte>> outputs;
    for (std::string const& name : unit.output_names()) {
        buffers.emplace_back(unit.bytes(name));
        addresses.push_back({name, buffers.back().data()});
        outputs[name].resize(unit.bytes(name));
    }
    unit.enqueue(addresses, stream.get());
    for (std::size_t index = unit.input_names().size(); index < addresses.size(); ++index) {
        std::vector<std::byte>& host = outputs.at(addresses[index].name);
        check(cudaMemcpyAsync(host.data(), addresses[index].address, host.size(),
                              cudaMemcpyDeviceToHost, stream.get()),
              "cudaMemcpyAsync");
    }
    check(cudaStreamSynchronize(stream.get()), "cudaStreamSynchronize");

    std::filesystem::create_directories(arguments.outputs);
    for (auto const& [name, data] : outputs) {
        write_tensor(arguments.outputs / (name + ".bin"), data);
        std::cout << "wrote " << (arguments.outputs / (name + ".bin")).string() << "\n";
        if (arguments.expected) {
            std::vector<std::byte> const expected =
                read_tensor(*arguments.expected / (name + ".bin"), data.size());
            std::string const dtype = unit.contract().tensor(name).dtype;
            std::cout << "  " << name << " against "
                      << (*arguments.expected / (name + ".bin")).string() << ": "
                      << compared(data, expected, dtype, unit.shape(name)) << "\n";
        }
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    try {
        return run(parse(argc, argv));
    } catch (UsageError const& error) {
        std::cerr << "cpp_inference: " << error.what() << "\n"
                  << "usage: cpp_inference MANIFEST RECIPE INPUT_DIR OUTPUT_DIR [--expected DIR] "
                     "[--shape NAME=D0xD1...]...\n";
        return 2;
    } catch (std::exception const& error) {
        std::cerr << "cpp_inference: " << error.what() << "\n";
    }
    return 1;
}
