"""Property tests of IOTable's argument checks over generated tables of plain IO data."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensoracle.execution.io_table import IOTable, IOTensor

NAMES = st.text(alphabet="abcdefgh_01", min_size=1, max_size=6)


@st.composite
def profiles(draw: st.DrawFn, rank: int) -> tuple[tuple[int, ...], ...]:
    """A (min, opt, max) profile of ``rank`` dimensions with min <= opt <= max."""
    dims = [sorted(draw(st.lists(st.integers(0, 64), min_size=3, max_size=3))) for _ in range(rank)]
    return tuple(tuple(d[i] for d in dims) for i in range(3))


@st.composite
def tables(draw: st.DrawFn) -> IOTable:
    """Engines with at least one input and one output; inputs fixed, single-point or ranged."""
    names = draw(st.lists(NAMES, min_size=2, max_size=7, unique=True))
    split = draw(st.integers(1, len(names) - 1))
    tensors = []
    for name in names[:split]:
        rank = draw(st.integers(1, 4))
        low, optimum, high = draw(profiles(rank))
        runtime = draw(st.lists(st.booleans(), min_size=rank, max_size=rank))
        shape = tuple(-1 if free else low[i] for i, free in enumerate(runtime))
        # Fixed dimensions have one size in every profile shape, as TensorRT requires.
        low, optimum, high = (
            tuple(s[i] if free else low[i] for i, free in enumerate(runtime))
            for s in (low, optimum, high)
        )
        tensors.append(IOTensor(name, "INPUT", shape, profile=(low, optimum, high)))
    for name in names[split:]:
        tensors.append(IOTensor(name, "OUTPUT", draw(st.lists(st.integers(-1, 9), max_size=4))))
    return IOTable(draw(st.permutations(tensors)))


# Device addresses TensorRT accepts: positive multiples of 256 below 2**64.
ADDRESS = st.integers(1, 2**56 - 1).map(lambda block: block * 256)


def valid_addresses(draw: st.DrawFn, table: IOTable) -> dict[str, int]:
    return {name: draw(ADDRESS) for name in table.names}


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_one_positive_int_per_tensor_on_a_nonnegative_stream_passes(data):
    table = data.draw(tables())
    addresses = valid_addresses(data.draw, table)
    table.check_enqueue(addresses, data.draw(st.integers(0, 2**64 - 1)))


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_missing_and_unknown_names_are_all_listed(data):
    table = data.draw(tables())
    addresses = valid_addresses(data.draw, table)
    dropped = data.draw(st.lists(st.sampled_from(table.names), unique=True))
    extra = data.draw(st.lists(NAMES.filter(lambda n: n not in table.names), unique=True))
    if not dropped and not extra:
        return
    for name in dropped:
        del addresses[name]
    addresses.update({name: 256 for name in extra})
    problems = []
    if dropped:
        missing = [n for n in table.names if n in dropped]
        problems.append("missing addresses for " + ", ".join(repr(n) for n in missing))
    if extra:
        problems.append("unknown tensor names " + ", ".join(repr(n) for n in extra))
    text = "invalid tensor addresses: " + "; ".join(problems)
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        table.check_enqueue(addresses, 0)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_a_non_positive_address_is_named(data):
    table = data.draw(tables())
    addresses = valid_addresses(data.draw, table)
    name = data.draw(st.sampled_from(table.names))
    addresses[name] = data.draw(st.integers(max_value=0))
    text = f"invalid tensor addresses: {name!r}: address {addresses[name]} is not positive"
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        table.check_enqueue(addresses, 0)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_an_address_that_is_not_an_int_is_a_type_error(data):
    table = data.draw(tables())
    addresses = valid_addresses(data.draw, table)
    name = data.draw(st.sampled_from(table.names))
    value = data.draw(st.one_of(st.booleans(), st.floats(1, 1e18), st.text(max_size=3)))
    addresses[name] = value
    kind = type(value).__name__
    text = f"device addresses must be positive ints; got {name!r}: {value!r} ({kind})"
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        table.check_enqueue(addresses, 0)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_an_address_off_a_256_byte_boundary_is_named(data):
    table = data.draw(tables())
    addresses = valid_addresses(data.draw, table)
    name = data.draw(st.sampled_from(table.names))
    addresses[name] += data.draw(st.integers(1, 255))
    text = (
        f"invalid tensor addresses: {name!r}: address {addresses[name]:#x} is not a multiple "
        "of 256 (TensorRT needs 256-byte aligned tensors)"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        table.check_enqueue(addresses, 0)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_negative_streams_are_value_errors(data):
    table = data.draw(tables())
    stream = data.draw(st.integers(max_value=-1))
    text = f"stream must be a nonnegative int CUDA stream handle, got {stream}"
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        table.check_enqueue(valid_addresses(data.draw, table), stream)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_every_ranged_input_with_its_rank_and_dims_in_its_profile_is_accepted(data):
    table = data.draw(tables())
    shapes = {}
    for name in table.ranged:
        low, _, high = table.tensors[name].profile
        shapes[name] = [data.draw(st.integers(a, b)) for a, b in zip(low, high, strict=True)]
    assert table.check_shapes(shapes) == {name: tuple(shapes[name]) for name in table.ranged}


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_a_dimension_outside_the_profile_is_named_with_the_range(data):
    table = data.draw(tables())
    if not table.ranged:
        return
    name = data.draw(st.sampled_from(table.ranged))
    low, _, high = table.tensors[name].profile
    axis = data.draw(st.integers(0, len(low) - 1))
    shapes = {other: list(table.tensors[other].profile[0]) for other in table.ranged}
    shapes[name][axis] = high[axis] + data.draw(st.integers(1, 2**20))
    with pytest.raises(ValueError, match=re.escape(f"{name!r}: shape {tuple(shapes[name])}")):
        table.check_shapes(shapes)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_a_wrong_rank_is_named_with_the_expected_one(data):
    table = data.draw(tables())
    if not table.ranged:
        return
    name = data.draw(st.sampled_from(table.ranged))
    rank = len(table.tensors[name].shape)
    shapes = {n: table.tensors[n].creation_shape for n in table.ranged}
    other_rank = st.lists(st.integers(0, 9), max_size=6).filter(lambda d: len(d) != rank)
    wrong = tuple(data.draw(other_rank))
    shapes[name] = wrong
    text = f"invalid input shapes: {name!r}: shape {wrong!r} has rank {len(wrong)}, expected {rank}"
    with pytest.raises(ValueError, match=f"^{re.escape(text)}$"):
        table.check_shapes(shapes)


@settings(max_examples=100, deadline=None)
@given(tables())
def test_creation_shapes_lie_in_the_profile_and_only_ranged_inputs_block(table):
    for name, shape in table.creation_shapes.items():
        tensor = table.tensors[name]
        low, optimum, high = tensor.profile
        assert all(lo <= d <= hi for lo, d, hi in zip(low, shape, high, strict=True))
        assert -1 not in shape
        assert (name in table.ranged) == (low != high and -1 in tensor.shape)
        if name in table.ranged:
            assert shape == optimum
    assert (table.blocked_at_creation is None) == (table.ranged == ())
