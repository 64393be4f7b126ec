"""Tests of the .pth to safetensors converter, through torch CPU and real subprocesses."""

from __future__ import annotations

import errno
import os
import pickle
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from tensoracle.convert import CheckpointConversionError, pth_to_safetensors

torch = pytest.importorskip("torch", reason="the convert extra (torch) is not installed")
safetensors_torch = pytest.importorskip("safetensors.torch")


def same_bits(a, b) -> bool:
    """Equal dtype, shape and bytes (NaN payloads included)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    as_bytes = [t.contiguous().reshape(-1).view(torch.uint8) for t in (a, b)]
    return torch.equal(as_bytes[0], as_bytes[1])


def _complex32_zeros():
    """A dtype torch has and safetensors cannot store (torch warns that it is experimental)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.zeros(2, dtype=torch.complex64).to(torch.complex32)


def run_cli(*arguments: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tensoracle.convert", *arguments],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_round_trip_preserves_dtypes_shapes_values_and_layout(tmp_path):
    generator = torch.Generator().manual_seed(0)
    base = torch.randn(4, 6, generator=generator)
    shared = torch.arange(12, dtype=torch.float32)
    fp32 = torch.randn(3, 5, generator=generator)
    fp32[0, 0] = float("nan")
    fp32[0, 1] = float("-inf")
    checkpoint = {
        "fp32": fp32,
        "fp16": torch.randn(2, 3, generator=generator).to(torch.float16),
        "bf16": torch.randn(7, generator=generator).to(torch.bfloat16),
        "fp8": torch.randn(2, 2, generator=generator).to(torch.float8_e4m3fn),
        "int64": torch.tensor([[-(2**62), 5], [7, 2**62]], dtype=torch.int64),
        "bool": torch.tensor([True, False, True]),
        "scalar": torch.tensor(2.5, dtype=torch.float64),
        "empty": torch.zeros(0, 3),
        "transposed": base.t(),  # non-contiguous
        "every_other": base[:, ::2],  # non-contiguous, shares storage with "transposed"
        "state_dict": {
            "layer.weight": shared.view(3, 4),
            "layer.bias": shared[4:8],  # shares storage with layer.weight
            "deeper": {"alias": shared},  # the same storage a third time
        },
    }
    source, destination = tmp_path / "model.pth", tmp_path / "model.safetensors"
    torch.save(checkpoint, source)
    pth_to_safetensors(source, destination)
    loaded = safetensors_torch.load_file(destination)
    expected = {
        "fp32": checkpoint["fp32"],
        "fp16": checkpoint["fp16"],
        "bf16": checkpoint["bf16"],
        "fp8": checkpoint["fp8"],
        "int64": checkpoint["int64"],
        "bool": checkpoint["bool"],
        "scalar": checkpoint["scalar"],
        "empty": checkpoint["empty"],
        "transposed": base.t(),
        "every_other": base[:, ::2],
        "state_dict.layer.weight": shared.view(3, 4),
        "state_dict.layer.bias": shared[4:8],
        "state_dict.deeper.alias": shared,
    }
    assert sorted(loaded) == sorted(expected)
    for name, tensor in expected.items():
        assert same_bits(loaded[name], tensor), name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.pth", "model.safetensors"]


def test_existing_destination_is_replaced_on_success(tmp_path):
    source, destination = tmp_path / "model.pth", tmp_path / "model.safetensors"
    torch.save({"w": torch.ones(2)}, source)
    destination.write_bytes(b"old contents")
    pth_to_safetensors(str(source), str(destination))
    assert same_bits(safetensors_torch.load_file(destination)["w"], torch.ones(2))


def test_where_a_directory_cannot_be_opened_the_conversion_still_completes(tmp_path, monkeypatch):
    # Windows opens no directory with os.open (PermissionError), so the rename is not synced there.
    source, destination = tmp_path / "model.pth", tmp_path / "model.safetensors"
    torch.save({"w": torch.ones(2)}, source)
    opened = os.open
    refused: list[str] = []

    def open_no_directory(path, flags, *args, **kwargs):
        if os.path.isdir(path):
            refused.append(os.fspath(path))
            raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
        return opened(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", open_no_directory)
    pth_to_safetensors(str(source), str(destination))
    assert refused == [str(tmp_path)]
    assert same_bits(safetensors_torch.load_file(destination)["w"], torch.ones(2))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.pth", "model.safetensors"]


@pytest.mark.parametrize(
    ("checkpoint", "message"),  # a TypeError for wrong types, else a ValueError
    [
        (
            {"weight": torch.ones(2), "epoch": 3},
            "'epoch' holds a value of type int, not a tensor or a mapping of tensors",
        ),
        (
            {"model": {"w": torch.ones(1), "config": {"name": "x"}}},
            "'model.config.name' holds a value of type str, not a tensor or a mapping of tensors",
        ),
        (
            {"model": {1: torch.ones(1)}},
            "key 1 in 'model' is of type int, not a string",
        ),
        ({7: torch.ones(1)}, "key 7 is of type int, not a string"),
        (
            {"a.b": torch.ones(1), "a": {"b": torch.zeros(1)}},
            "'a.b' occurs twice after joining nested keys with '.'",
        ),
        (
            {"sparse": torch.eye(2).to_sparse()},
            "'sparse' is a torch.sparse_coo tensor; only dense tensors can be converted",
        ),
        (
            {"half_complex": _complex32_zeros()},
            "'half_complex' has dtype torch.complex32, which safetensors cannot store",
        ),
    ],
)
def test_rejected_checkpoints_leave_the_destination_alone(tmp_path, checkpoint, message):
    source, destination = tmp_path / "model.pth", tmp_path / "model.safetensors"
    torch.save(checkpoint, source)
    # As in tensoracle 1.x: a key or value of the wrong type is a TypeError, the rest ValueError.
    expected = TypeError if "of type" in message else CheckpointConversionError
    with pytest.raises(expected) as raised:
        pth_to_safetensors(source, destination)
    assert type(raised.value) is expected
    assert str(raised.value) == message
    assert not destination.exists()
    destination.write_bytes(b"previous file")
    with pytest.raises(expected):
        pth_to_safetensors(source, destination)
    assert destination.read_bytes() == b"previous file"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.pth", "model.safetensors"]


def test_a_checkpoint_that_is_not_a_mapping_is_rejected(tmp_path):
    source = tmp_path / "model.pth"
    torch.save([torch.ones(1)], source)
    with pytest.raises(TypeError) as raised:
        pth_to_safetensors(source, tmp_path / "out.safetensors")
    assert str(raised.value) == f"'{source}' holds a value of type list, not a mapping of tensors"


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_a_damaged_checkpoint_raises_what_torch_raises(tmp_path, damage):
    source = tmp_path / "damaged.pth"
    torch.save({"w": torch.ones(100)}, source)
    if damage == "truncated":
        source.write_bytes(source.read_bytes()[:200])
    else:
        source.write_bytes(b"not a checkpoint at all")
    with pytest.raises(Exception) as expected:  # noqa: PT011 (whatever torch raises)
        torch.load(source, map_location="cpu", weights_only=True)
    # As in tensoracle 1.x: what the unpickler refuses is a ValueError naming the file, other
    # load errors come unchanged.
    refused = isinstance(expected.value, pickle.UnpicklingError)
    wanted = CheckpointConversionError if refused else type(expected.value)
    with pytest.raises(wanted) as raised:
        pth_to_safetensors(source, tmp_path / "out.safetensors")
    assert type(raised.value) is wanted
    if refused:
        assert str(raised.value).startswith(f"'{source}' cannot be loaded")
    assert not (tmp_path / "out.safetensors").exists()
    failed = run_cli(str(source), str(tmp_path / "out.safetensors"))
    assert failed.returncode == 1
    assert failed.stderr.startswith("python -m tensoracle.convert: ")
    assert "Traceback" not in failed.stderr


def test_a_mapping_that_contains_itself_is_a_value_error(tmp_path, monkeypatch):
    # torch.save cannot write such a checkpoint; a loader that returns one stands in for a file
    # a custom pickler wrote.
    source = tmp_path / "loop.pth"
    torch.save({"w": torch.ones(1)}, source)
    looped: dict = {"w": torch.ones(1)}
    looped["self"] = looped
    monkeypatch.setattr(torch, "load", lambda *args, **kwargs: looped)
    with pytest.raises(ValueError, match="'self' is a mapping that contains itself"):
        pth_to_safetensors(source, tmp_path / "out.safetensors")
    assert not (tmp_path / "out.safetensors").exists()


class _WritesMarker:
    """Unpickling this object runs code: it writes a marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (exec, (f"open({str(self.marker)!r}, 'w').write('pwned')",))


def test_a_checkpoint_that_would_run_code_is_refused(tmp_path):
    source, destination = tmp_path / "evil.pth", tmp_path / "evil.safetensors"
    marker = tmp_path / "marker"
    torch.save({"weight": torch.ones(2), "payload": _WritesMarker(marker)}, source)
    with pytest.raises(CheckpointConversionError) as raised:
        pth_to_safetensors(source, destination)
    assert str(raised.value) == (
        f"'{source}' cannot be loaded with torch.load(weights_only=True): Unsupported global: "
        "GLOBAL exec was not an allowed global by default; checkpoints holding Python "
        "objects other than tensors are not converted"
    )
    assert not marker.exists()
    assert not destination.exists()
    result = run_cli(str(source), str(destination))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert "Unsupported global" in result.stderr
    assert not marker.exists()
    assert not destination.exists()
    # The file really is malicious: unrestricted unpickling runs the payload.
    torch.load(source, weights_only=False)
    assert marker.read_text() == "pwned"


def test_command_line_exit_codes(tmp_path):
    source, destination = tmp_path / "model.pth", tmp_path / "model.safetensors"
    torch.save({"w": torch.ones(3)}, source)
    succeeded = run_cli(str(source), str(destination))
    assert (succeeded.returncode, succeeded.stdout, succeeded.stderr) == (0, "", "")
    assert same_bits(safetensors_torch.load_file(destination)["w"], torch.ones(3))

    torch.save({"w": torch.ones(3), "step": 10}, source)
    failed = run_cli(str(source), str(tmp_path / "other.safetensors"))
    assert failed.returncode == 1
    assert failed.stderr == (
        "python -m tensoracle.convert: 'step' holds a value of type int, not a tensor or a "
        "mapping of tensors\n"
    )
    assert not (tmp_path / "other.safetensors").exists()

    missing = run_cli(str(tmp_path / "missing.pth"), str(destination))
    assert missing.returncode == 1
    assert "missing.pth" in missing.stderr
    assert same_bits(safetensors_torch.load_file(destination)["w"], torch.ones(3))

    misuse = run_cli(str(source))
    assert misuse.returncode == 2
    assert "the following arguments are required: DESTINATION" in misuse.stderr


def test_a_missing_destination_directory_is_reported_before_loading(tmp_path):
    source = tmp_path / "model.pth"
    torch.save({"w": torch.ones(1)}, source)
    with pytest.raises(FileNotFoundError) as raised:
        pth_to_safetensors(source, tmp_path / "absent" / "model.safetensors")
    assert str(raised.value) == (
        f"[Errno 2] the destination's directory does not exist: '{tmp_path / 'absent'}'"
    )


def test_the_destination_may_not_be_the_source(tmp_path):
    source = tmp_path / "model.pth"
    torch.save({"w": torch.ones(1)}, source)
    before = source.read_bytes()
    with pytest.raises(CheckpointConversionError, match="is the source checkpoint"):
        pth_to_safetensors(source, source)
    assert source.read_bytes() == before


# Runs Python with every import of torch failing, as on a machine without the convert extra.
_WITHOUT_TORCH = textwrap.dedent(
    """
    import importlib.abc
    import sys

    class BlockTorch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch."):
                raise ImportError(f"No module named {name!r} (blocked by the test)")
            return None

    sys.meta_path.insert(0, BlockTorch())
    """
)


def test_without_torch_the_converter_names_the_extra(tmp_path):
    script = _WITHOUT_TORCH + textwrap.dedent(
        f"""
        import tensoracle
        import tensoracle.convert
        assert "torch" not in sys.modules, "importing tensoracle imported torch"
        try:
            tensoracle.convert.pth_to_safetensors({str(tmp_path / "m.pth")!r}, "out.safetensors")
        except ImportError as error:
            print(error)
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert result.stdout == (
        "converting .pth checkpoints needs torch; install it with: "
        "pip install 'tensoracle[convert]'\n"
    )
    assert not (tmp_path / "out.safetensors").exists()


def test_without_torch_the_command_line_fails_with_the_hint(tmp_path):
    script = _WITHOUT_TORCH + textwrap.dedent(
        """
        import runpy
        sys.argv = ["tensoracle.convert", "m.pth", "out.safetensors"]
        runpy.run_module("tensoracle.convert", run_name="__main__")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert result.returncode == 1
    assert result.stderr == (
        "python -m tensoracle.convert: converting .pth checkpoints needs torch; install it with: "
        "pip install 'tensoracle[convert]'\n"
    )


def test_importing_tensoracle_does_not_import_torch():
    code = "import sys, tensoracle, tensoracle.convert; print('torch' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ},
    )
    assert result.stdout == "False\n"
