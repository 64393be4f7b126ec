// The one IO comparison (deploy/io_difference.hpp): each field's difference as data, the order in
// which differences are found, the placement and profile-order rules, and the fixed-input profile
// rule. No TensorRT is involved.
#include "deploy/io_difference.hpp"
#include "support/tensor_descriptions.hpp"

#include <gtest/gtest.h>

namespace tensoracle::deploy {
namespace {

using test_tensors::input;
using test_tensors::output;

// A ranged input "x", a fixed input "bias" whose profile is recorded, and an output "y".
std::vector<TensorDescription> recorded() {
    return {input("x", {-1, 3}, ShapeProfile{{1, 3}, {4, 3}, {8, 3}}),
            input("bias", {3}, ShapeProfile{{3}, {3}, {3}}), output("y", {-1, 3})};
}

// The difference as one line, to compare whole.
std::string found(std::vector<TensorDescription> const& observed,
                  std::vector<TensorDescription> const& expected, IoComparison rules = {}) {
    auto const difference = first_io_difference(observed, expected, rules);
    if (!difference) {
        return "none";
    }
    return difference->tensor + " " + difference->field + ": " + difference->observed + " | " +
           difference->expected;
}

TEST(IoDifference, EqualDescriptionsInAnyOrderHaveNone) {
    auto const expected = recorded();
    EXPECT_EQ(found(expected, expected), "none");
    EXPECT_EQ(found({expected[2], expected[0], expected[1]}, expected), "none");
}

TEST(IoDifference, EachFieldIsNamedWithBothValues) {
    auto const expected = recorded();
    auto observed = expected;
    observed[2].is_input = true;
    EXPECT_EQ(found(observed, expected), "y mode: INPUT | OUTPUT");
    observed = expected;
    observed[2].dtype = "FLOAT";
    EXPECT_EQ(found(observed, expected), "y dtype: FLOAT | HALF");
    observed = expected;
    observed[0].shape = {-1, 4};
    EXPECT_EQ(found(observed, expected), "x shape: [-1, 4] | [-1, 3]");
    observed = expected;
    observed[2].location = "HOST";
    EXPECT_EQ(found(observed, expected), "y location: HOST | DEVICE");
    observed = expected;
    observed[2].format = "CHW32";
    EXPECT_EQ(found(observed, expected), "y format: CHW32 | LINEAR");
    observed = expected;
    observed[0].profile->max = {16, 3};
    EXPECT_EQ(found(observed, expected),
              "x profile: min [1, 3] opt [4, 3] max [16, 3] | min [1, 3] opt [4, 3] max [8, 3]");
    observed = expected;
    observed[1].name = "b";
    EXPECT_EQ(found(observed, expected),
              "bias name: no such tensor (engine has ['x', 'b', 'y']) | 'bias'");
    observed = expected;
    observed.push_back(output("z", {1}));
    EXPECT_EQ(found(observed, expected),
              "z name: 'z' | only the manifest's tensors ['x', 'bias', 'y']");
}

TEST(IoDifference, TheOrderIsNamesThenEachTensorsFields) {
    auto const expected = recorded();
    auto observed = expected;
    observed[0].profile->max = {16, 3}; // x's profile
    observed[2].dtype = "FLOAT";        // y's dtype, a later tensor
    EXPECT_EQ(found(observed, expected).substr(0, 10), "x profile:");
    // tensoracle 1.x's order for a declared engine: every tensor's fields, then the profiles.
    EXPECT_EQ(found(observed, expected, {.profiles_last = true}), "y dtype: FLOAT | HALF");
    observed[0].dtype = "HALF"; // x's dtype comes before its own profile either way
    EXPECT_EQ(found(observed, expected), "x dtype: HALF | FLOAT");
    observed.push_back(output("z", {1}));
    observed[1].name = "b"; // a missing tensor comes before an extra one, and before fields
    EXPECT_EQ(found(observed, expected).substr(0, 10), "bias name:");
    observed[1].name = "bias";
    EXPECT_EQ(found(observed, expected).substr(0, 7), "z name:");
}

TEST(IoDifference, PlacementIsComparedWhereStatedWhenAsked) {
    auto expected = recorded();
    auto observed = expected;
    observed[2].location = "HOST";
    expected[2].location.clear(); // not stated
    EXPECT_EQ(found(observed, expected, {.placement_where_stated = true}), "none");
    EXPECT_EQ(found(observed, expected), "y location: HOST | ");
    expected[2].location = "DEVICE";
    EXPECT_EQ(found(observed, expected, {.placement_where_stated = true}),
              "y location: HOST | DEVICE");
}

TEST(IoDifference, AFixedInputsProfileIsItsShape) {
    auto const expected = recorded();
    auto observed = expected;
    observed[1].profile.reset(); // TensorRT reports no profile for a fixed input
    EXPECT_EQ(found(observed, expected), "none");
    auto other = expected;
    other[1].profile = ShapeProfile{{3}, {3}, {4}}; // a range the fixed shape is not
    EXPECT_EQ(found(observed, other), "bias profile: none | min [3] opt [3] max [4]");
    observed = expected;
    observed[0].profile.reset(); // a dynamic input without its profile differs
    EXPECT_EQ(found(observed, expected), "x profile: none | min [1, 3] opt [4, 3] max [8, 3]");
    // An expected input without a recorded profile is not compared on it.
    other = expected;
    other[0].profile.reset();
    EXPECT_EQ(found(expected, other), "none");
}

} // namespace
} // namespace tensoracle::deploy
