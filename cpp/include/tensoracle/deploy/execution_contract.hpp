// The execution contract of one deployed engine: the state and the checks of an execution unit,
// without TensorRT. tensoracle/deploy/tensorrt.hpp applies it around TensorRT's calls; this class
// decides what may be called and when, as the Python package's EngineExecution does
// (python/src/tensoracle/execution/unit.py and io_table.py):
// - creation refuses HOST-location tensors, shape tensors (inputs and outputs), IO formats other
//   than LINEAR, and outputs whose sizes depend on tensor values unless the unit has an
//   allocator for them (EngineIOError naming each);
// - the shapes of ranged inputs (a dynamic dimension and a profile whose minimum is not its
//   maximum) are set together in one call, checked against profile 0 before TensorRT is called;
//   the output shapes TensorRT then reports must all be resolved, but for those value-dependent
//   outputs, whose shape and memory are known only during an enqueue;
// - one device address per tensor, non-null and 256-byte aligned, is bound before an enqueue;
// - enqueue is allowed only when shapes are set and every tensor has an address;
// - a closed unit refuses every call.
// The contract never allocates device memory, copies or synchronizes: the caller owns the
// buffers and the stream. Use one unit from one thread at a time. This header compiles as C++17 and
// includes no third-party header.
#pragma once

#include "tensoracle/deploy/data_type.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tensoracle::deploy {

// TensorRT requires every tensor address to be aligned to at least 256 bytes.
inline constexpr std::size_t kTensorAddressAlignment = 256;

// A tensor shape; -1 marks a dimension set at run time.
using Shape = std::vector<std::int64_t>;

// Profile 0's range of an input.
struct ShapeProfile {
    Shape min;
    Shape opt;
    Shape max;
};

// One IO tensor as the engine (or the IO signature the saved header records) describes it. The
// texts are TensorRT's enum names, as the Python package records them: dtype "FLOAT", "HALF",
// "BF16", "INT8", "INT32", "INT64", "BOOL", "UINT8", "FP8", "E8M0", "INT4" or "FP4"; location
// "DEVICE" or "HOST"; format "LINEAR", "CHW32", ...
struct TensorDescription {
    std::string name;
    bool is_input = false;
    std::string dtype;
    Shape shape;                         // the build-time shape, -1 for dynamic dimensions
    std::optional<ShapeProfile> profile; // inputs: profile 0 (absent: none recorded)
    std::string location = "DEVICE";
    std::string format = "LINEAR";
    bool is_shape_tensor = false; // TensorRT's isShapeInferenceIO
    std::string aliased_input;    // outputs: the input it is written in place of (empty: none)

    // The dtype as a DataType (data_type.hpp), or nothing for a name that is not one.
    std::optional<DataType> data_type() const noexcept { return data_type_from_name(dtype); }
};

// Bits one element of `dtype` occupies (4 for INT4 and FP4), or nothing for an unknown name
// (element_bits(DataType) in data_type.hpp for the enum).
std::optional<int> element_bits(std::string_view dtype);

// Bytes a LINEAR tensor of `dtype` and concrete `shape` occupies (packed 4-bit types rounded up
// to whole bytes). Throws InvalidArgument naming the value for an unknown dtype, a negative
// dimension or a size beyond 64 bits.
std::uint64_t tensor_bytes(std::string_view dtype, Shape const& shape);

// Checks the IO an engine reports against the IO the manifest describes for it: the same tensor
// names (in any order), and for each its mode, dtype, shape, location, format and (inputs where
// the manifest records one) profile 0. Throws EngineIOError (carrying `path`) naming the tensor,
// the field, the observed (engine) and the expected (manifest) value.
void check_engine_io(std::vector<TensorDescription> const& engine,
                     std::vector<TensorDescription> const& manifest,
                     std::filesystem::path const& path);

struct NamedShape {
    std::string name;
    Shape shape;
};

// An output's shape as TensorRT reports it; nothing where it reports none (rank -1).
struct ReportedShape {
    std::string name;
    std::optional<Shape> shape;
};

struct TensorAddress {
    std::string name;
    void* address = nullptr;
};

class ExecutionContract {
public:
    // Throws EngineIOError (carrying `engine`, which messages name) naming every tensor an
    // execution unit cannot run: HOST location, shape tensors, a format other than LINEAR, an
    // output aliasing what is not an input, a dynamic input without a profile or with a profile
    // of another rank; and a name listed twice. With `value_dependent_outputs`, the unit has an
    // allocator for outputs whose sizes depend on tensor values (check_creation_output_shapes).
    ExecutionContract(std::vector<TensorDescription> tensors, std::filesystem::path engine,
                      std::int32_t profile = 0, bool value_dependent_outputs = false);
    // The optimization profile whose ranges the tensors' `profile` members hold (messages name it).
    std::int32_t profile() const noexcept { return profile_; }

    std::filesystem::path const& engine() const noexcept { return engine_; }
    // Inputs first, then outputs, each in the engine's order.
    std::vector<TensorDescription> const& tensors() const noexcept { return tensors_; }
    // In the engine's order.
    std::vector<std::string> const& input_names() const noexcept { return inputs_; }
    std::vector<std::string> const& output_names() const noexcept { return outputs_; }
    // The inputs set_input_shapes takes: a dynamic dimension and profile minimum != maximum.
    std::vector<std::string> const& ranged_input_names() const noexcept { return ranged_; }
    // The outputs whose shapes depend on tensor values (known after check_creation_output_shapes,
    // in the engine's order): they take no address, and their shape is not known before an
    // enqueue.
    std::vector<std::string> const& value_dependent_output_names() const noexcept {
        return value_dependent_;
    }
    // InvalidArgument naming the engine's tensors for an unknown name.
    TensorDescription const& tensor(std::string_view name) const;

    // ---- creation: the adapter sets these shapes, then reports the outputs' shapes ----------

    // Every input's shape at creation: fixed, the single point of its profile, or the optimum.
    std::vector<NamedShape> creation_shapes() const;
    // An output still unresolved (-1, or no valid shape) with every input at its creation shape
    // has a size that depends on tensor values: without `value_dependent_outputs` (the
    // constructor's), throws EngineIOError naming every such output; with it, records them
    // (value_dependent_output_names). Afterwards the unit is ready, or, with ranged inputs, waits
    // for set_input_shapes.
    void check_creation_output_shapes(std::vector<ReportedShape> const& outputs);

    // ---- input shapes ----------------------------------------------------------------------

    // Checks one set_input_shapes call before TensorRT is called: exactly every ranged input,
    // once, each of its rank with every dimension within profile 0. Returns the shapes in the
    // engine's order; throws InvalidArgument naming every problem, leaving the state unchanged.
    std::vector<NamedShape> check_input_shapes(std::vector<NamedShape> const& shapes) const;
    // TensorRT refused the shape of `name` (`reason` says what TensorRT said): throws TensorRtError
    // naming it; shape queries and enqueue are refused until set_input_shapes succeeds.
    [[noreturn]] void reject_input_shape(std::string const& name, Shape const& shape,
                                         std::string const& reason);
    // Every checked shape was set: `outputs` are the output shapes TensorRT resolved. Throws
    // Error naming every output left unresolved, refusing enqueue until a later call resolves
    // them; else records `inputs` (check_input_shapes's result) and the outputs' shapes.
    void resolve_output_shapes(std::vector<NamedShape> const& inputs,
                               std::vector<ReportedShape> const& outputs);

    // Whether shapes are set (the concrete shape of every tensor is known).
    bool shapes_set() const noexcept { return blocked_.empty() && !closed_; }
    // The concrete shape of a tensor under the shapes set. Throws InvalidArgument for an
    // unknown name, Error while shapes are not set, for a value-dependent output, or once closed.
    Shape const& shape(std::string_view name) const;

    // ---- addresses and enqueue -------------------------------------------------------------

    // Checks one address per tensor but the value-dependent outputs, whose memory the unit's
    // allocator provides (none missing, none unknown, none twice, none for those), each non-null,
    // 256-byte aligned, and each output written in place of an input at that input's address.
    // Returns them in the engine's order (inputs, then outputs) for the adapter to bind. Throws
    // InvalidArgument naming every problem; the unit then has no addresses until a later call.
    // Addresses stay bound across set_input_shapes calls, as TensorRT keeps them: bind again when
    // new shapes need other buffers (the contract does not know the buffers' sizes).
    std::vector<TensorAddress> bind_addresses(std::vector<TensorAddress> const& addresses);
    // TensorRT refused the address of `name`: throws TensorRtError naming it; the unit has no
    // addresses until a later bind_addresses call.
    [[noreturn]] void reject_address(std::string const& name, void const* address);
    bool addresses_bound() const noexcept { return bound_ && !closed_; }
    // Throws Error unless an enqueue may be made now: open, shapes set, every address bound.
    void check_enqueue() const;

    // ---- lifecycle -------------------------------------------------------------------------

    // Afterwards every call is refused (Error "the execution unit is closed"). Repeats do nothing.
    void close() noexcept;
    bool closed() const noexcept { return closed_; }
    // Throws Error ("the execution unit is closed") once closed.
    void check_open() const;

private:
    std::size_t index_of(std::string_view name) const; // tensors_.size() when unknown
    bool value_dependent(std::string_view name) const;
    std::vector<std::string> addressed_names() const; // every tensor but value-dependent outputs

    std::filesystem::path engine_;
    std::int32_t profile_ = 0;
    std::vector<TensorDescription> tensors_; // the engine's order
    std::vector<std::string> inputs_;
    std::vector<std::string> outputs_;
    std::vector<std::string> ranged_;
    bool allow_value_dependent_ = false;
    std::vector<std::string> value_dependent_;
    std::vector<Shape> shapes_; // concrete, by index into tensors_
    std::string blocked_;       // why shapes are not set (empty: they are)
    std::string not_shaped_reason_;
    std::string incomplete_reason_;
    bool bound_ = false;
    bool closed_ = false;
};

} // namespace tensoracle::deploy
