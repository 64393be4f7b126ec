"""EngineExecution.enqueue and close(), checked without a GPU against recording contexts."""

from __future__ import annotations

import gc
import weakref

import pytest
from recording_engine import Handle, features_engine

from tensoracle.execution import EngineExecution

ADDRESSES = {"features": 0x7000_0000, "result": 0x7000_1000}


def shaped():
    engine = features_engine()
    unit = EngineExecution(Handle(engine))
    unit.set_input_shapes({"features": (1, 4, 2)})
    engine.recorder.calls.clear()
    return unit, engine


def test_enqueue_binds_every_address_then_executes_on_the_stream():
    unit, engine = shaped()
    unit.enqueue(ADDRESSES, stream=0x55)
    assert engine.recorder.calls == [
        ("set_tensor_address", "features", 0x7000_0000),
        ("set_tensor_address", "result", 0x7000_1000),
        ("execute_async_v3", 0x55),
    ]


def test_stream_zero_is_accepted():
    unit, engine = shaped()
    unit.enqueue(ADDRESSES, stream=0)
    assert engine.recorder.calls[-1] == ("execute_async_v3", 0)


def test_a_failed_execute_is_a_runtime_error():
    unit, engine = shaped()
    engine.contexts[0].execute_result = False
    with pytest.raises(RuntimeError, match="execute_async_v3 reported failure"):
        unit.enqueue(ADDRESSES, stream=1)


@pytest.mark.parametrize(
    ("addresses", "error", "message"),
    [
        ({"features": 16}, ValueError, "missing addresses for 'result'"),
        ({**ADDRESSES, "extra": 16}, ValueError, "unknown tensor names 'extra'"),
        ({"features": 16, "other": 32}, ValueError, r"missing.*'result'.*unknown.*'other'"),
        ({**ADDRESSES, "result": 0}, ValueError, r"'result': address 0 is not positive"),
        ({**ADDRESSES, "features": -8}, ValueError, r"'features': address -8 is not positive"),
        ({**ADDRESSES, "result": True}, TypeError, r"'result': True \(bool\)"),
        ({**ADDRESSES, "result": 16.0}, TypeError, r"'result': 16.0 \(float\)"),
        ({**ADDRESSES, "result": "16"}, TypeError, r"'result': '16' \(str\)"),
        ({**ADDRESSES, "result": None}, TypeError, r"'result': None \(NoneType\)"),
        ([16, 32], TypeError, "addresses must map tensor names"),
        (None, TypeError, "addresses must map tensor names"),
    ],
)
def test_bad_addresses_are_refused_before_tensorrt_is_called(addresses, error, message):
    unit, engine = shaped()
    with pytest.raises(error, match=message):
        unit.enqueue(addresses, stream=1)
    assert engine.recorder.calls == []


@pytest.mark.parametrize(
    ("stream", "error", "message"),
    [
        (True, TypeError, r"got True \(bool\)"),
        (False, TypeError, r"got False \(bool\)"),
        (-1, ValueError, "got -1"),
        (1.0, TypeError, r"got 1.0 \(float\)"),
        (None, TypeError, r"got None"),
    ],
)
def test_bad_streams_are_refused_before_tensorrt_is_called(stream, error, message):
    unit, engine = shaped()
    with pytest.raises(error, match=message):
        unit.enqueue(ADDRESSES, stream=stream)
    assert engine.recorder.calls == []


def test_the_stream_is_keyword_only_and_required():
    unit, _ = shaped()
    with pytest.raises(TypeError):
        unit.enqueue(ADDRESSES, 1)  # type: ignore[misc]
    with pytest.raises(TypeError):
        unit.enqueue(ADDRESSES)  # type: ignore[call-arg]


def test_the_unit_keeps_no_caller_mapping():
    unit, _ = shaped()
    addresses = dict(ADDRESSES)
    unit.enqueue(addresses, stream=1)
    assert all(value is not addresses for value in vars(unit).values())


# ---- closing -----------------------------------------------------------------------------------


def test_close_releases_the_context_before_the_handle_and_is_idempotent():
    engine = features_engine()
    handle = Handle(engine)
    unit = EngineExecution(handle)
    released = []
    weakref.finalize(engine.contexts.pop(), released.append, "context")
    weakref.finalize(handle, released.append, "handle")
    del handle, engine
    gc.collect()
    assert released == []  # the unit keeps both alive
    unit.close()
    gc.collect()
    assert released == ["context", "handle"]
    unit.close()
    assert unit.closed


def test_close_calls_nothing_on_tensorrt():
    unit, engine = shaped()
    unit.close()
    assert engine.recorder.calls == []


@pytest.mark.parametrize(
    "operation",
    [
        lambda u: u.set_input_shapes({"features": (1, 4, 2)}),
        lambda u: u.get_tensor_shape("result"),
        lambda u: u.get_tensor_dtype("result"),
        lambda u: u.enqueue(ADDRESSES, stream=1),
        lambda u: u.__enter__(),
    ],
    ids=["set_input_shapes", "get_tensor_shape", "get_tensor_dtype", "enqueue", "enter"],
)
def test_operations_on_a_closed_unit_raise_before_touching_tensorrt(operation):
    unit, engine = shaped()
    unit.close()
    with pytest.raises(RuntimeError, match="closed"):
        operation(unit)
    assert engine.recorder.calls == []


def test_leaving_the_with_block_closes_even_after_an_error():
    unit, _ = shaped()

    def use() -> None:
        with unit as entered:
            assert entered is unit
            raise KeyError("caller error")

    with pytest.raises(KeyError):
        use()
    assert unit.closed


def test_the_unit_does_not_expose_its_context():
    unit, engine = shaped()
    public = [name for name in dir(unit) if not name.startswith("_")]
    context = engine.contexts[0]
    assert all(getattr(unit, name) is not context for name in public)
