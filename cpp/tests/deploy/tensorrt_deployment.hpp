// A deployment for the tests of the TensorRT adapter: one entry saved in a cache folder, its
// manifest, a GPU it runs on, and the options that make open_engine_for deserialize it with a
// recording stand-in of TensorRT's runtime (tensorrt_stand_ins.hpp) instead of TensorRT.
#pragma once

#include "cache/engine_file.hpp"
#include "cache/entry_encryption.hpp"
#include "cache/identity.hpp"
#include "cache/store.hpp"
#include "deploy/tensorrt_stand_ins.hpp"
#include "support/deploy_fixture.hpp"
#include "support/test_support.hpp"
#include "tensoracle/deploy/tensorrt.hpp"

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace tensoracle::testing {

// The IO signature the Python package records for these tensors (the manifest's "io").
inline nlohmann::json io_signature(std::vector<stand_in::Tensor> const& tensors) {
    using deploy::tensorrt::dtype_name;
    using deploy::tensorrt::format_name;
    using deploy::tensorrt::location_name;
    nlohmann::json listed = nlohmann::json::array();
    for (stand_in::Tensor const& tensor : tensors) {
        bool const input = tensor.mode == nvinfer1::TensorIOMode::kINPUT;
        nlohmann::json value = {{"name", tensor.name},
                                {"mode", input ? "INPUT" : "OUTPUT"},
                                {"dtype", std::string(dtype_name(tensor.dtype))},
                                {"shape", tensor.shape},
                                {"location", std::string(location_name(tensor.location))},
                                {"format", std::string(format_name(tensor.format))}};
        if (input && !tensor.min.empty()) {
            value["profile"] = {{"min", tensor.min}, {"opt", tensor.opt}, {"max", tensor.max}};
        }
        listed.push_back(std::move(value));
    }
    return {{"tensors", listed}};
}

// x: FLOAT [1, -1] from [1, 1] to [1, 8] (optimum [1, 4]); y: FLOAT [1, -1].
inline std::vector<stand_in::Tensor> ranged_io() {
    stand_in::Tensor x;
    x.name = "x";
    x.shape = {1, -1};
    x.min = {1, 1};
    x.opt = {1, 4};
    x.max = {1, 8};
    stand_in::Tensor y;
    y.name = "y";
    y.mode = nvinfer1::TensorIOMode::kOUTPUT;
    y.shape = {1, -1};
    return {x, y};
}

inline deploy::RuntimeBackend const kBackend{deploy::kTensorRt, "11.1.0.106"};

struct TensorRtDeployment {
    TemporaryDirectory folder;
    std::vector<std::byte> plan;
    std::vector<stand_in::Tensor> tensors;
    deploy::Manifest manifest;
    std::filesystem::path path;
    // Described as Python's tensoracle.gpu.properties() would describe an RTX 4090 (sm89).
    deploy::CurrentGpu gpu{
        0, deploy::device_from_json(
               {{"name", "NVIDIA GeForce RTX 4090"}, {"compute_capability", "8.9"}}, "gpu")};

    explicit TensorRtDeployment(std::vector<stand_in::Tensor> io = ranged_io(),
                                std::vector<std::string> const& plugins = {},
                                std::size_t plan_size = 4096)
        : plan(random_bytes(plan_size, 7)), tensors(std::move(io)) {
        nlohmann::json conditions = {{"name", "encoder"},
                                     {"graph_version", "3"},
                                     {"backend", kBackend.name},
                                     {"backend_version", kBackend.version},
                                     {"gpu", nullptr},
                                     {"hardware_compatibility", "ampere_plus"},
                                     {"targets", nlohmann::json::array()}};
        if (!plugins.empty()) {
            conditions["plugins"] = plugins;
        }
        EngineIdentity const identity = recorded_identity(conditions);
        nlohmann::json const io_json = io_signature(tensors);
        path = Store(folder.path()).save(identity, {{"io", io_json}}, plan);
        manifest.spec = "model:package";
        manifest.entries.push_back(manifest_entry_of(path, identity, io_json));
    }

    deploy::OpenOptions open_options() const { return {folder.path(), {}}; }

    // The entry encrypted for `recipient` (tensoracle cache encrypt), its manifest entry made
    // anew from the file.
    void encrypt_for(encryption::RecipientKey const& recipient) {
        std::vector<encryption::RecipientKey> const to = {recipient};
        (void)encrypt_entry(path, {to, {}}, nullptr);
        nlohmann::json const io_json = io_signature(tensors);
        manifest.entries.front() = manifest_entry_of(
            path, recorded_identity(read_engine_header(path).header.conditions), io_json);
    }
    deploy::ManifestEntry const& entry() const { return manifest.entries.front(); }

    // Options whose runtime is a stand-in that deserializes to an engine of `tensors`, created
    // with `logger`; `runtime` receives the stand-in (owned by the Runtime).
    deploy::tensorrt::EngineOptions options(std::shared_ptr<nvinfer1::ILogger> logger,
                                            std::shared_ptr<stand_in::Events> const& events,
                                            stand_in::StandInRuntime** runtime = nullptr,
                                            stand_in::Behaviour behaviour = {},
                                            std::optional<std::string> error = std::nullopt) const {
        stand_in::Deserialization deserialization{tensors, std::move(behaviour), std::move(error)};
        deploy::tensorrt::EngineOptions made;
        made.open = open_options();
        made.backend = kBackend;
        made.runtime = deploy::tensorrt::Runtime::create(
            std::move(logger), [&](nvinfer1::ILogger& forwarded) -> nvinfer1::IRuntime* {
                auto* created = new stand_in::StandInRuntime(events, deserialization, forwarded);
                if (runtime != nullptr) {
                    *runtime = created;
                }
                return created;
            });
        return made;
    }
};

} // namespace tensoracle::testing
