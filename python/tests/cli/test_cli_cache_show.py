"""End-to-end tests of `tensoracle cache show`, `cache diff` and `tensoracle doctor`."""

from __future__ import annotations

import ctypes
import json
import os
import sys
from pathlib import Path

import pytest
from cache_cli import run
from engine_files import write_engine, write_file

from tensoracle.cli import doctor
from tensoracle.cli.doctor import can_run

IO_SIGNATURE = {
    "tensors": [
        {"name": "x", "mode": "INPUT", "dtype": "FLOAT", "shape": [1, -1], "min": [1, 1],
         "opt": [1, 4], "max": [1, 8]},
        {"name": "y", "mode": "OUTPUT", "dtype": "FLOAT", "shape": [1, -1]},
    ]
}  # fmt: skip
REFERENCES = {
    "io": IO_SIGNATURE,
    "targets": ["sm80", "sm89"],
    "built_at": "2026-11-30T10:00:00Z",
    "build_milliseconds": 1234,
    "workspace_limit": None,
}


def _conditions(**changes: object) -> dict[str, object]:
    base: dict[str, object] = {
        "name": "model",
        "graph_version": "3",
        "backend": "tensorrt_rtx",
        "backend_version": "1.7.1.116",
        "gpu": None,
        "weights": ["ab" * 32],
    }
    return {**base, **changes}


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    directory = tmp_path / "cache"
    directory.mkdir()
    return directory


def test_show_prints_the_whole_header_as_json(cache: Path):
    path = write_engine(cache, _conditions(), references=REFERENCES, plan=b"p" * 300)
    completed = run("cache", "show", path.name, "--cache-dir", str(cache))
    assert completed.returncode == 0, completed.stderr
    shown = json.loads(completed.stdout)
    assert shown["file_name"] == path.name
    assert shown["conditions"] == _conditions()
    assert shown["io"] == IO_SIGNATURE
    assert shown["targets"] == ["sm80", "sm89"]
    assert shown["references"] == REFERENCES
    assert shown["plan_bytes"] == 300
    assert shown["size_bytes"] == path.stat().st_size == 20 + shown["header_bytes"] + 300
    assert shown["built_at"] == "2026-11-30T10:00:00Z"
    assert shown["rebuild_reason"] is None


def test_show_accepts_a_path_and_prints_a_table(cache: Path, tmp_path: Path):
    path = write_engine(cache, _conditions(), references=REFERENCES)
    completed = run("cache", "show", str(path), "--format", "table")
    assert completed.returncode == 0, completed.stderr
    text = completed.stdout
    for expected in ("Entry", "Conditions", "IO", "INPUT x", "FLOAT [1,-1] min=[1,1]",
                     "graph_version", "1.7.1.116", "References", "sm80"):  # fmt: skip
        assert expected in text, text


def test_show_fails_with_status_1_for_missing_or_damaged_entries(cache: Path):
    missing = run("cache", "show", "absent.engine", "--cache-dir", str(cache))
    assert missing.returncode == 1
    assert "absent.engine" in missing.stderr
    damaged = write_file(cache / "bad.engine", b"not an engine at all, just text")
    completed = run("cache", "show", damaged.name, "--cache-dir", str(cache))
    assert completed.returncode == 1
    assert "bad.engine" in completed.stderr
    assert run("cache", "show").returncode == 2


def test_diff_names_each_differing_condition(cache: Path):
    a = write_engine(cache, _conditions())
    b = write_engine(cache, _conditions(graph_version="4", backend_version="1.7.2.3",
                                        gpu={"name": "NVIDIA L40S"}))  # fmt: skip
    completed = run("cache", "diff", a.name, b.name, "--cache-dir", str(cache))
    assert completed.returncode == 1, completed.stderr  # they differ, as diff(1) says
    diff = json.loads(completed.stdout)
    assert diff["same"] is False
    assert {item["key"]: item["description"] for item in diff["differences"]} == {
        "backend_version": "tensorrt_rtx version 1.7.1.116 \u2192 1.7.2.3",
        "gpu": "gpu: none \u2192 NVIDIA L40S",
        "graph_version": "graph_version 3 \u2192 4",
    }
    table = run("cache", "diff", a.name, b.name, "--cache-dir", str(cache), "--format", "table")
    assert table.returncode == 1
    assert "graph_version 3 \u2192 4" in table.stdout
    same_run = run("cache", "diff", a.name, str(a), "--cache-dir", str(cache))
    assert same_run.returncode == 0, same_run.stderr
    same = json.loads(same_run.stdout)
    assert same["same"] is True
    assert same["differences"] == []
    # Trouble is 2, as for diff(1): usage, and an entry missing or ambiguous.
    assert run("cache", "diff", a.name, "--cache-dir", str(cache)).returncode == 2
    missing = run("cache", "diff", a.name, "nope.engine", "--cache-dir", str(cache))
    assert missing.returncode == 2
    assert "nope.engine" in missing.stderr
    ambiguous = run("cache", "diff", a.name, "model", "--cache-dir", str(cache))
    assert ambiguous.returncode == 2
    assert a.name in ambiguous.stderr
    assert b.name in ambiguous.stderr


def test_show_and_diff_take_a_unique_prefix_or_the_recipes_name(cache: Path):
    a = write_engine(cache, _conditions())
    b = write_engine(cache, _conditions(name="decoder"))
    shown = run("cache", "show", "model", "--cache-dir", str(cache))
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["file_name"] == a.name
    by_prefix = run("cache", "show", b.name[:10], "--cache-dir", str(cache))
    assert by_prefix.returncode == 0, by_prefix.stderr
    assert json.loads(by_prefix.stdout)["file_name"] == b.name
    differing = run("cache", "diff", "model", "decoder", "--cache-dir", str(cache))
    assert differing.returncode == 1, differing.stderr
    assert [item["key"] for item in json.loads(differing.stdout)["differences"]] == ["name"]


def test_an_ambiguous_entry_is_refused_listing_every_candidate(cache: Path):
    a = write_engine(cache, _conditions())
    b = write_engine(cache, _conditions(graph_version="4"))
    # A prefix of both that is no recipe's name, and the name of both.
    for entry in ("mod", "model"):
        completed = run("cache", "show", entry, "--cache-dir", str(cache))
        assert completed.returncode == 2, completed.stderr
        assert a.name in completed.stderr
        assert b.name in completed.stderr
        assert completed.stdout == ""
    unknown = run("cache", "show", "encoder", "--cache-dir", str(cache))
    assert unknown.returncode == 1
    assert "no entry named 'encoder'" in unknown.stderr


def _doctor(home: Path, *args: str):
    completed = run("doctor", *args, env={**os.environ, "XDG_CACHE_HOME": str(home)})
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


def test_doctor_reports_backends_driver_gpus_and_cache_as_json(tmp_path: Path):
    home = tmp_path / "xdg"
    directory = home / "tensoracle"
    directory.mkdir(parents=True)
    write_engine(directory, _conditions(), plan=b"p" * 50)
    report = json.loads(_doctor(home, "--format", "json"))
    rtx = next(entry for entry in report["backends"] if entry["name"] == "tensorrt_rtx")
    assert rtx["found"]
    assert rtx["version"].startswith("1.7")
    assert report["cache"]["directory"] == str(directory)
    assert report["cache"]["entries"] == 1
    assert report["cache"]["size_bytes"] == sum(p.stat().st_size for p in directory.iterdir())
    assert {tool["name"] for tool in report["producer_tools"]} >= {"ptxas", "triton"}
    if report["gpus"]:
        assert all("tensorrt_rtx" in gpu["backends"] for gpu in report["gpus"])
    else:
        assert report["gpu_summary"].startswith("no GPU")
    assert run("doctor", "--format", "yaml").returncode == 2


def test_doctor_speaks_to_a_person_by_default(tmp_path: Path):
    home = tmp_path / "xdg"
    directory = home / "tensoracle"
    directory.mkdir(parents=True)
    write_engine(directory, _conditions(), plan=b"p" * 50)
    size = sum(p.stat().st_size for p in directory.iterdir())
    text = _doctor(home)
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    assert text == _doctor(home, "--format", "table")
    lines = text.splitlines()
    headings = [line for line in lines if line and not line.startswith(" ")]
    assert headings[1:] == ["Backends", "Driver", "GPUs", "Cache", "Producer tools"]
    cache = lines[lines.index("Cache") + 1 : lines.index("Cache") + 3]
    assert cache == [f"  {directory}", f"  1 entry, {size} bytes"]
    report = json.loads(_doctor(home, "--format", "json"))
    rtx = next(entry for entry in report["backends"] if entry["name"] == "tensorrt_rtx")
    assert any(line.split()[:2] == ["tensorrt_rtx", rtx["version"]] for line in lines), text


def test_doctor_shows_a_cache_folder_named_with_control_characters_inert(tmp_path: Path):
    home = tmp_path / "x\x1b]0;owned\x07\x1b[31m"
    (home / "tensoracle").mkdir(parents=True)
    text = _doctor(home)
    assert "\x1b" not in text
    assert "\x07" not in text
    assert str(tmp_path / "x\\x1b]0;owned\\x07\\x1b[31m" / "tensoracle") in text
    assert json.loads(_doctor(home, "--format", "json"))["cache"]["directory"] == str(
        home / "tensoracle"
    )


def test_doctor_says_a_missing_cache_folder_is_not_created_yet(tmp_path: Path):
    lines = _doctor(tmp_path / "nothing-here").splitlines()
    assert lines[lines.index("Cache") + 2] == "  not created yet"


def _documented_sample() -> list[str]:
    """The sample output of docs/doctor.md: the indented lines after ``$ tensoracle doctor``."""
    text = (Path(__file__).parents[3] / "docs" / "doctor.md").read_text()
    block = text.split("    $ tensoracle doctor\n", 1)[1]
    sample = []
    for line in block.splitlines():
        if line and not line.startswith("    "):
            break
        sample.append(line[4:])
    return sample


def _rows(lines: list[str], heading: str) -> list[str]:
    """The rows of one section, up to the blank line that ends it."""
    rows = lines[lines.index(heading) + 1 :]
    return rows[: rows.index("")] if "" in rows else rows


def test_the_documented_doctor_output_has_the_sections_and_rows_doctor_prints(tmp_path: Path):
    sample = _documented_sample()
    printed = _doctor(tmp_path / "xdg").splitlines()
    assert sample[0].split()[0] == printed[0].split()[0] == "tensoracle"

    def headings(lines: list[str]) -> list[str]:
        return [line for line in lines[1:] if line and not line.startswith(" ")]

    assert headings(sample) == headings(printed)
    for heading, label_words in (("Backends", 1), ("Driver", 2), ("Producer tools", 1)):
        documented = [row.split()[:label_words] for row in _rows(sample, heading)]
        assert documented == [row.split()[:label_words] for row in _rows(printed, heading)]


def test_doctor_states_what_runs_where():
    assert can_run("tensorrt_rtx", "9.0")["verdict"] == "no"
    assert "UNSUPPORTED_CC" in can_run("tensorrt_rtx", "9.0")["basis"]
    assert can_run("tensorrt_rtx", "8.9")["verdict"] == "expected"
    assert can_run("tensorrt_rtx", "10.0")["verdict"] == "unknown"
    assert can_run("tensorrt", "9.0")["verdict"] == "expected"


@pytest.mark.parametrize(
    ("platform", "library"), [("win32", "nvcuda.dll"), ("linux", "libcuda.so.1")]
)
def test_doctor_loads_and_names_the_driver_library_of_the_platform(monkeypatch, platform, library):
    try:
        ctypes.CDLL(library)
        loadable = True
    except OSError:
        loadable = False  # always so for nvcuda.dll here: this is Linux
    monkeypatch.setattr(sys, "platform", platform)
    driver, gpus = doctor._driver()
    if loadable:
        assert "cannot be loaded" not in driver.get("problem", "")
    else:
        assert driver["problem"].startswith(f"no CUDA driver: {library} cannot be loaded (")
        assert driver["cuda_driver_api_version"] is None
        assert gpus == []


def test_a_name_is_looked_up_in_the_cache_before_the_working_directory(cache: Path, tmp_path: Path):
    saved = write_engine(cache, _conditions())
    work = tmp_path / "work"
    work.mkdir()
    # A folder and then a file named as the recipe: neither stands in for the entry.
    (work / "model").mkdir()
    by_folder = run("cache", "show", "model", "--cache-dir", str(cache), cwd=work)
    assert by_folder.returncode == 0, by_folder.stderr
    assert json.loads(by_folder.stdout)["file_name"] == saved.name
    (work / "model").rmdir()
    write_file(work / "model", b"a plain TensorRT plan")
    by_file = run("cache", "show", "model", "--cache-dir", str(cache), cwd=work)
    assert by_file.returncode == 0, by_file.stderr
    assert json.loads(by_file.stdout)["file_name"] == saved.name
    # So is a file named as the entry itself.
    write_file(work / saved.name, b"not the entry")
    by_name = run("cache", "show", saved.name, "--cache-dir", str(cache), cwd=work)
    assert by_name.returncode == 0, by_name.stderr
    assert Path(json.loads(by_name.stdout)["path"]).resolve() == saved.resolve()
    # A path names the file in the working directory.
    as_path = run("cache", "show", "./model", "--cache-dir", str(cache), cwd=work)
    assert as_path.returncode == 1
    assert "./model" in as_path.stderr
    # A name that is no entry's is not looked for in the working directory, unless it is an
    # engine file's name.
    write_file(work / "decoder", b"anything")
    unknown = run("cache", "show", "decoder", "--cache-dir", str(cache), cwd=work)
    assert unknown.returncode == 1
    assert "no entry named 'decoder' in the cache directory" in unknown.stderr
    assert "give its path (./decoder)" in unknown.stderr
    shipped = work / "shipped.engine"
    shipped.write_bytes(saved.read_bytes())
    by_engine_name = run("cache", "show", "shipped.engine", "--cache-dir", str(cache), cwd=work)
    assert by_engine_name.returncode == 0, by_engine_name.stderr
    assert Path(json.loads(by_engine_name.stdout)["path"]).resolve() == shipped.resolve()
