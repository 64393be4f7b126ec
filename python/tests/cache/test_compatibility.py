"""Which GPUs an entry runs on: the identity's hardware keys and the matching rule, as pure
functions of described devices (no CUDA is touched)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import tensoracle
from tensoracle import BuilderSettings, EngineBuild, InputShape, gpu
from tensoracle.cache import identity
from tensoracle.cache.compatibility import cannot_run, hardware, target_of


def described(name: str, capability: str, **overrides: Any) -> dict[str, Any]:
    """A GPU description with every property the driver reports."""
    properties: dict[str, Any] = {
        "name": name,
        "compute_capability": capability,
        "memory_bus_width_bits": 384,
        "l2_cache_bytes": 73400320,
        "shared_memory_per_block_bytes": 49152,
        "shared_memory_per_block_optin_bytes": 101376,
        "shared_memory_per_multiprocessor_bytes": 102400,
        "texture_alignment_bytes": 512,
        "multiprocessor_count": 128,
        "integrated": False,
        "ecc_enabled": False,
        "total_memory_bytes": 25757220864,
    }
    properties.update(overrides)
    return properties


SM75 = described("NVIDIA GeForce RTX 2080 Ti", "7.5", multiprocessor_count=68)
SM86 = described("NVIDIA GeForce RTX 3090", "8.6", multiprocessor_count=82)
SM89 = described("NVIDIA GeForce RTX 4090", "8.9")
SM89_LAPTOP = described("NVIDIA GeForce RTX 4090 Laptop GPU", "8.9", multiprocessor_count=76)
SM90 = described("NVIDIA H200", "9.0", multiprocessor_count=132, ecc_enabled=True)
SM120 = described("NVIDIA GeForce RTX 5090", "12.0", multiprocessor_count=170)
DEVICES = {"sm75": SM75, "sm86": SM86, "sm89": SM89, "sm90": SM90, "sm120": SM120}
CI_TARGETS = ["sm86", "sm89", "sm120"]


def rtx_entry(targets: list[str], device: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"backend": "tensorrt_rtx", **hardware("tensorrt_rtx", device, targets, None)}


def tensorrt_entry(device: dict[str, Any], level: str | None) -> dict[str, Any]:
    targets = [target_of(device)]
    entry = {"backend": "tensorrt", **hardware("tensorrt", device, targets, level)}
    return entry


@pytest.mark.parametrize(("target", "device"), DEVICES.items())
def test_a_device_is_written_as_its_build_target(target: str, device: dict[str, Any]):
    assert target_of(device) == target


def test_a_malformed_compute_capability_is_named():
    with pytest.raises(ValueError, match=r"compute_capability='ninety'"):
        target_of({"compute_capability": "ninety"})


@pytest.mark.parametrize("device", [None, SM86, SM89, SM90, SM120])
def test_rtx_hardware_is_the_targets_whatever_the_build_machine(device):
    assert hardware("tensorrt_rtx", device, CI_TARGETS, None) == {
        "gpu": None,
        "targets": CI_TARGETS,
    }


@pytest.mark.parametrize(
    ("device", "runs"),
    [(SM75, False), (SM86, True), (SM89, True), (SM89_LAPTOP, True), (SM90, False), (SM120, True)],
)
def test_a_ci_built_rtx_entry_runs_on_the_gpus_of_its_targets(device, runs):
    reason = cannot_run(rtx_entry(CI_TARGETS), device)
    if runs:
        assert reason is None
    else:
        assert reason is not None
        assert target_of(device) in reason
        assert "sm86, sm89, sm120" in reason
        assert device["name"] in reason


def test_an_rtx_entry_saved_with_gpu_properties_is_judged_by_its_targets():
    older = {"backend": "tensorrt_rtx", "gpu": SM89, "targets": ["sm89", "sm120"]}
    assert cannot_run(older, SM120) is None
    assert cannot_run(older, SM89_LAPTOP) is None
    assert cannot_run(older, SM86) is not None


def test_tensorrt_without_a_level_records_the_whole_gpu_and_runs_only_on_its_twin():
    entry = tensorrt_entry(SM89, None)
    assert entry["gpu"] == SM89
    assert "hardware_compatibility" not in entry  # identities of older entries are unchanged
    assert cannot_run(entry, dict(SM89)) is None
    reason = cannot_run(entry, SM89_LAPTOP)
    assert reason is not None
    assert "multiprocessor_count" in reason
    assert "name" in reason
    assert cannot_run(entry, SM120) is not None


def test_tensorrt_same_compute_capability_records_only_the_compute_capability():
    entry = tensorrt_entry(SM89, "same_compute_capability")
    assert entry == {
        "backend": "tensorrt",
        "gpu": {"compute_capability": "8.9"},
        "targets": ["sm89"],
        "hardware_compatibility": "same_compute_capability",
    }
    assert entry == tensorrt_entry(SM89_LAPTOP, "same_compute_capability")
    assert cannot_run(entry, SM89_LAPTOP) is None
    reason = cannot_run(entry, SM86)
    assert reason is not None
    assert "8.9" in reason
    assert "8.6" in reason


@pytest.mark.parametrize("builder", [SM86, SM89, SM90, SM120])
def test_tensorrt_ampere_plus_records_no_gpu_and_runs_from_sm80_on(builder):
    entry = tensorrt_entry(builder, "ampere_plus")
    assert entry == {
        "backend": "tensorrt",
        "gpu": None,
        "targets": [],
        "hardware_compatibility": "ampere_plus",
    }
    for device in (SM86, SM89, SM90, SM120):
        assert cannot_run(entry, device) is None
    reason = cannot_run(entry, SM75)
    assert reason is not None
    assert "sm75" in reason
    assert "ampere_plus" in reason


def test_an_unknown_level_is_refused_in_the_identity_and_never_matches():
    with pytest.raises(ValueError, match=r"hardware_compatibility='hopper_plus'"):
        hardware("tensorrt", SM89, ["sm89"], "hopper_plus")
    entry = {"backend": "tensorrt", "gpu": None, "hardware_compatibility": "hopper_plus"}
    reason = cannot_run(entry, SM89)
    assert reason is not None
    assert "hopper_plus" in reason


def test_a_tensorrt_entry_built_without_a_gpu_runs_nowhere():
    assert cannot_run({"backend": "tensorrt", "gpu": None, "targets": []}, SM89) is not None


def test_the_identity_of_an_rtx_build_is_the_same_on_a_gpu_and_without_one():
    chosen = tensoracle.backend()
    if chosen.name != "tensorrt_rtx":
        pytest.skip("the identity of a TensorRT 11 build depends on the GPU")
    declaration = EngineBuild(
        {"x": InputShape.fixed((1, 2))}, BuilderSettings(targets=tuple(CI_TARGETS))
    )

    def conditions(device: dict[str, Any] | None) -> str:
        made = identity.conditions(
            name="m",
            graph_version="1",
            chosen=chosen,
            declaration=declaration,
            weights=[],
            plugins=[],
            gpu=device,
            targets=chosen.adapter.planned_targets(device, declaration.settings.targets),
        )
        return identity.to_json(made)

    assert {conditions(device) for device in (None, SM86, SM89, SM120)} == {conditions(None)}


def test_the_described_gpu_seam_replaces_the_driver_and_names_bad_values(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.setenv(gpu.DESCRIBED_VARIABLE, json.dumps(SM89))
    assert gpu.properties() == SM89
    for text, named in [
        ("[1]", "JSON object"),
        ("{not json", "is not JSON"),
        ('{"compute_capability": "8.9"}', "'name'"),
        ('{"name": "x", "compute_capability": "89"}', "compute_capability='89'"),
        ('{"name": "x", "compute_capability": "8.9", "l2": 1.5}', "l2=1.5"),
    ]:
        monkeypatch.setenv(gpu.DESCRIBED_VARIABLE, text)
        with pytest.raises(ValueError, match=gpu.DESCRIBED_VARIABLE) as caught:
            gpu.properties()
        assert named in str(caught.value)


def test_a_mistyped_condition_is_named_with_its_value():
    for conditions, named in [
        (
            {"backend": "tensorrt", "gpu": {"name": "x", "l2_cache_bytes": 1.5}},
            "gpu.l2_cache_bytes is 1.5",
        ),
        ({"backend": "tensorrt_rtx", "targets": "sm89"}, 'targets is "sm89"'),
        ({"backend": 7}, "backend is 7"),
    ]:
        with pytest.raises(ValueError, match="the engine's conditions") as caught:
            cannot_run(conditions, SM89)
        assert named in str(caught.value)
