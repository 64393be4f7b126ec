"""The native ``tensoracle`` command hands Python-owned subcommands to ``tensoracle.cli``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cache_cli import run

torch = pytest.importorskip("torch", reason="the convert extra (torch) is not installed")
safetensors_torch = pytest.importorskip("safetensors.torch")


def test_native_command_runs_the_converter_through_the_environment_python(tmp_path: Path):
    weights = {"w": torch.arange(6, dtype=torch.float32).reshape(2, 3), "b": torch.ones(3)}
    source = tmp_path / "model.pth"
    torch.save(weights, source)
    destination = tmp_path / "model.safetensors"

    completed = run("convert", str(source), str(destination))

    assert completed.returncode == 0, completed.stderr
    loaded = safetensors_torch.load_file(destination)
    assert sorted(loaded) == ["b", "w"]
    assert torch.equal(loaded["w"], weights["w"])
    assert torch.equal(loaded["b"], weights["b"])
    size = destination.stat().st_size
    assert size < 1000
    # What it wrote, on stdout (python -m tensoracle.convert stays silent: tests/convert).
    assert completed.stdout == f"wrote {destination}: 2 tensors, {size} B\n"
    assert completed.stderr == ""


def test_convert_counts_nested_tensors_and_gives_sizes_in_binary_units(tmp_path: Path):
    checkpoint = {
        "model": {"w": torch.zeros(1024, 1024), "b": torch.zeros(3)},
        "head": torch.ones(1),
    }
    source = tmp_path / "model.pth"
    torch.save(checkpoint, source)

    completed = run("convert", str(source), "model.safetensors", cwd=tmp_path)

    assert completed.returncode == 0, completed.stderr
    size = (tmp_path / "model.safetensors").stat().st_size
    assert 4 << 20 < size < (4 << 20) + 1024
    assert completed.stdout == "wrote model.safetensors: 3 tensors, 4.0 MiB\n"

    single = run("convert", str(source.with_name("one.pth")), "one.safetensors", cwd=tmp_path)
    assert single.returncode == 1  # no such checkpoint: nothing written, nothing said on stdout
    assert single.stdout == ""
    torch.save({"w": torch.ones(2)}, tmp_path / "one.pth")
    single = run("convert", "one.pth", "one.safetensors", cwd=tmp_path)
    assert single.stdout.startswith("wrote one.safetensors: 1 tensor, ")


def test_help_and_errors_come_from_the_python_parser_under_the_native_name(tmp_path: Path):
    helped = run("convert", "--help")
    assert helped.returncode == 0, helped.stderr
    assert helped.stdout.startswith("usage: tensoracle convert [-h] SOURCE DESTINATION")

    missing = run("convert", str(tmp_path / "absent.pth"), str(tmp_path / "out.safetensors"))
    assert missing.returncode == 1
    assert "absent.pth" in missing.stderr
    assert not (tmp_path / "out.safetensors").exists()

    misused = run("convert", "only-one-argument")
    assert misused.returncode == 2
    assert "DESTINATION" in misused.stderr


def test_an_unusable_interpreter_is_named_with_the_variable_that_chose_it(tmp_path: Path):
    absent = tmp_path / "no-python-here"
    environment = {**os.environ, "TENSORACLE_PYTHON": str(absent)}

    completed = run("convert", "a.pth", "b.safetensors", env=environment)

    assert completed.returncode == 1
    assert str(absent) in completed.stderr
    assert "TENSORACLE_PYTHON" in completed.stderr


def test_an_interpreter_without_the_package_is_named_with_what_to_do(tmp_path: Path):
    # A Python of its own, without the package (-I: no user site, no PYTHONPATH).
    bare = tmp_path / "bare-python"
    bare.write_text(f'#!/bin/sh\nexec {sys.executable} -I -S "$@"\n')
    bare.chmod(0o755)
    environment = {**os.environ, "TENSORACLE_PYTHON": str(bare)}

    completed = run("doctor", env=environment)

    assert completed.returncode == 1
    assert completed.stderr.startswith(
        "tensoracle: this subcommand is part of the Python package, which the interpreter "
    )
    assert "No module named 'tensoracle'" in completed.stderr
    assert "TENSORACLE_PYTHON" in completed.stderr
    assert "Error while finding module specification" not in completed.stderr


def test_the_python_side_refuses_an_unknown_subcommand_with_usage_status():
    completed = subprocess.run(
        [sys.executable, "-m", "tensoracle.cli", "no-such-thing", "--flag"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert completed.returncode == 2
    assert "'no-such-thing --flag'" in completed.stderr
