// The one comparison of two IO descriptions (an engine's, or a recorded signature, against the
// one it must equal): where they differ first, as data. Each caller renders its own message
// from it: check_engine_io (EngineIOError), the Python package's check of a built or saved
// engine against its declaration, and its check of a deserialized deployed engine.
#pragma once

#include "tensoracle/deploy/execution_contract.hpp"

#include <optional>
#include <string>
#include <vector>

namespace tensoracle::deploy {

// A profile as messages show it: "min [1, 3] opt [4, 3] max [8, 3]", or "none".
std::string profile_text(std::optional<ShapeProfile> const& profile);

// How two IO descriptions are compared.
struct IoComparison {
    // Location and format are compared only where the expected tensor states them (a non-empty
    // text); otherwise always.
    bool placement_where_stated = false;
    // Profiles come after every tensor's other fields (tensoracle 1.x's order for a declared
    // engine); otherwise each input's profile comes right after its format.
    bool profiles_last = false;
};

// The first place where `observed` differs from `expected`. `field` is "name", "mode", "dtype",
// "shape", "location", "format" or "profile"; `observed` and `expected` are the two values as
// check_engine_io's messages show them. For "name", the tensor is either missing from
// `observed` (named by `expected`) or only in `observed`.
struct IoDifference {
    std::string tensor;
    std::string field;
    std::string observed;
    std::string expected;
};

// The order: every expected tensor absent from `observed` (in `expected`'s order), then every
// observed tensor absent from `expected` (in `observed`'s order); then, per expected tensor, its
// mode, dtype, shape, location, format and, for an input whose expected profile is recorded,
// profile 0 (after all tensors' other fields where `rules.profiles_last`). A fixed input's
// profile is its shape: an observed input without a profile and without a dynamic dimension
// matches an expected profile whose min, opt and max all equal its shape (TensorRT reports a
// profile only for dynamic inputs). Tensor names match in any order.
std::optional<IoDifference> first_io_difference(std::vector<TensorDescription> const& observed,
                                                std::vector<TensorDescription> const& expected,
                                                IoComparison const& rules = {});

// Where `difference` lies in an entry whose IO signature is `expected`, in the refusals' one path
// syntax: "io.tensors[1].dtype" for a member of the entry's tensor, "io.tensors" for a tensor
// only the observed IO has.
std::string io_field(IoDifference const& difference,
                     std::vector<TensorDescription> const& expected);

} // namespace tensoracle::deploy
