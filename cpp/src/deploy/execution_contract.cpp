// The execution contract of a deployed engine (see execution_contract.hpp): the Python execution
// unit's rules (python/src/tensoracle/execution/io_table.py), with its messages, over described
// tensors. Nothing here calls TensorRT or CUDA.
#include "tensoracle/deploy/execution_contract.hpp"

#include "deploy/io_difference.hpp"
#include "tensoracle/errors.hpp"
#include "text/message_text.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <iterator>
#include <limits>
#include <set>
#include <utility>

namespace tensoracle::deploy {
namespace {

constexpr char const* kClosed = "the execution unit is closed";
constexpr char const* kLinear = "LINEAR";

std::string named(std::string_view name) {
    return "'" + std::string(name) + "'";
}

std::string named_list(std::vector<std::string> const& names) {
    std::vector<std::string> parts;
    parts.reserve(names.size());
    for (auto const& name : names) {
        parts.push_back(named(name));
    }
    return joined(parts, ", ");
}

std::string address_text(void const* address) {
    auto const value = reinterpret_cast<std::uintptr_t>(address);
    std::array<char, 2 * sizeof(std::uintptr_t)> digits{};
    auto const result = std::to_chars(digits.data(), digits.data() + digits.size(), value, 16);
    return "0x" + std::string(digits.data(), result.ptr);
}

bool dynamic(Shape const& shape) {
    return std::find(shape.begin(), shape.end(), -1) != shape.end();
}

std::string engine_text(std::filesystem::path const& engine) {
    return engine.empty() ? std::string("the engine") : "the engine '" + engine.string() + "'";
}

std::string profile_range(TensorDescription const& tensor) {
    if (!tensor.profile) {
        return shape_text(tensor.shape) + " to " + shape_text(tensor.shape);
    }
    return shape_text(tensor.profile->min) + " to " + shape_text(tensor.profile->max);
}

bool ranged(TensorDescription const& tensor) {
    return tensor.is_input && dynamic(tensor.shape) && tensor.profile &&
           tensor.profile->min != tensor.profile->max;
}

Shape creation_shape(TensorDescription const& tensor) {
    if (!dynamic(tensor.shape) || !tensor.profile) {
        return tensor.shape;
    }
    return tensor.profile->min == tensor.profile->max ? tensor.profile->min : tensor.profile->opt;
}

} // namespace

ExecutionContract::ExecutionContract(std::vector<TensorDescription> tensors,
                                     std::filesystem::path engine, std::int32_t profile,
                                     bool value_dependent_outputs)
    : engine_(std::move(engine)), profile_(profile), tensors_(std::move(tensors)),
      allow_value_dependent_(value_dependent_outputs) {
    std::vector<std::string> problems;
    std::set<std::string> names;
    for (auto const& tensor : tensors_) {
        if (!names.insert(tensor.name).second) {
            throw EngineIOError(engine_text(engine_) + " lists the tensor name " +
                                    named(tensor.name) + " twice",
                                Refusal{.subject = engine_.string(),
                                        .field = "tensors",
                                        .observed = named(tensor.name) + " twice",
                                        .expected = "a name no other tensor has"});
        }
        std::string const kind = tensor.is_input ? "input " : "output ";
        if (tensor.location == "HOST") {
            problems.push_back(named(tensor.name) + " is a HOST-location tensor");
        } else if (tensor.location != "DEVICE") {
            problems.push_back(named(tensor.name) + " has the location " + tensor.location +
                               " (expected DEVICE)");
        }
        if (tensor.is_shape_tensor) {
            problems.push_back(kind + named(tensor.name) +
                               (tensor.is_input
                                    ? " is a shape tensor (its values set shapes)"
                                    : " is a shape tensor (TensorRT computes its values during "
                                      "shape inference)"));
        }
        if (tensor.format != kLinear) {
            problems.push_back(named(tensor.name) + " has the IO format " + tensor.format +
                               " (only LINEAR buffers, row-major and unpadded, can be sized from "
                               "the tensor shape)");
        }
        if (std::any_of(tensor.shape.begin(), tensor.shape.end(),
                        [](std::int64_t dim) { return dim < -1; })) {
            problems.push_back(kind + named(tensor.name) + " has the shape " +
                               shape_text(tensor.shape) + " (expected dimensions >= -1)");
        }
        if (tensor.is_input && dynamic(tensor.shape) && !tensor.profile) {
            problems.push_back("input " + named(tensor.name) + " has the dynamic shape " +
                               shape_text(tensor.shape) + " but no profile");
        }
        if (tensor.profile) {
            auto const rank = tensor.shape.size();
            if (tensor.profile->min.size() != rank || tensor.profile->opt.size() != rank ||
                tensor.profile->max.size() != rank) {
                problems.push_back(kind + named(tensor.name) + " has the shape " +
                                   shape_text(tensor.shape) + " but the profile " +
                                   profile_text(tensor.profile) + " (expected rank " +
                                   std::to_string(rank) + ")");
            }
        }
        if (!tensor.aliased_input.empty() && tensor.is_input) {
            problems.push_back("input " + named(tensor.name) + " aliases " +
                               named(tensor.aliased_input) + " (only outputs alias an input)");
        }
    }
    for (auto const& tensor : tensors_) {
        if (tensor.aliased_input.empty() || tensor.is_input) {
            continue;
        }
        std::size_t const source = index_of(tensor.aliased_input);
        if (source == tensors_.size() || !tensors_[source].is_input) {
            problems.push_back("output " + named(tensor.name) + " aliases " +
                               named(tensor.aliased_input) + ", not an input");
        }
    }
    if (!problems.empty()) {
        throw EngineIOError(engine_text(engine_) +
                                " cannot be run by an execution unit: " + joined(problems, "; "),
                            Refusal{.subject = engine_.string(),
                                    .field = "tensors",
                                    .observed = joined(problems, "; "),
                                    .expected = "tensors an execution unit can run"});
    }
    // Inputs first, as the Python unit orders its names: tensors_ is kept in that order too, so
    // that bind_addresses's result lists inputs, then outputs.
    std::stable_partition(tensors_.begin(), tensors_.end(),
                          [](TensorDescription const& tensor) { return tensor.is_input; });
    for (auto const& tensor : tensors_) {
        (tensor.is_input ? inputs_ : outputs_).push_back(tensor.name);
        if (ranged(tensor)) {
            ranged_.push_back(tensor.name);
        }
    }
    shapes_.resize(tensors_.size());
    std::string const listed = named_list(ranged_);
    not_shaped_reason_ =
        "input shapes are not set: call set_input_shapes with every ranged input (" + listed + ")";
    incomplete_reason_ = "input shapes are incomplete after a failed set_input_shapes call: call "
                         "set_input_shapes again with every ranged input (" +
                         listed + ")";
    blocked_ = "the execution unit is not created: its output shapes at creation are not checked";
}

std::size_t ExecutionContract::index_of(std::string_view name) const {
    auto const found =
        std::find_if(tensors_.begin(), tensors_.end(),
                     [&](TensorDescription const& tensor) { return tensor.name == name; });
    return static_cast<std::size_t>(found - tensors_.begin());
}

bool ExecutionContract::value_dependent(std::string_view name) const {
    return std::find(value_dependent_.begin(), value_dependent_.end(), name) !=
           value_dependent_.end();
}

std::vector<std::string> ExecutionContract::addressed_names() const {
    std::vector<std::string> names;
    for (auto const& tensor : tensors_) {
        if (!value_dependent(tensor.name)) {
            names.push_back(tensor.name);
        }
    }
    return names;
}

void ExecutionContract::check_open() const {
    if (closed_) {
        throw Error(kClosed);
    }
}

TensorDescription const& ExecutionContract::tensor(std::string_view name) const {
    check_open();
    std::size_t const index = index_of(name);
    if (index == tensors_.size()) {
        std::vector<std::string> names = inputs_;
        names.insert(names.end(), outputs_.begin(), outputs_.end());
        throw InvalidArgument("unknown tensor name " + named(name) + "; the engine has " +
                              named_list(names));
    }
    return tensors_[index];
}

std::vector<NamedShape> ExecutionContract::creation_shapes() const {
    check_open();
    std::vector<NamedShape> shapes;
    for (auto const& tensor : tensors_) {
        if (tensor.is_input) {
            shapes.push_back({tensor.name, creation_shape(tensor)});
        }
    }
    return shapes;
}

void ExecutionContract::check_creation_output_shapes(std::vector<ReportedShape> const& outputs) {
    check_open();
    std::vector<std::string> dependent;
    std::vector<std::string> dependent_names;
    std::vector<Shape> resolved(tensors_.size());
    for (std::size_t index = 0; index < tensors_.size(); ++index) {
        TensorDescription const& tensor = tensors_[index];
        if (tensor.is_input) {
            resolved[index] = creation_shape(tensor);
            continue;
        }
        auto const found =
            std::find_if(outputs.begin(), outputs.end(),
                         [&](ReportedShape const& output) { return output.name == tensor.name; });
        if (found == outputs.end() || !found->shape) {
            dependent.push_back(named(tensor.name) + " (TensorRT reports no valid shape)");
            resolved[index] = tensor.shape;
        } else if (dynamic(*found->shape)) {
            dependent.push_back(named(tensor.name) + " " + shape_text(*found->shape));
            resolved[index] = *found->shape;
        } else {
            resolved[index] = *found->shape;
            continue;
        }
        dependent_names.push_back(tensor.name);
    }
    if (!dependent.empty() && !allow_value_dependent_) {
        throw EngineIOError(
            engine_text(engine_) +
                ": outputs with data-dependent sizes need an allocator for "
                "their memory, and this execution unit has none "
                "(ExecutionOptions::output_memory): " +
                joined(dependent, ", "),
            Refusal{.subject = engine_.string(),
                    .field = "tensors",
                    .observed = "outputs with data-dependent sizes: " + joined(dependent, ", "),
                    .expected = "an allocator for their memory",
                    .remedy = "set ExecutionOptions::output_memory"});
    }
    value_dependent_ = std::move(dependent_names);
    shapes_ = std::move(resolved);
    blocked_ = ranged_.empty() ? std::string() : not_shaped_reason_;
}

std::vector<NamedShape>
ExecutionContract::check_input_shapes(std::vector<NamedShape> const& shapes) const {
    check_open();
    std::vector<std::string> problems;
    std::set<std::string> given;
    auto const is_ranged = [&](std::string const& name) {
        return std::find(ranged_.begin(), ranged_.end(), name) != ranged_.end();
    };
    for (auto const& [name, shape] : shapes) {
        if (!given.insert(name).second) {
            problems.push_back(named(name) + " is given more than once");
        } else if (is_ranged(name)) {
            continue;
        } else if (std::find(inputs_.begin(), inputs_.end(), name) != inputs_.end()) {
            problems.push_back(named(name) +
                               " is not a ranged input (its shape is fixed by the engine profile)");
        } else {
            problems.push_back(named(name) + " (given " + shape_text(shape) +
                               ") is not an input of the engine");
        }
    }
    std::vector<std::string> missing;
    for (auto const& name : ranged_) {
        if (given.count(name) == 0) {
            missing.push_back(name);
        }
    }
    if (!missing.empty()) {
        problems.push_back("missing ranged inputs " + named_list(missing));
    }
    std::vector<NamedShape> checked;
    for (auto const& name : ranged_) {
        auto const found = std::find_if(shapes.begin(), shapes.end(),
                                        [&](NamedShape const& one) { return one.name == name; });
        if (found == shapes.end()) {
            continue;
        }
        Shape const& dims = found->shape;
        TensorDescription const& tensor = tensors_[index_of(name)];
        if (dims.size() != tensor.shape.size()) {
            problems.push_back(named(name) + ": shape " + shape_text(dims) + " has rank " +
                               std::to_string(dims.size()) + ", expected " +
                               std::to_string(tensor.shape.size()));
            continue;
        }
        Shape negative;
        std::copy_if(dims.begin(), dims.end(), std::back_inserter(negative),
                     [](std::int64_t dim) { return dim < 0; });
        if (!negative.empty()) {
            problems.push_back(named(name) + ": shape " + shape_text(dims) + " has dimensions " +
                               shape_text(negative) + " that are not nonnegative");
            continue;
        }
        bool within = true;
        for (std::size_t axis = 0; axis < dims.size(); ++axis) {
            within = within && tensor.profile->min[axis] <= dims[axis] &&
                     dims[axis] <= tensor.profile->max[axis];
        }
        if (!within) {
            problems.push_back(named(name) + ": shape " + shape_text(dims) +
                               " is outside profile " + std::to_string(profile_) +
                               ", which allows " + profile_range(tensor));
            continue;
        }
        checked.push_back({name, dims});
    }
    if (!problems.empty()) {
        throw InvalidArgument("invalid input shapes: " + joined(problems, "; "));
    }
    return checked;
}

void ExecutionContract::reject_input_shape(std::string const& name, Shape const& shape,
                                           std::string const& reason) {
    check_open();
    blocked_ = incomplete_reason_;
    std::size_t const index = index_of(name);
    std::string const allowed = index == tensors_.size()
                                    ? std::string()
                                    : " (profile " + std::to_string(profile_) + " allows " +
                                          profile_range(tensors_[index]) + ")";
    throw TensorRtError("TensorRT rejected the shape " + shape_text(shape) + " of input " +
                        named(name) + allowed + ": " + reason +
                        "; input shapes stay incomplete until set_input_shapes succeeds");
}

void ExecutionContract::resolve_output_shapes(std::vector<NamedShape> const& inputs,
                                              std::vector<ReportedShape> const& outputs) {
    check_open();
    std::vector<std::string> unresolved;
    std::vector<Shape> shapes = shapes_;
    for (std::size_t index = 0; index < tensors_.size(); ++index) {
        TensorDescription const& tensor = tensors_[index];
        if (tensor.is_input) {
            auto const found =
                std::find_if(inputs.begin(), inputs.end(),
                             [&](NamedShape const& input) { return input.name == tensor.name; });
            if (found != inputs.end()) {
                shapes[index] = found->shape;
            }
            continue;
        }
        if (value_dependent(tensor.name)) {
            continue; // known during an enqueue
        }
        auto const found =
            std::find_if(outputs.begin(), outputs.end(),
                         [&](ReportedShape const& output) { return output.name == tensor.name; });
        if (found == outputs.end() || !found->shape) {
            unresolved.push_back(named(tensor.name) + " (TensorRT reports no valid shape)");
        } else if (dynamic(*found->shape)) {
            unresolved.push_back(named(tensor.name) + " " + shape_text(*found->shape));
        } else {
            shapes[index] = *found->shape;
        }
    }
    if (!unresolved.empty()) {
        blocked_ = incomplete_reason_;
        bool const one = unresolved.size() == 1;
        throw Error(std::string("after set_input_shapes, ") +
                    (one ? "the shape of output " : "the shapes of outputs ") +
                    joined(unresolved, ", ") + (one ? " is" : " are") +
                    " still unresolved: not computable from the input shapes that are set; "
                    "enqueue and shape queries are refused until set_input_shapes resolves every "
                    "output");
    }
    shapes_ = std::move(shapes);
    blocked_.clear();
}

Shape const& ExecutionContract::shape(std::string_view name) const {
    TensorDescription const& described = tensor(name);
    if (!blocked_.empty()) {
        throw Error("cannot report the shape of " + named(described.name) + ": " + blocked_);
    }
    if (value_dependent(described.name)) {
        throw Error("the shape of output " + named(described.name) +
                    " depends on tensor values: TensorRT reports it during an enqueue "
                    "(Execution::value_dependent_output)");
    }
    return shapes_[index_of(name)];
}

std::vector<TensorAddress>
ExecutionContract::bind_addresses(std::vector<TensorAddress> const& addresses) {
    check_open();
    bound_ = false;
    std::vector<std::string> problems;
    std::vector<std::string> twice;
    std::vector<std::string> unknown;
    std::set<std::string> given;
    for (auto const& [name, address] : addresses) {
        if (!given.insert(name).second) {
            twice.push_back(name);
        } else if (index_of(name) == tensors_.size()) {
            unknown.push_back(name);
        }
    }
    std::vector<std::string> missing;
    std::vector<TensorAddress> ordered;
    ordered.reserve(tensors_.size());
    std::vector<std::string> allocated;
    for (auto const& tensor : tensors_) {
        auto const found =
            std::find_if(addresses.begin(), addresses.end(),
                         [&](TensorAddress const& one) { return one.name == tensor.name; });
        if (value_dependent(tensor.name)) {
            if (found != addresses.end()) {
                allocated.push_back(tensor.name);
            }
            continue;
        }
        if (found == addresses.end()) {
            missing.push_back(tensor.name);
            continue;
        }
        ordered.push_back(*found);
    }
    if (!allocated.empty()) {
        problems.push_back("the memory of " + named_list(allocated) +
                           " comes from the unit's output allocator (sizes that depend on "
                           "tensor values): give no address for them");
    }
    if (!missing.empty()) {
        problems.push_back("missing addresses for " + named_list(missing));
    }
    if (!unknown.empty()) {
        problems.push_back("unknown tensor names " + named_list(unknown));
    }
    if (!twice.empty()) {
        problems.push_back("more than one address for " + named_list(twice));
    }
    for (auto const& [name, address] : ordered) {
        if (address == nullptr) {
            problems.push_back(named(name) + ": the address is null");
        } else if (reinterpret_cast<std::uintptr_t>(address) % kTensorAddressAlignment != 0) {
            problems.push_back(named(name) + ": address " + address_text(address) +
                               " is not a multiple of 256 (TensorRT needs 256-byte aligned "
                               "tensors)");
        }
    }
    for (auto const& tensor : tensors_) {
        if (tensor.aliased_input.empty()) {
            continue;
        }
        auto const address_of = [&](std::string const& name) -> TensorAddress const* {
            auto const found =
                std::find_if(ordered.begin(), ordered.end(),
                             [&](TensorAddress const& one) { return one.name == name; });
            return found == ordered.end() ? nullptr : &*found;
        };
        TensorAddress const* output = address_of(tensor.name);
        TensorAddress const* input = address_of(tensor.aliased_input);
        if (output != nullptr && input != nullptr && output->address != input->address) {
            problems.push_back("output " + named(tensor.name) + " is written in place of input " +
                               named(tensor.aliased_input) + ": its address must be " +
                               address_text(input->address) + ", got " +
                               address_text(output->address));
        }
    }
    if (!problems.empty()) {
        throw InvalidArgument("invalid tensor addresses: " + joined(problems, "; "));
    }
    bound_ = true;
    return ordered;
}

void ExecutionContract::reject_address(std::string const& name, void const* address) {
    check_open();
    bound_ = false;
    throw TensorRtError(
        "TensorRT refused the address " + address_text(address) + " for tensor " + named(name) +
        " (misaligned or otherwise unusable; see the TensorRT log); no addresses are "
        "bound until bind_addresses succeeds");
}

void ExecutionContract::check_enqueue() const {
    check_open();
    if (!blocked_.empty()) {
        throw Error("cannot enqueue: " + blocked_);
    }
    if (!bound_) {
        std::vector<std::string> const names = addressed_names();
        throw Error("cannot enqueue: tensor addresses are not bound: call bind_addresses with "
                    "one device address for every tensor (" +
                    named_list(names) + ")");
    }
}

void ExecutionContract::close() noexcept {
    closed_ = true;
    bound_ = false;
}

} // namespace tensoracle::deploy
