// The execution contract of a deployed engine, on described tensors: what creation refuses, how
// input shapes, output shapes and addresses are checked before TensorRT would be called, and the
// message of each refusal. No TensorRT is involved.
#include "deploy/io_signature.hpp"
#include "deploy/json_forms.hpp"
#include "support/error_message.hpp"
#include "support/tensor_descriptions.hpp"
#include "tensoracle/deploy/execution_contract.hpp"
#include "tensoracle/errors.hpp"

#include <cstdint>
#include <functional>
#include <gtest/gtest.h>

namespace tensoracle::deploy {
namespace {

using Json = nlohmann::json;

using test_tensors::input;
using test_tensors::output;

// An engine of one ranged input "x" (batch 1..8 of 3x4), one fixed input "bias" and one output.
std::vector<TensorDescription> ranged_engine() {
    return {input("x", {-1, 3, 4}, ShapeProfile{{1, 3, 4}, {4, 3, 4}, {8, 3, 4}}),
            input("bias", {3, 4}), output("y", {-1, 3, 4})};
}

constexpr char const* kEngine = "cache/encoder-0123.engine";

// The contract created as the adapter creates it: creation shapes set, outputs reported.
ExecutionContract created(std::vector<TensorDescription> tensors, Shape creation_output) {
    ExecutionContract contract(std::move(tensors), kEngine);
    contract.check_creation_output_shapes({{"y", std::move(creation_output)}});
    return contract;
}

using testing::fields_of;
using testing::message_of;
using testing::refusal_of;

std::string creation_refusal(std::vector<TensorDescription> tensors) {
    return message_of<EngineIOError>(
        [&] { ExecutionContract const refused(std::move(tensors), kEngine); });
}

// Addresses as numbers, so that messages show known values; nothing is ever read from them.
void* at(std::uintptr_t address) {
    return reinterpret_cast<void*>(address); // NOLINT(performance-no-int-to-ptr)
}

std::vector<TensorAddress> every_address() {
    return {{"x", at(0x1000)}, {"bias", at(0x2000)}, {"y", at(0x3000)}};
}

TEST(ExecutionContract, CreationRefusesWhatAnExecutionUnitCannotRun) {
    auto host = ranged_engine();
    host[1].location = "HOST";
    EXPECT_EQ(creation_refusal(host),
              "the engine 'cache/encoder-0123.engine' cannot be run by an execution unit: 'bias' "
              "is a HOST-location tensor");

    auto shape_tensors = ranged_engine();
    shape_tensors[1].is_shape_tensor = true;
    shape_tensors[2].is_shape_tensor = true;
    EXPECT_EQ(creation_refusal(shape_tensors),
              "the engine 'cache/encoder-0123.engine' cannot be run by an execution unit: input "
              "'bias' is a shape tensor (its values set shapes); output 'y' is a shape tensor "
              "(TensorRT computes its values during shape inference)");

    auto vectorized = ranged_engine();
    vectorized[2].format = "CHW32";
    EXPECT_EQ(creation_refusal(vectorized),
              "the engine 'cache/encoder-0123.engine' cannot be run by an execution unit: 'y' "
              "has the IO format CHW32 (only LINEAR buffers, row-major and unpadded, can be sized "
              "from the tensor shape)");

    auto no_profile = ranged_engine();
    no_profile[0].profile.reset();
    EXPECT_EQ(creation_refusal(no_profile),
              "the engine 'cache/encoder-0123.engine' cannot be run by an execution unit: input "
              "'x' has the dynamic shape [-1, 3, 4] but no profile");

    auto twice = ranged_engine();
    twice[2].name = "x";
    EXPECT_EQ(creation_refusal(twice),
              "the engine 'cache/encoder-0123.engine' lists the tensor name 'x' twice");

    auto aliased = ranged_engine();
    aliased[2].aliased_input = "z";
    EXPECT_EQ(creation_refusal(aliased),
              "the engine 'cache/encoder-0123.engine' cannot be run by an execution unit: output "
              "'y' aliases 'z', not an input");

    // The error carries the engine's path.
    try {
        ExecutionContract const refused(host, kEngine);
        FAIL() << "accepted";
    } catch (EngineIOError const& error) {
        EXPECT_EQ(error.path(), std::filesystem::path(kEngine));
    }
}

TEST(ExecutionContract, DataDependentOutputSizesAreRefusedAtCreationWithoutAnAllocator) {
    ExecutionContract contract(ranged_engine(), kEngine);
    ASSERT_EQ(contract.creation_shapes().size(), 2U);
    EXPECT_EQ(contract.creation_shapes()[0].name, "x");
    EXPECT_EQ(contract.creation_shapes()[0].shape, (Shape{4, 3, 4})); // the optimum
    EXPECT_EQ(contract.creation_shapes()[1].shape, (Shape{3, 4}));
    EXPECT_EQ(message_of<EngineIOError>([&] {
                  contract.check_creation_output_shapes({{"y", Shape{-1, 3, 4}}});
              }),
              "the engine 'cache/encoder-0123.engine': outputs with data-dependent sizes need an "
              "allocator for their memory, and this execution unit has none "
              "(ExecutionOptions::output_memory): 'y' [-1, 3, 4]");
    EXPECT_EQ(message_of<EngineIOError>([&] {
                  contract.check_creation_output_shapes({{"y", {}}});
              }),
              "the engine 'cache/encoder-0123.engine': outputs with data-dependent sizes need an "
              "allocator for their memory, and this execution unit has none "
              "(ExecutionOptions::output_memory): 'y' (TensorRT reports no valid shape)");
    // Before the creation check, nothing may be enqueued.
    EXPECT_EQ(message_of<Error>([&] { contract.check_enqueue(); }),
              "cannot enqueue: the execution unit is not created: its output shapes at creation "
              "are not checked");
}

// With an allocator for them (the adapter's ExecutionOptions::output_memory), outputs whose sizes
// depend on tensor values are recorded at creation: they take no address and have no shape
// before an enqueue; every other tensor is checked as before.
TEST(ExecutionContract, WithAnAllocatorValueDependentOutputsTakeNoAddressAndHaveNoShape) {
    auto tensors = ranged_engine();
    tensors.push_back(output("count", {1}));
    ExecutionContract contract(tensors, kEngine, 0, true);
    contract.check_creation_output_shapes({{"y", Shape{-1, 3, 4}}, {"count", Shape{1}}});
    EXPECT_EQ(contract.value_dependent_output_names(), std::vector<std::string>{"y"});
    contract.resolve_output_shapes(contract.check_input_shapes({{"x", {2, 3, 4}}}),
                                   {{"y", Shape{-1, 3, 4}}, {"count", Shape{1}}});
    EXPECT_TRUE(contract.shapes_set());
    EXPECT_EQ(contract.shape("x"), (Shape{2, 3, 4}));
    EXPECT_EQ(contract.shape("count"), (Shape{1}));
    EXPECT_EQ(message_of<Error>([&] { (void)contract.shape("y"); }),
              "the shape of output 'y' depends on tensor values: TensorRT reports it during an "
              "enqueue (Execution::value_dependent_output)");
    EXPECT_EQ(message_of<Error>([&] { contract.check_enqueue(); }),
              "cannot enqueue: tensor addresses are not bound: call bind_addresses with one "
              "device address for every tensor ('x', 'bias', 'count')");
    EXPECT_EQ(message_of<InvalidArgument>([&] {
                  (void)contract.bind_addresses({{"x", at(0x10000)},
                                                 {"bias", at(0x20000)},
                                                 {"count", at(0x30000)},
                                                 {"y", at(0x40000)}});
              }),
              "invalid tensor addresses: the memory of 'y' comes from the unit's output "
              "allocator (sizes that depend on tensor values): give no address for them");
    EXPECT_FALSE(contract.addresses_bound());
    auto const bound = contract.bind_addresses(
        {{"x", at(0x10000)}, {"bias", at(0x20000)}, {"count", at(0x30000)}});
    ASSERT_EQ(bound.size(), 3U);
    EXPECT_EQ(bound[2].name, "count");
    EXPECT_NO_THROW(contract.check_enqueue());
    // An output that stays unresolved without depending on values at creation still blocks.
    EXPECT_THROW(contract.resolve_output_shapes(contract.check_input_shapes({{"x", {2, 3, 4}}}),
                                                {{"y", Shape{-1, 3, 4}}, {"count", Shape{-1}}}),
                 Error);
    EXPECT_THROW(contract.check_enqueue(), Error);
}

TEST(ExecutionContract, ASinglePointProfileIsFixedAtCreation) {
    auto tensors = ranged_engine();
    tensors[0].profile = ShapeProfile{{2, 3, 4}, {2, 3, 4}, {2, 3, 4}};
    ExecutionContract contract = created(tensors, {2, 3, 4});
    EXPECT_TRUE(contract.ranged_input_names().empty());
    EXPECT_EQ(contract.creation_shapes()[0].shape, (Shape{2, 3, 4}));
    EXPECT_TRUE(contract.shapes_set());
    EXPECT_EQ(contract.shape("y"), (Shape{2, 3, 4}));
    (void)contract.bind_addresses(every_address());
    EXPECT_NO_THROW(contract.check_enqueue());
}

TEST(ExecutionContract, RangedShapesAreSetTogetherAndCheckedAgainstTheProfile) {
    ExecutionContract contract = created(ranged_engine(), {4, 3, 4});
    EXPECT_EQ(contract.ranged_input_names(), std::vector<std::string>{"x"});
    EXPECT_FALSE(contract.shapes_set());
    EXPECT_EQ(message_of<Error>([&] { (void)contract.shape("y"); }),
              "cannot report the shape of 'y': input shapes are not set: call set_input_shapes "
              "with every ranged input ('x')");

    auto const refusal = [&](std::vector<NamedShape> const& shapes) {
        return message_of<InvalidArgument>([&] { (void)contract.check_input_shapes(shapes); });
    };
    EXPECT_EQ(refusal({}), "invalid input shapes: missing ranged inputs 'x'");
    EXPECT_EQ(refusal({{"x", {2, 3}}}),
              "invalid input shapes: 'x': shape [2, 3] has rank 2, expected 3");
    EXPECT_EQ(refusal({{"x", {9, 3, 4}}}),
              "invalid input shapes: 'x': shape [9, 3, 4] is outside profile 0, which allows "
              "[1, 3, 4] to [8, 3, 4]");
    EXPECT_EQ(refusal({{"x", {2, 3, 5}}}),
              "invalid input shapes: 'x': shape [2, 3, 5] is outside profile 0, which allows "
              "[1, 3, 4] to [8, 3, 4]");
    EXPECT_EQ(refusal({{"x", {-1, 3, 4}}}),
              "invalid input shapes: 'x': shape [-1, 3, 4] has dimensions [-1] that are not "
              "nonnegative");
    EXPECT_EQ(refusal({{"x", {2, 3, 4}}, {"bias", {3, 4}}, {"z", {1}}}),
              "invalid input shapes: 'bias' is not a ranged input (its shape is fixed by the "
              "engine profile); 'z' (given [1]) is not an input of the engine");
    EXPECT_EQ(refusal({{"x", {2, 3, 4}}, {"x", {3, 3, 4}}}),
              "invalid input shapes: 'x' is given more than once");
    EXPECT_FALSE(contract.shapes_set()); // refused before TensorRT: nothing changed

    auto const checked = contract.check_input_shapes({{"x", {2, 3, 4}}});
    ASSERT_EQ(checked.size(), 1U);
    EXPECT_EQ(checked[0].shape, (Shape{2, 3, 4}));
    contract.resolve_output_shapes(checked, {{"y", Shape{2, 3, 4}}});
    EXPECT_TRUE(contract.shapes_set());
    EXPECT_EQ(contract.shape("x"), (Shape{2, 3, 4}));
    EXPECT_EQ(contract.shape("bias"), (Shape{3, 4}));
    EXPECT_EQ(contract.shape("y"), (Shape{2, 3, 4}));
    EXPECT_EQ(message_of<InvalidArgument>([&] { (void)contract.shape("z"); }),
              "unknown tensor name 'z'; the engine has 'x', 'bias', 'y'");
}

TEST(ExecutionContract, AnOutputLeftUnresolvedIsAnErrorNamingIt) {
    ExecutionContract contract = created(ranged_engine(), {4, 3, 4});
    auto const checked = contract.check_input_shapes({{"x", {2, 3, 4}}});
    EXPECT_EQ(message_of<Error>([&] {
                  contract.resolve_output_shapes(checked, {{"y", Shape{2, -1, 4}}});
              }),
              "after set_input_shapes, the shape of output 'y' [2, -1, 4] is still unresolved: "
              "not computable from the input shapes that are set; enqueue and shape queries are "
              "refused until set_input_shapes resolves every output");
    EXPECT_FALSE(contract.shapes_set());
    (void)contract.bind_addresses(every_address());
    EXPECT_EQ(message_of<Error>([&] { contract.check_enqueue(); }),
              "cannot enqueue: input shapes are incomplete after a failed set_input_shapes call: "
              "call set_input_shapes again with every ranged input ('x')");

    auto two = ranged_engine();
    two.push_back(output("w", {-1}));
    ExecutionContract both(two, kEngine);
    both.check_creation_output_shapes({{"y", Shape{4, 3, 4}}, {"w", Shape{4}}});
    EXPECT_EQ(message_of<Error>([&] {
                  both.resolve_output_shapes(checked, {{"y", {}}});
              }),
              "after set_input_shapes, the shapes of outputs 'y' (TensorRT reports no valid "
              "shape), 'w' (TensorRT reports no valid shape) are still unresolved: not computable "
              "from the input shapes that are set; enqueue and shape queries are refused until "
              "set_input_shapes resolves every output");
}

TEST(ExecutionContract, AShapeTensorRtRejectsLeavesShapesIncomplete) {
    ExecutionContract contract = created(ranged_engine(), {4, 3, 4});
    auto const checked = contract.check_input_shapes({{"x", {2, 3, 4}}});
    contract.resolve_output_shapes(checked, {{"y", Shape{2, 3, 4}}});
    EXPECT_EQ(message_of<Error>([&] {
                  contract.reject_input_shape("x", {3, 3, 4}, "setInputShape returned false");
              }),
              "TensorRT rejected the shape [3, 3, 4] of input 'x' (profile 0 allows [1, 3, 4] to "
              "[8, 3, 4]): setInputShape returned false; input shapes stay incomplete until "
              "set_input_shapes succeeds");
    EXPECT_FALSE(contract.shapes_set());
}

TEST(ExecutionContract, ExactlyOneAlignedNonNullAddressPerTensor) {
    ExecutionContract contract = created(ranged_engine(), {4, 3, 4});
    auto const refusal = [&](std::vector<TensorAddress> const& addresses) {
        return message_of<InvalidArgument>([&] { (void)contract.bind_addresses(addresses); });
    };
    EXPECT_EQ(refusal({{"x", at(0x1000)}}),
              "invalid tensor addresses: missing addresses for 'bias', 'y'");
    auto extra = every_address();
    extra.push_back({"z", at(0x4000)});
    extra.push_back({"x", at(0x5000)});
    EXPECT_EQ(refusal(extra),
              "invalid tensor addresses: unknown tensor names 'z'; more than one address for 'x'");
    EXPECT_EQ(refusal({{"x", at(0x1000)}, {"bias", nullptr}, {"y", at(0x3010)}}),
              "invalid tensor addresses: 'bias': the address is null; 'y': address 0x3010 is not "
              "a multiple of 256 (TensorRT needs 256-byte aligned tensors)");
    EXPECT_FALSE(contract.addresses_bound());

    // In the engine's order, whatever the order given.
    auto const bound =
        contract.bind_addresses({{"y", at(0x3000)}, {"x", at(0x1000)}, {"bias", at(0x2000)}});
    ASSERT_EQ(bound.size(), 3U);
    EXPECT_EQ(bound[0].name, "x");
    EXPECT_EQ(bound[1].name, "bias");
    EXPECT_EQ(bound[2].name, "y");
    EXPECT_EQ(bound[2].address, at(0x3000));
    EXPECT_TRUE(contract.addresses_bound());

    // A refused set leaves no stale addresses bound.
    EXPECT_THROW((void)contract.bind_addresses({}), InvalidArgument);
    EXPECT_FALSE(contract.addresses_bound());
    (void)contract.bind_addresses(every_address());
    EXPECT_EQ(message_of<Error>([&] { contract.reject_address("y", at(0x3000)); }),
              "TensorRT refused the address 0x3000 for tensor 'y' (misaligned or otherwise "
              "unusable; see the TensorRT log); no addresses are bound until bind_addresses "
              "succeeds");
    EXPECT_FALSE(contract.addresses_bound());
}

TEST(ExecutionContract, AnOutputWrittenInPlaceOfAnInputSharesItsAddress) {
    auto tensors = ranged_engine();
    tensors[2].aliased_input = "x";
    ExecutionContract contract = created(tensors, {4, 3, 4});
    EXPECT_EQ(message_of<InvalidArgument>([&] { (void)contract.bind_addresses(every_address()); }),
              "invalid tensor addresses: output 'y' is written in place of input 'x': its "
              "address must be 0x1000, got 0x3000");
    EXPECT_NO_THROW((void)contract.bind_addresses(
        {{"x", at(0x1000)}, {"bias", at(0x2000)}, {"y", at(0x1000)}}));
}

TEST(ExecutionContract, EnqueueNeedsShapesAndEveryAddress) {
    ExecutionContract contract = created(ranged_engine(), {4, 3, 4});
    (void)contract.bind_addresses(every_address());
    EXPECT_EQ(message_of<Error>([&] { contract.check_enqueue(); }),
              "cannot enqueue: input shapes are not set: call set_input_shapes with every ranged "
              "input ('x')");
    auto const checked = contract.check_input_shapes({{"x", {8, 3, 4}}});
    contract.resolve_output_shapes(checked, {{"y", Shape{8, 3, 4}}});
    EXPECT_NO_THROW(contract.check_enqueue());

    ExecutionContract unbound = created(ranged_engine(), {4, 3, 4});
    unbound.resolve_output_shapes(unbound.check_input_shapes({{"x", {1, 3, 4}}}),
                                  {{"y", Shape{1, 3, 4}}});
    EXPECT_EQ(message_of<Error>([&] { unbound.check_enqueue(); }),
              "cannot enqueue: tensor addresses are not bound: call bind_addresses with one "
              "device address for every tensor ('x', 'bias', 'y')");
}

TEST(ExecutionContract, AClosedUnitRefusesEveryCall) {
    ExecutionContract contract = created(ranged_engine(), {4, 3, 4});
    contract.close();
    contract.close(); // a repeat does nothing
    EXPECT_TRUE(contract.closed());
    std::vector<std::function<void()>> const calls{
        [&] { (void)contract.creation_shapes(); },
        [&] { contract.check_creation_output_shapes({}); },
        [&] {
            (void)contract.check_input_shapes({{"x", {2, 3, 4}}});
        },
        [&] {
            contract.reject_input_shape("x", {2, 3, 4}, "no");
        },
        [&] { contract.resolve_output_shapes({}, {}); },
        [&] { (void)contract.shape("y"); },
        [&] { (void)contract.tensor("y"); },
        [&] { (void)contract.bind_addresses(every_address()); },
        [&] { contract.reject_address("y", nullptr); },
        [&] { contract.check_enqueue(); },
    };
    for (auto const& call : calls) {
        EXPECT_EQ(message_of<Error>(call), "the execution unit is closed");
    }
    EXPECT_FALSE(contract.shapes_set());
    EXPECT_FALSE(contract.addresses_bound());
}

// ---- the manifest's IO signature -----------------------------------------------------------

Json signature() {
    return {{"tensors",
             {{{"name", "x"},
               {"mode", "INPUT"},
               {"dtype", "FLOAT"},
               {"shape", {-1, 3, 4}},
               {"location", "DEVICE"},
               {"format", "LINEAR"},
               {"profile", {{"min", {1, 3, 4}}, {"opt", {4, 3, 4}}, {"max", {8, 3, 4}}}}},
              {{"name", "y"},
               {"mode", "OUTPUT"},
               {"dtype", "HALF"},
               {"shape", {-1, 3, 4}},
               {"location", "DEVICE"},
               {"format", "LINEAR"}}}}};
}

std::string json_refusal(Json const& io) {
    return message_of<InvalidArgument>(
        [&] { (void)io_from_json(io, "deploy.json: entries[0].io"); });
}

TEST(ExecutionContract, TheManifestsIoSignatureIsRead) {
    auto const tensors = io_from_json(signature(), "deploy.json: entries[0].io");
    ASSERT_EQ(tensors.size(), 2U);
    EXPECT_EQ(tensors[0].name, "x");
    EXPECT_TRUE(tensors[0].is_input);
    EXPECT_EQ(tensors[0].dtype, "FLOAT");
    EXPECT_EQ(tensors[0].shape, (Shape{-1, 3, 4}));
    ASSERT_TRUE(tensors[0].profile.has_value());
    EXPECT_EQ(tensors[0].profile->opt, (Shape{4, 3, 4}));
    EXPECT_FALSE(tensors[1].is_input);
    EXPECT_FALSE(tensors[1].profile.has_value());
    ExecutionContract const contract(tensors, kEngine);
    EXPECT_EQ(contract.ranged_input_names(), std::vector<std::string>{"x"});
}

// A header's schema lets a tensor leave out location and format: they read as TensorRT's
// defaults, which the engine's own report is then checked against.
TEST(ExecutionContract, ATensorWithoutLocationOrFormatHasTensorRtsDefaults) {
    Json document = signature();
    document["tensors"][1].erase("location");
    document["tensors"][1].erase("format");
    auto const tensors = io_from_json(document, "deploy.json: entries[0].io");
    EXPECT_EQ(tensors[1].location, "DEVICE");
    EXPECT_EQ(tensors[1].format, "LINEAR");
}

TEST(ExecutionContract, AWrongFieldOfTheIoSignatureIsNamed) {
    EXPECT_EQ(json_refusal(nullptr),
              "deploy.json: entries[0].io is null: the entry records no IO signature");
    EXPECT_EQ(json_refusal(Json::object()), "deploy.json: entries[0].io.tensors is missing");
    EXPECT_EQ(json_refusal({{"tensors", 1}}),
              "deploy.json: entries[0].io.tensors is 1, expected an array");

    Json document = signature();
    document["tensors"][1]["shape"] = {2, -2};
    EXPECT_EQ(json_refusal(document),
              "deploy.json: entries[0].io.tensors[1].shape is [2,-2], expected an array of whole "
              "numbers >= -1");
    document = signature();
    document["tensors"][0]["mode"] = "input";
    EXPECT_EQ(json_refusal(document),
              "deploy.json: entries[0].io.tensors[0].mode is \"input\", expected \"INPUT\" or "
              "\"OUTPUT\"");
    document = signature();
    document["tensors"][0]["dtype"] = "FLOAT64";
    EXPECT_EQ(json_refusal(document),
              "deploy.json: entries[0].io.tensors[0].dtype is \"FLOAT64\", expected a TensorRT "
              "DataType name (FLOAT, HALF, ...)");
    document = signature();
    document["tensors"][0]["location"] = "device";
    EXPECT_EQ(json_refusal(document),
              "deploy.json: entries[0].io.tensors[0].location is \"device\", expected \"DEVICE\" "
              "or \"HOST\"");
    document = signature();
    document["tensors"][1]["format"] = 7;
    EXPECT_EQ(json_refusal(document),
              "deploy.json: entries[0].io.tensors[1].format is 7, expected a string");
    document = signature();
    document["tensors"][0]["profile"]["max"] = {8, 3};
    EXPECT_EQ(json_refusal(document),
              "deploy.json: entries[0].io.tensors[0].profile.max is [8,3], expected a shape of "
              "rank 3 (the tensor's)");
    document = signature();
    document["tensors"][0]["profile"].erase("opt");
    EXPECT_EQ(json_refusal(document),
              "deploy.json: entries[0].io.tensors[0].profile.opt is missing");
    document = signature();
    document["tensors"][1]["name"] = "x";
    EXPECT_EQ(json_refusal(document),
              "deploy.json: entries[0].io.tensors[1].name is \"x\", expected a name no other "
              "tensor has");
}

TEST(ExecutionContract, TheEnginesIoIsCheckedAgainstTheManifest) {
    auto const manifest = io_from_json(signature(), "io");
    EXPECT_NO_THROW(check_engine_io(manifest, manifest, kEngine));
    auto const refusal = [&](std::vector<TensorDescription> const& engine) {
        return message_of<EngineIOError>([&] { check_engine_io(engine, manifest, kEngine); });
    };
    auto engine = manifest;
    engine[1].dtype = "FLOAT";
    EXPECT_EQ(refusal(engine),
              "engine IO mismatch in the engine 'cache/encoder-0123.engine' against its manifest "
              "entry: tensor 'y' field 'dtype': observed=FLOAT, expected=HALF");
    engine = manifest;
    engine[0].shape = {-1, 3, -1};
    EXPECT_EQ(refusal(engine),
              "engine IO mismatch in the engine 'cache/encoder-0123.engine' against its manifest "
              "entry: tensor 'x' field 'shape': observed=[-1, 3, -1], expected=[-1, 3, 4]");
    engine = manifest;
    engine[0].profile->max = {16, 3, 4};
    EXPECT_EQ(refusal(engine),
              "engine IO mismatch in the engine 'cache/encoder-0123.engine' against its manifest "
              "entry: tensor 'x' field 'profile': observed=min [1, 3, 4] opt [4, 3, 4] max [16, "
              "3, 4], expected=min [1, 3, 4] opt [4, 3, 4] max [8, 3, 4]");
    engine = manifest;
    engine[1].name = "out";
    EXPECT_EQ(refusal(engine),
              "engine IO mismatch in the engine 'cache/encoder-0123.engine' against its manifest "
              "entry: tensor 'y' field 'name': observed=no such tensor (engine has ['x', 'out']), "
              "expected='y'");
    engine = manifest;
    engine[1].is_input = true;
    EXPECT_EQ(refusal(engine),
              "engine IO mismatch in the engine 'cache/encoder-0123.engine' against its manifest "
              "entry: tensor 'y' field 'mode': observed=INPUT, expected=OUTPUT");
    engine = manifest;
    engine[1].location = "HOST";
    EXPECT_EQ(refusal(engine),
              "engine IO mismatch in the engine 'cache/encoder-0123.engine' against its manifest "
              "entry: tensor 'y' field 'location': observed=HOST, expected=DEVICE");
    engine = manifest;
    engine.push_back(output("extra", {1}));
    EXPECT_EQ(refusal(engine),
              "engine IO mismatch in the engine 'cache/encoder-0123.engine' against its manifest "
              "entry: tensor 'extra' field 'name': observed='extra', expected=only the manifest's "
              "tensors ['x', 'y']");
    // The refusal's fields, as data.
    engine = manifest;
    engine[1].dtype = "FLOAT";
    try {
        check_engine_io(engine, manifest, kEngine);
        ADD_FAILURE() << "no EngineIOError";
    } catch (EngineIOError const& error) {
        EXPECT_EQ(error.refusal().subject, kEngine);
        EXPECT_EQ(error.refusal().field, "io.tensors[1].dtype");
        EXPECT_EQ(error.refusal().observed, "FLOAT");
        EXPECT_EQ(error.refusal().expected, "HALF");
        EXPECT_EQ(error.path(), kEngine);
    }
    engine = manifest;
    engine.push_back(output("extra", {1}));
    try {
        check_engine_io(engine, manifest, kEngine);
        ADD_FAILURE() << "no EngineIOError";
    } catch (EngineIOError const& error) {
        EXPECT_EQ(error.refusal().field, "io.tensors");
        EXPECT_EQ(error.refusal().observed, "'extra'");
    }
    // The engine's order may differ from the manifest's.
    EXPECT_NO_THROW(check_engine_io({manifest[1], manifest[0]}, manifest, kEngine));
}

// The refusal carries what its message tells as fields: the engine file, where in the entry's IO
// signature, the engine's value and the manifest's.
TEST(ExecutionContract, AnIoMismatchCarriesItsFields) {
    auto const manifest = io_from_json(signature(), "io");
    auto const fields = [&](std::vector<TensorDescription> const& engine) {
        return fields_of(
            refusal_of<EngineIOError>([&] { check_engine_io(engine, manifest, kEngine); }));
    };
    auto engine = manifest;
    engine[1].dtype = "FLOAT";
    EXPECT_EQ(fields(engine), "subject=cache/encoder-0123.engine | field=io.tensors[1].dtype | "
                              "observed=FLOAT | expected=HALF | remedy=");
    engine = manifest;
    engine[0].shape = {-1, 3, -1};
    EXPECT_EQ(fields(engine), "subject=cache/encoder-0123.engine | field=io.tensors[0].shape | "
                              "observed=[-1, 3, -1] | expected=[-1, 3, 4] | remedy=");
    engine = manifest;
    engine[1].name = "out";
    EXPECT_EQ(fields(engine), "subject=cache/encoder-0123.engine | field=io.tensors[1].name | "
                              "observed=no such tensor (engine has ['x', 'out']) | expected='y' | "
                              "remedy=");
    engine = manifest;
    engine.push_back(output("extra", {1}));
    EXPECT_EQ(fields(engine), "subject=cache/encoder-0123.engine | field=io.tensors | "
                              "observed='extra' | expected=only the manifest's tensors ['x', 'y'] "
                              "| remedy=");
}

TEST(ExecutionContract, TensorBytes) {
    EXPECT_EQ(tensor_bytes("FLOAT", {2, 3, 4}), 96U);
    EXPECT_EQ(tensor_bytes("INT4", {3}), 2U);
    EXPECT_EQ(tensor_bytes("HALF", {}), 2U);
    EXPECT_EQ(element_bits("FP4"), 4);
    EXPECT_FALSE(element_bits("DOUBLE").has_value());
    EXPECT_EQ(message_of<InvalidArgument>([] { (void)tensor_bytes("DOUBLE", {1}); }),
              "unknown dtype 'DOUBLE': expected a TensorRT DataType name (FLOAT, HALF, ...)");
    EXPECT_EQ(message_of<InvalidArgument>([] {
                  (void)tensor_bytes("FLOAT", {-1, 2});
              }),
              "shape [-1, 2] has a negative dimension: a tensor's size needs its concrete shape");
    EXPECT_EQ(message_of<InvalidArgument>([] {
                  (void)tensor_bytes("INT64", {std::int64_t{1} << 62, 4});
              }),
              "a INT64 tensor of shape [4611686018427387904, 4] is larger than 2^64 bytes");
}

} // namespace
} // namespace tensoracle::deploy
