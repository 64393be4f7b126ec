"""bundle.json read within the core's limits: inspect_bundle's pre-check uses the core's bounded
JSON parser (tensoracle._core.json_refusal), so a manifest nested 100,000 levels deep or larger
than the limit is a BundleError naming the file, the limit and the value (Python's json gave
RecursionError), malformed JSON stays json.JSONDecodeError at the position Python's own parser
reports, and the shapes that made the old parser quadratic are read whole."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cache_cli import tensoracle_executable

import tensoracle.bundle.inspection as bundle_module
from tensoracle import _core
from tensoracle.bundle import BundleError, inspect_bundle

LIMIT = _core.MAX_MANIFEST_BYTES


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def empty_objects(count: int) -> bytes:
    return b"[" + b",".join([b"{}"] * count) + b"]"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    directory = tmp_path / "bundle"
    directory.mkdir()
    return directory


def write(root: Path, data: bytes) -> Path:
    path = root / "bundle.json"
    path.write_bytes(data)
    return path


def test_the_manifest_limit_is_the_cores_four_mib():
    assert LIMIT == 4 << 20


def test_a_manifest_nested_100000_levels_is_a_bundle_error_naming_file_limit_and_level(root):
    path = write(root, nested(100_000))
    with pytest.raises(BundleError) as caught:
        inspect_bundle(root)
    message = str(caught.value)
    assert f"'{path}'" in message
    assert "deeper than the limit of 64 levels (level 65 opens)" in message
    # The native command refuses it with the same words.
    completed = subprocess.run(
        [tensoracle_executable(), "bundle", "inspect", str(root)], capture_output=True, text=True
    )
    assert completed.returncode == 1
    assert "deeper than the limit of 64 levels (level 65 opens)" in completed.stderr


def test_depth_up_to_the_limit_passes_the_check_one_more_level_is_refused(root):
    write(root, nested(64))
    assert bundle_module._check_manifest_json(root) is None
    # The core then judges the manifest itself: not an object, so not the depth.
    with pytest.raises(BundleError, match="an object with schema_version 1"):
        inspect_bundle(root)
    write(root, nested(65))
    with pytest.raises(BundleError, match=r"limit of 64 levels \(level 65 opens\)"):
        bundle_module._check_manifest_json(root)


def test_a_manifest_larger_than_the_limit_is_a_bundle_error_naming_its_size(root):
    path = write(root, b"{}" + b" " * (LIMIT - 1))
    with pytest.raises(BundleError) as caught:
        inspect_bundle(root)
    assert str(caught.value) == (
        f"bundle manifest '{path}' is {LIMIT + 1} bytes, larger than the limit of {LIMIT} bytes"
    )
    write(root, b"{}" + b" " * (LIMIT - 2))  # exactly the limit: read and parsed
    assert bundle_module._check_manifest_json(root) is None


@pytest.mark.parametrize(
    "text",
    [
        '{"schema_version": 1,',
        "[1] x",
        '{"a" 1}',
        '{"\u00fc\u00df": }',  # two characters of two bytes each before the error
        '{"name": "gr\u00fc\u00df", ]',
        "",
        '{"a":\n  [1,\n   2\n  }',
    ],
)
def test_malformed_json_is_a_decode_error_where_pythons_parser_puts_it(root, text):
    # Errors at a one-character token, where both parsers stop at the same place (at a longer
    # token, Python points at its start, the core at the byte it last read).
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    path = write(root, text.encode())
    with pytest.raises(json.JSONDecodeError) as caught:
        inspect_bundle(root)
    error = caught.value
    assert error.doc == text
    assert (error.pos, error.lineno, error.colno) == (
        expected.value.pos,
        expected.value.lineno,
        expected.value.colno,
    )
    assert str(path) in error.msg


def test_a_trailing_comma_is_a_decode_error_at_the_bracket_that_follows_it(root):
    # Python up to 3.12 points at the bracket ("Expecting value"), 3.13 at the comma ("Illegal
    # trailing comma"); the core reports the byte where the value was missing, on every Python.
    text = "[1,]"
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    write(root, text.encode())
    with pytest.raises(json.JSONDecodeError) as caught:
        inspect_bundle(root)
    assert (caught.value.pos, caught.value.lineno, caught.value.colno) == (3, 1, 4)


def test_nan_is_a_decode_error_as_json_allows_no_nan(root):
    # Python's parser reads NaN as a float; JSON has no such value, and the core refuses it.
    write(root, b'{"schema_version": NaN}')
    with pytest.raises(json.JSONDecodeError) as caught:
        inspect_bundle(root)
    assert caught.value.pos == len('{"schema_version": ')  # at the N


def test_bytes_that_are_not_utf8_or_a_bom_are_decode_errors(root):
    write(root, b'{"a": "b\xff"}')
    with pytest.raises(json.JSONDecodeError) as caught:
        inspect_bundle(root)
    assert caught.value.pos == 8  # the byte that is not UTF-8
    assert "ill-formed UTF-8" in caught.value.msg
    # Python's parser refused a byte order mark; the core would skip it.
    write(root, b"\xef\xbb\xbf{}")
    with pytest.raises(json.JSONDecodeError, match="BOM") as caught:
        inspect_bundle(root)
    assert caught.value.pos == 0


def test_a_number_beyond_a_double_is_a_bundle_error_as_the_core_gives_it(root):
    path = write(root, b'{"schema_version": 1e400}')
    with pytest.raises(BundleError) as caught:
        inspect_bundle(root)
    assert f"bundle manifest '{path}' is not JSON" in str(caught.value)
    assert "number overflow" in str(caught.value)


def test_a_megabyte_of_empty_objects_is_read_whole_and_refused_by_the_schema(root):
    # 349,525 objects: each object's end made the old parser scan the array from its start.
    count = (1 << 20) // 3
    path = write(root, empty_objects(count))
    assert bundle_module._check_manifest_json(root) is None
    with pytest.raises(BundleError) as caught:
        inspect_bundle(root)
    assert str(caught.value).startswith(f"{path} is ")
    assert "an object with schema_version 1" in str(caught.value)
    completed = subprocess.run(
        [tensoracle_executable(), "bundle", "inspect", "--json", str(root)],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 1
    report = json.loads(completed.stdout)
    assert report["error"] == "BundleError"
    assert "an object with schema_version 1" in report["message"]


def test_json_refusal_names_the_limit_or_the_offset():
    assert _core.json_refusal(empty_objects(256_000), LIMIT) is None
    assert _core.json_refusal(bytearray(b'{"a": [1, 2.5, "x", null]}'), 100) is None
    assert _core.json_refusal(memoryview(nested(64)), 200) is None
    message, offset = _core.json_refusal(nested(65), 200)
    assert offset is None
    assert "deeper than the limit of 64 levels (level 65 opens)" in message
    message, offset = _core.json_refusal(nested(3), 200, max_depth=2)
    assert offset is None
    assert "deeper than the limit of 2 levels (level 3 opens)" in message
    message, offset = _core.json_refusal(b"[" + b" " * 99, 100)
    assert offset == 100
    assert "unexpected end of input" in message
    message, offset = _core.json_refusal(b" " * 101, 100)
    assert offset is None
    assert message == "the JSON text of 101 bytes exceeds the limit of 100 bytes"
    with pytest.raises(TypeError, match="bytes-like"):
        _core.json_refusal("text", 100)


def zeros(values: int) -> bytes:
    """An array holding ``values`` values in all: itself and ``values - 1`` zeros."""
    return b"[" + b",".join([b"0"] * (values - 1)) + b"]"


def test_the_manifest_value_cap_is_the_cores_exactly_and_one_more_is_a_bundle_error(root):
    cap = _core.MAX_MANIFEST_VALUES
    assert cap == 1 << 20
    write(root, zeros(cap))
    assert bundle_module._check_manifest_json(root) is None
    path = write(root, zeros(cap + 1))
    with pytest.raises(BundleError) as caught:
        bundle_module._check_manifest_json(root)
    assert str(caught.value) == (
        f"bundle manifest '{path}' is not JSON: "
        f"the JSON text holds more values than the limit of {cap}"
    )
    # The core refuses it with the same words when it reads the manifest itself.
    message, offset = _core.json_refusal(zeros(cap + 1), LIMIT, max_values=cap)
    assert offset is None
    assert message.endswith(f"more values than the limit of {cap}")
    assert _core.json_refusal(zeros(cap + 1), LIMIT) is None  # no cap unless asked for
