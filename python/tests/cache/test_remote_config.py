"""Settings of the remote cache: URLs and numbers are checked and named when wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensoracle.cache.remote.config import ManifestTrust, configure, manifest_trust


def test_off_unless_named(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("TENSORACLE_REMOTE", raising=False)
    assert configure() is None
    monkeypatch.setenv("TENSORACLE_REMOTE", "s3://bucket/a/b/")
    assert configure("") is None  # the argument turns it off for one call
    config = configure()
    assert config is not None
    assert (config.bucket, config.prefix) == ("bucket", "a/b")
    assert config.object_url("engines/x.engine") == "s3://bucket/a/b/engines/x.engine"
    other = configure("s3://other")
    assert other is not None
    assert (other.bucket, other.prefix) == ("other", "")


@pytest.mark.parametrize("url", ["bucket/prefix", "https://host/bucket", "s3://", "s3://b?x=1"])
def test_bad_urls_are_named(url: str):
    with pytest.raises(ValueError, match="is not an s3://BUCKET") as caught:
        configure(url)
    assert repr(url) in str(caught.value)


def test_numbers_and_keys_come_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path):
    monkeypatch.setenv("TENSORACLE_REMOTE_LEASE_SECONDS", "30")
    monkeypatch.setenv("TENSORACLE_REMOTE_RETRIES", "0")
    monkeypatch.setenv("TENSORACLE_REMOTE_VERIFY_KEY", str(tmp_path / "verify.pem"))
    config = configure("s3://b")
    assert config is not None
    assert config.lease_seconds == 30.0
    assert config.retries == 0
    assert config.verify_key == tmp_path / "verify.pem"
    assert config.signing_key is None
    assert config.verify_key_pem is None


def test_a_verify_key_may_be_its_pem_text(monkeypatch: pytest.MonkeyPatch):
    text = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n"
    monkeypatch.setenv("TENSORACLE_REMOTE_VERIFY_KEY", text)
    config = configure("s3://b")
    assert config is not None
    assert config.verify_key is None
    assert config.verify_key_pem == text


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("TENSORACLE_REMOTE_LEASE_SECONDS", "0"),
        ("TENSORACLE_REMOTE_WAIT_SECONDS", "-1"),
        ("TENSORACLE_REMOTE_TIMEOUT_SECONDS", "nan"),
        ("TENSORACLE_REMOTE_RETRIES", "1.5"),
    ],
)
def test_bad_numbers_are_named(monkeypatch: pytest.MonkeyPatch, name: str, value: str):
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=name):
        configure("s3://b")


PEM = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n"


@pytest.mark.parametrize(
    ("given", "environment", "chosen"),
    [
        ((None, None), {}, ManifestTrust(None, None, None)),
        ((None, None), {"POLICY": "p.json", "KEY": "k.pem"}, ManifestTrust("p.json", None, None)),
        ((None, None), {"POLICY": "", "KEY": "k.pem"}, ManifestTrust(None, Path("k.pem"), None)),
        ((None, None), {"KEY": PEM}, ManifestTrust(None, None, PEM)),
        (("mine.json", None), {"KEY": "k.pem"}, ManifestTrust("mine.json", None, None)),
        ((None, "mine.pem"), {"POLICY": "p.json"}, ManifestTrust(None, Path("mine.pem"), None)),
    ],
)
def test_a_manifest_is_trusted_with_what_is_given_else_the_policy_variable_else_the_key(
    monkeypatch: pytest.MonkeyPatch,
    given: tuple[str | None, str | None],
    environment: dict[str, str],
    chosen: ManifestTrust,
):
    for short, variable in (("POLICY", "TENSORACLE_TRUST_POLICY"),
                            ("KEY", "TENSORACLE_REMOTE_VERIFY_KEY")):  # fmt: skip
        if short in environment:
            monkeypatch.setenv(variable, environment[short])
        else:
            monkeypatch.delenv(variable, raising=False)
    assert manifest_trust(*given) == chosen
