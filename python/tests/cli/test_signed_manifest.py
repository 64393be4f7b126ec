"""Signed deployment manifests, from `tensoracle build --manifest --sign-key` (real TensorRT-RTX
builds of tinymodel) to the readers an application uses: the envelope verifies with a
third-party DSSE verifier (securesystemslib) and each subject is what `sha256sum` prints; the
attacks the trust model names (a swapped entry, a rollback, too few signatures, an expired
manifest, an unsigned one where a key is given) each end in a refusal naming what failed, in
the Python package and in `tensoracle manifest verify`."""

from __future__ import annotations

import base64
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cache_cli import run
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from remote_support import make_keys
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import SSlibKey
from test_build_command import local_environment, write_package

import tensoracle
from tensoracle import _core
from tensoracle.errors import UntrustedEngineError

pytestmark = [pytest.mark.slow, pytest.mark.backend]

RTX_4090 = json.dumps({"name": "NVIDIA GeForce RTX 4090", "compute_capability": "8.9"})
LATER = "2099-01-01T00:00:00Z"


def statement(manifest: Path) -> dict[str, Any]:
    """The in-toto Statement a signed manifest's envelope carries."""
    envelope = json.loads(manifest.read_text())
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    return json.loads(base64.b64decode(envelope["payload"]))


def third_party_key(verify: Path) -> SSlibKey:
    """The verify key as securesystemslib holds it, under the key id our envelopes name."""
    keyid = _core.VerifyKey.from_pem_file(str(verify)).fingerprint
    return SSlibKey.from_crypto(load_pem_public_key(verify.read_bytes()), keyid=keyid)


def read(manifest: Path, cache: Path, **trust: Any) -> dict[str, Any]:
    """The manifest as open_deployed and `cache pull --manifest` read it (the same reader)."""
    return _core.read_trusted_manifest(str(manifest), str(cache), **trust).document


@pytest.fixture
def published(tmp_path: Path) -> dict[str, Any]:
    """tinymodel's two recipes built for sm89, with their plain manifest, and a publisher's key
    pair and another's."""
    write_package(tmp_path / "packages")
    environment = local_environment(tmp_path, "farm")
    plain = tmp_path / "deploy.json"
    built = run("build", "tinymodel:RECIPES", "--targets", "sm89", "--manifest", str(plain),
                "--format", "json", env=environment)  # fmt: skip
    assert built.returncode == 0, built.stderr
    signing, verify = make_keys(tmp_path, "publisher")
    second, second_verify = make_keys(tmp_path, "second")
    return {
        "environment": environment,
        "cache": tmp_path / "farm" / "tensoracle",
        "plain": plain,
        "signing": signing,
        "verify": verify,
        "second": second,
        "second_verify": second_verify,
        "tmp": tmp_path,
    }


def sign(published: dict[str, Any], version: int, *keys: Path, expires: str = LATER) -> Path:
    text = _core.sign_manifest(
        published["plain"].read_text(), "deploy.json", version, expires, [str(k) for k in keys]
    )
    path = published["tmp"] / f"deploy-{version}-{len(keys)}.json"
    path.write_text(text)
    return path


def test_a_manifest_signed_by_build_verifies_with_securesystemslib_and_sha256sum(
    tmp_path: Path,
):
    write_package(tmp_path / "packages")
    environment = local_environment(tmp_path, "farm")
    signing, verify = make_keys(tmp_path, "publisher")
    manifest = tmp_path / "deploy.json"
    built = run("build", "tinymodel:RECIPES", "--targets", "sm89", "--manifest", str(manifest),
                "--sign-key", str(signing), "--manifest-version", "42", "--format", "json",
                env=environment)  # fmt: skip
    assert built.returncode == 0, built.stderr
    assert "wrote the signed manifest (version 42) of 2 entries" in built.stderr

    # A third-party DSSE verifier accepts the envelope with the publisher's key alone.
    envelope = Envelope.from_dict(json.loads(manifest.read_text()))
    key = third_party_key(verify)
    assert list(envelope.verify([key], 1)) == [key.keyid]
    _stranger_signing, stranger = make_keys(tmp_path, "stranger")
    with pytest.raises(VerificationError):
        envelope.verify([third_party_key(stranger)], 1)
    # Its subjects are the engine files, each by the digest sha256sum prints.
    signed = statement(manifest)
    assert signed["_type"] == "https://in-toto.io/Statement/v1"
    assert signed["predicate"]["version"] == 42
    cache = tmp_path / "farm" / "tensoracle"
    assert len(signed["subject"]) == 2
    for subject in signed["subject"]:
        printed = subprocess.run(
            ["sha256sum", str(cache / subject["name"])], capture_output=True, text=True, check=True
        ).stdout.split()[0]
        assert subject["digest"]["sha256"] == printed
    # Our reader and our command agree.
    document = read(manifest, tmp_path / "node", verify_key=str(verify))
    assert document["version"] == 42
    assert document["signers"] == [key.keyid]
    assert all(entry["bound"] for entry in document["entries"])
    verified = run("manifest", "verify", str(manifest), "--key", str(verify),
                   "--cache-dir", str(cache))  # fmt: skip
    assert verified.returncode == 0, verified.stderr
    assert "verified: tinymodel:RECIPES version 42, expires " in verified.stdout
    assert f"signed by 1 of 1 trusted keys ({key.keyid}; 1 required), 2 entries" in verified.stdout
    assert verified.stdout.count(" is the file named\n") == 2


def test_an_entry_swapped_in_the_signed_payload_is_refused(published: dict[str, Any]):
    manifest = sign(published, 5, published["signing"])
    envelope = json.loads(manifest.read_text())
    edited = statement(manifest)
    entries = edited["predicate"]["entries"]
    entries[0]["file_name"], entries[1]["file_name"] = (
        entries[1]["file_name"],
        entries[0]["file_name"],
    )
    envelope["payload"] = base64.b64encode(json.dumps(edited).encode()).decode()
    manifest.write_text(json.dumps(envelope))
    with pytest.raises(UntrustedEngineError) as refused:
        read(manifest, published["cache"], verify_key=str(published["verify"]))
    assert "0 of the trust policy's keys (none) signed the manifest, and it requires 1 of 1" in (
        str(refused.value)
    )
    checked = run("manifest", "verify", str(manifest), "--key", str(published["verify"]))
    assert checked.returncode == 1
    assert "0 of the trust policy's keys (none) signed the manifest" in checked.stderr


def test_an_engine_file_swapped_in_the_cache_folder_is_refused_by_the_open(
    published: dict[str, Any], monkeypatch: pytest.MonkeyPatch
):
    manifest = sign(published, 5, published["signing"])
    entries = statement(manifest)["predicate"]["entries"]
    cache = published["cache"]
    encoder, decoder = (cache / entry["file_name"] for entry in entries)
    monkeypatch.setenv("TENSORACLE_DESCRIBED_GPU", RTX_4090)
    handle = tensoracle.open_deployed(
        manifest, entries[0]["recipe"], cache_dir=cache, verify_key=published["verify"]
    )
    assert handle.signer == _core.VerifyKey.from_pem_file(str(published["verify"])).fingerprint
    original = encoder.read_bytes()
    # The other recipe's engine put under this entry's name: another size than the entry's.
    encoder.unlink()
    encoder.write_bytes(decoder.read_bytes())
    with pytest.raises(tensoracle.CorruptEngineError, match="the manifest records engine_bytes"):
        tensoracle.open_deployed(
            manifest, entries[0]["recipe"], cache_dir=cache, verify_key=published["verify"]
        )
    # The entry's own engine with one byte of its header changed (same size): not the file the
    # signed manifest names, refused before the header is decoded, whole or streamed.
    changed = bytearray(original)
    changed[40] ^= 1
    encoder.write_bytes(bytes(changed))
    for streamed in (False, True):
        with pytest.raises(UntrustedEngineError, match="is not the file the signed manifest names"):
            tensoracle.open_deployed(
                manifest, entries[0]["recipe"], cache_dir=cache, verify_key=published["verify"],
                stream_plan=streamed,
            )  # fmt: skip
    checked = run("manifest", "verify", str(manifest), "--key", str(published["verify"]),
                  "--cache-dir", str(cache))  # fmt: skip
    assert checked.returncode == 1
    assert f"{encoder.name} has the SHA-256 " in checked.stdout


def test_a_rollback_to_an_older_signed_manifest_is_refused_naming_both_versions(
    published: dict[str, Any],
):
    cache = published["cache"]
    newer = sign(published, 8, published["signing"])
    older = sign(published, 7, published["signing"])
    assert read(older, cache, verify_key=str(published["verify"]))["version"] == 7
    assert read(newer, cache, verify_key=str(published["verify"]))["version"] == 8
    with pytest.raises(UntrustedEngineError) as refused:
        read(older, cache, verify_key=str(published["verify"]))
    assert re.search(
        r"version 7 of tinymodel:RECIPES is lower than version 8, which this cache folder "
        r"accepted before \(.*manifest-versions\.json\)",
        str(refused.value),
    )
    # `cache pull --manifest` reads it as the open does: refused, nothing pulled.
    pulled = run("cache", "pull", "--manifest", str(older), "--remote", "s3://unused/x",
                 "--cache-dir", str(cache),
                 env={**published["environment"],
                      "TENSORACLE_REMOTE_VERIFY_KEY": str(published["verify"])})  # fmt: skip
    assert pulled.returncode == 1
    assert "is lower than version 8" in pulled.stderr
    # A minimum version refuses it in a folder that never saw version 8.
    with pytest.raises(UntrustedEngineError, match="version 7 is lower than the minimum version 8"):
        read(older, published["tmp"] / "fresh", verify_key=str(published["verify"]),
             minimum_version=8)  # fmt: skip


def test_a_threshold_policy_needs_enough_trusted_signers_and_cosigning_adds_one(
    published: dict[str, Any], monkeypatch: pytest.MonkeyPatch
):
    fingerprints = {
        name: _core.VerifyKey.from_pem_file(str(published[name])).fingerprint
        for name in ("verify", "second_verify")
    }
    policy = published["tmp"] / "policy.json"
    policy.write_text(json.dumps({
        "schema_version": 1,
        "threshold": 2,
        "keys": {fingerprints[name]: published[name].read_text() for name in fingerprints},
    }))  # fmt: skip
    manifest = sign(published, 5, published["signing"])
    with pytest.raises(UntrustedEngineError, match=r"requires 2 of 2"):
        read(manifest, published["cache"], trust_policy=str(policy))
    cosigned = run("manifest", "sign", str(manifest), "--key", str(published["second"]))
    assert cosigned.returncode == 0, cosigned.stderr
    assert f"added the signatures of key ids {fingerprints['second_verify']}" in cosigned.stderr
    signers = read(manifest, published["cache"], trust_policy=str(policy))["signers"]
    assert sorted(signers) == sorted(fingerprints.values())
    verified = run("manifest", "verify", str(manifest), "--trust-policy", str(policy))
    assert verified.returncode == 0, verified.stderr
    assert "signed by 2 of 2 trusted keys" in verified.stdout
    # An application names the policy in its environment (over the fleet's verify key, which a
    # node may set for its pulls: a key the policy does not list).
    monkeypatch.setenv("TENSORACLE_DESCRIBED_GPU", RTX_4090)
    monkeypatch.setenv("TENSORACLE_TRUST_POLICY", str(policy))
    _other, other_verify = make_keys(published["tmp"], "fleet")
    monkeypatch.setenv("TENSORACLE_REMOTE_VERIFY_KEY", str(other_verify))
    recipe = statement(manifest)["predicate"]["entries"][0]["recipe"]
    handle = tensoracle.open_deployed(manifest, recipe, cache_dir=published["cache"])
    assert sorted(str(handle.signer).split(", ")) == sorted(fingerprints.values())
    monkeypatch.delenv("TENSORACLE_TRUST_POLICY")
    with pytest.raises(UntrustedEngineError, match="0 of the trust policy's keys"):
        tensoracle.open_deployed(manifest, recipe, cache_dir=published["cache"])


def test_an_expired_or_unsigned_manifest_is_refused_where_a_key_is_given(
    published: dict[str, Any],
):
    verify = str(published["verify"])
    expired = sign(published, 5, published["signing"], expires="2020-01-01T00:00:00Z")
    with pytest.raises(UntrustedEngineError, match="expired at 2020-01-01T00:00:00Z"):
        read(expired, published["cache"], verify_key=verify)
    with pytest.raises(UntrustedEngineError, match="is not signed, and a verify key"):
        read(published["plain"], published["cache"], verify_key=verify)
    # Without a key a plain manifest is read as before, a signed one refused unless skipped.
    assert read(published["plain"], published["cache"])["version"] is None
    signed = sign(published, 5, published["signing"])
    with pytest.raises(UntrustedEngineError, match="is a signed manifest, but no verify key"):
        read(signed, published["cache"])
    skipped = read(signed, published["cache"], skip_signature_verification=True)
    assert skipped["signers"] == []
    assert not any(entry["bound"] for entry in skipped["entries"])
