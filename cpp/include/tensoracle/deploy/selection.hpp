// Which saved engine runs on which GPU: the rule that matches an entry's identity conditions
// against a described device, and the choice of one entry per device among candidates.
//
// The rule is the one Python's tensoracle.cache.compatibility.cannot_run applies (it calls this
// implementation), so a C++ application and open_engine judge an entry alike:
// - TensorRT-RTX compiles ahead of time for a list of compute capabilities ("targets"): an entry
//   runs on a GPU whose compute capability is among them.
// - TensorRT 11 without a hardware compatibility level builds for the GPU in use: the entry runs
//   only on a GPU with exactly the recorded properties. With "same_compute_capability" it runs on
//   every GPU of the recorded compute capability, with "ampere_plus" on every GPU from sm80 on.
//
// Everything here is a pure function of described inputs: no driver and no TensorRT is touched.
// This header compiles as C++17 and includes no third-party header.
#pragma once

#include "tensoracle/deploy/host_platform.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tensoracle {
struct GpuProperties;
}

namespace tensoracle::deploy {

// The backend names an entry's conditions record.
inline constexpr char const* kTensorRtRtx = "tensorrt_rtx";
inline constexpr char const* kTensorRt = "tensorrt";
// TensorRT 11's hardware compatibility levels, as the conditions record them.
inline constexpr char const* kAmperePlus = "ampere_plus";
inline constexpr char const* kSameComputeCapability = "same_compute_capability";

// One GPU property: text, a whole number or true/false. As in the Python rule, true equals the
// number 1 and false the number 0 when two properties are compared.
using PropertyValue = std::variant<bool, std::int64_t, std::string>;

// A GPU described by its compatibility properties, by name: the keys and values of
// tensoracle.gpu.properties() ("name", "compute_capability" written "MAJOR.MINOR",
// "multiprocessor_count", ...). A description may hold fewer or more properties; two devices
// are the same GPU for an engine built without a level when every property is equal.
struct DeviceDescription {
    std::map<std::string, PropertyValue> properties;
};

// The description of a GPU as the CUDA driver reports it (tensoracle/cuda/gpu_properties.hpp).
DeviceDescription describe(GpuProperties const& gpu);

// This machine's GPUs as the CUDA driver reports them, in its order (ordinal 0 first): select an
// entry for each. Throws tensoracle::Error with the reason when none can be described (no
// driver library, no device, a driver error).
std::vector<DeviceDescription> describe_gpus();

// The GPU TensorRT deserializes on when called from this thread: the device of the thread's
// current CUDA context, device 0 when none is current (as cudaGetDevice reports it; cudaSetDevice
// makes its device's context current), with its CUDA ordinal. Throws tensoracle::Error with the
// reason when it cannot be described (no driver library, no device, a driver error).
struct CurrentGpu {
    int ordinal = 0;
    DeviceDescription description;
};
CurrentGpu describe_current_gpu();
// The CUDA ordinal of the device current in this thread, as describe_current_gpu finds it, or
// nothing when no driver or device can tell.
std::optional<int> current_gpu_ordinal();

// The GPU's compute capability as a build target: "8.9" gives "sm89", "12.0" gives "sm120".
// Throws tensoracle::InvalidArgument naming the value when it is not written MAJOR.MINOR.
std::string target_of(DeviceDescription const& device);

// The compute capability a person names a GPU by, either way: "8.9" as written, or the build
// target "sm89" as "8.9" (its last digit the minor: "sm120" gives "12.0"), target_of's inverse.
// Nothing when `text` is neither (checked as target_of checks a description's).
std::optional<std::string> compute_capability_named(std::string_view text);

// What an entry's identity conditions record of where it runs.
struct EntryConditions {
    std::string backend;         // "tensorrt_rtx" or "tensorrt"
    std::string backend_version; // the version that built it; an engine runs only on it
    std::vector<std::string> targets;
    std::optional<std::string> hardware_compatibility; // absent: no level
    std::optional<DeviceDescription> gpu;              // absent: recorded as null
    // The platform it was built on (absent when not recorded, and then not judged): an engine
    // runs only where TensorRT's runtime of that platform reads it.
    std::optional<std::string> os = std::nullopt;
    std::optional<std::string> arch = std::nullopt;
};

// Why an entry with these conditions cannot run on `device`, or nothing when it can. The
// backend version is not judged here (select_entry does). Throws InvalidArgument when the
// device's compute capability is not written MAJOR.MINOR.
std::optional<std::string> cannot_run(EntryConditions const& conditions,
                                      DeviceDescription const& device);

// The TensorRT an application runs engines with, and the platform it runs on.
struct RuntimeBackend {
    std::string name;    // "tensorrt_rtx" or "tensorrt"
    std::string version; // as the conditions record it, such as "11.1.0.106"
    std::string os = kHostOs;
    std::string arch = kHostArch;
};

// One entry to choose from.
struct Candidate {
    std::string name; // how messages name it, such as its entry file name
    EntryConditions conditions;
};

struct Rejection {
    std::size_t candidate = 0; // index into the candidates
    std::string reason;
};

// The outcome of select_entry: the chosen candidate and why, or none and a refusal that lists the
// candidates with the reason each cannot be used on the device (the first 10 in full, then how
// many more; `rejected` holds every one).
struct Selection {
    std::optional<std::size_t> chosen; // index into the candidates
    std::string why;                   // why it was chosen (empty when none was)
    std::vector<Rejection> rejected;   // every candidate not chosen, in the candidates' order
    std::string refusal;               // the whole refusal (empty when one was chosen)
};

// Picks the one candidate that runs on `device` with `backend`. A candidate is usable when its
// backend and backend version are the application's, its recorded platform (os and arch) is
// the application's, and cannot_run finds no reason. Among
// usable candidates the most specific wins: one built for exactly this GPU's properties, then one
// for its compute capability ("same_compute_capability"), then one for a list of targets or
// "ampere_plus". Two usable candidates equally specific are refused as ambiguous rather than one
// picked at random; so are no candidates at all. Never falls back to an entry that cannot run.
Selection select_entry(std::vector<Candidate> const& candidates, DeviceDescription const& device,
                       RuntimeBackend const& backend);

// The choice select_entry makes, without the reasons: which candidate (an index into
// `candidates`) select_entry would choose, or nothing where it would refuse (call select_entry
// then, for the refusal). No text is made for a candidate that cannot be used, so that choosing
// among tens of thousands of entries takes a fraction of a millisecond.
std::optional<std::size_t> choose_entry(std::vector<EntryConditions const*> const& candidates,
                                        DeviceDescription const& device,
                                        RuntimeBackend const& backend);

// Why an entry with these conditions, usable on `device`, is the one to use (Selection::why).
std::string why_chosen(EntryConditions const& conditions, DeviceDescription const& device);

} // namespace tensoracle::deploy
