// The IO signature as headers and manifests record it, read (see io_signature.hpp).
#include "deploy/io_signature.hpp"

#include "tensoracle/errors.hpp"

#include <cstdint>
#include <limits>
#include <set>
#include <string_view>
#include <utility>

namespace tensoracle::deploy {
namespace {

using Json = nlohmann::json;

using Members = JsonMembers<InvalidArgument>;

[[noreturn]] void refuse(JsonPlace const& field, Json const& value, std::string_view expected) {
    refuse_json<InvalidArgument>(field, value, expected);
}

// A shape: whole numbers, each >= `lowest` (-1 for a build-time shape, 0 for a profile's).
Shape shape_of(Json const& value, JsonPlace const& field, std::int64_t lowest) {
    std::string const expected =
        lowest < 0 ? "an array of whole numbers >= -1" : "an array of whole numbers >= 0";
    if (!value.is_array()) {
        refuse(field, value, expected);
    }
    Shape shape;
    shape.reserve(value.size());
    for (Json const& dim : value) {
        if (!dim.is_number_integer() ||
            (dim.is_number_unsigned() &&
             dim.get<std::uint64_t>() >
                 static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) ||
            dim.get<std::int64_t>() < lowest) {
            refuse(field, value, expected);
        }
        shape.push_back(dim.get<std::int64_t>());
    }
    return shape;
}

ShapeProfile profile_of(Json const& value, JsonPlace const& field, std::size_t rank) {
    if (!value.is_object()) {
        refuse(field, value, "an object with min, opt and max");
    }
    Members const members(value, field);
    ShapeProfile profile;
    std::array<std::pair<char const*, Shape*>, 3> const parts{
        {{"min", &profile.min}, {"opt", &profile.opt}, {"max", &profile.max}}};
    for (auto const& [key, shape] : parts) {
        JsonPlace const at = field.member(key);
        *shape = shape_of(members.any(key), at, 0);
        if (shape->size() != rank) {
            refuse(at, value.at(key),
                   "a shape of rank " + std::to_string(rank) + " (the tensor's)");
        }
    }
    return profile;
}

TensorDescription tensor_of(Json const& value, JsonPlace const& where) {
    if (!value.is_object()) {
        refuse(where, value, "an object");
    }
    Members const members(value, where);
    TensorDescription tensor;
    tensor.name = members.text("name");
    if (tensor.name.empty()) {
        refuse(where.member("name"), tensor.name, "a tensor name");
    }
    std::string const mode = members.text("mode");
    if (mode != "INPUT" && mode != "OUTPUT") {
        refuse(where.member("mode"), mode, R"("INPUT" or "OUTPUT")");
    }
    tensor.is_input = mode == "INPUT";
    tensor.dtype = members.text("dtype");
    if (!element_bits(tensor.dtype)) {
        refuse(where.member("dtype"), tensor.dtype, "a TensorRT DataType name (FLOAT, HALF, ...)");
    }
    tensor.shape = shape_of(members.any("shape"), where.member("shape"), -1);
    // A header may leave out location and format (its schema does): TensorRT's defaults then,
    // which the engine's own report is checked against before anything runs.
    if (value.contains("location")) {
        tensor.location = members.text("location");
    }
    if (tensor.location != "DEVICE" && tensor.location != "HOST") {
        refuse(where.member("location"), tensor.location, R"("DEVICE" or "HOST")");
    }
    if (value.contains("format")) {
        tensor.format = members.text("format");
    }
    if (tensor.is_input) {
        auto const found = value.find("profile");
        if (found != value.end() && !found->is_null()) {
            tensor.profile = profile_of(*found, where.member("profile"), tensor.shape.size());
        }
    }
    return tensor;
}

} // namespace

std::vector<TensorDescription> io_from_json(Json const& io, JsonPlace const& where) {
    if (io.is_null()) {
        throw InvalidArgument(where.text() + " is null: the entry records no IO signature",
                              Refusal{.subject = where.subject(),
                                      .field = where.field(),
                                      .observed = "null",
                                      .expected = "an IO signature"});
    }
    if (!io.is_object()) {
        refuse(where, io, "an object");
    }
    Json const& tensors = Members(io, where).any("tensors");
    JsonPlace const field = where.member("tensors");
    if (!tensors.is_array()) {
        refuse(field, tensors, "an array");
    }
    std::vector<TensorDescription> described;
    described.reserve(tensors.size());
    std::set<std::string> names;
    for (std::size_t index = 0; index < tensors.size(); ++index) {
        JsonPlace const at = field.index(index);
        TensorDescription tensor = tensor_of(tensors[index], at);
        if (!names.insert(tensor.name).second) {
            refuse(at.member("name"), tensor.name, "a name no other tensor has");
        }
        described.push_back(std::move(tensor));
    }
    return described;
}

} // namespace tensoracle::deploy
