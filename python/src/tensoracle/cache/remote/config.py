"""Settings of the remote engine cache, from arguments and environment variables.

``TENSORACLE_REMOTE=s3://bucket/prefix`` turns the remote tier on (the ``remote=`` argument of
``open_engine``/``prepare_engine`` overrides it; ``remote=""`` turns it off). Endpoint and
credentials come from the variables and files every S3 tool reads (``AWS_ENDPOINT_URL``,
``AWS_REGION``, and botocore's credential chain: ``s3_client``).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

REMOTE = "TENSORACLE_REMOTE"
SIGNING_KEY = "TENSORACLE_REMOTE_SIGNING_KEY"
VERIFY_KEY = "TENSORACLE_REMOTE_VERIFY_KEY"
# The trust policy file by which applications and `cache pull --manifest` accept signed
# deployment manifests (docs/deploy.md), instead of the verify key alone.
TRUST_POLICY = "TENSORACLE_TRUST_POLICY"
LEASE_SECONDS = "TENSORACLE_REMOTE_LEASE_SECONDS"
WAIT_SECONDS = "TENSORACLE_REMOTE_WAIT_SECONDS"
TIMEOUT_SECONDS = "TENSORACLE_REMOTE_TIMEOUT_SECONDS"
CONNECT_SECONDS = "TENSORACLE_REMOTE_CONNECT_SECONDS"
RETRIES = "TENSORACLE_REMOTE_RETRIES"
MAX_ENGINE_BYTES = "TENSORACLE_REMOTE_MAX_ENGINE_BYTES"


@dataclass(frozen=True)
class RemoteConfig:
    """Where the shared cache is and how this node uses it."""

    url: str  # s3://bucket/prefix, as given
    bucket: str
    prefix: str  # without leading or trailing "/"; may be empty
    signing_key: Path | None = None  # publish signed (PEM private key)
    verify_key: Path | None = None  # accept only engines signed by this key (PEM public key)
    verify_key_pem: str | None = None  # the same key given as its PEM text instead
    lease_seconds: float = 60.0  # a lease's life; its holder renews it every third of that
    wait_seconds: float = 1800.0  # the longest a node waits for another node's build
    timeout_seconds: float = 120.0  # one request, transfer included
    connect_seconds: float = 5.0
    retries: int = 2  # per request, for errors that are safe to retry
    # The largest object accepted as an engine; a larger one is refused before its body is read.
    max_engine_bytes: int = 64 << 30

    def object_url(self, key: str) -> str:
        return f"s3://{self.bucket}/{self.prefix + '/' if self.prefix else ''}{key}"


def _number(name: str, value: str, *, integer: bool = False) -> float:
    try:
        number = int(value) if integer else float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number < 0 or (not integer and number == 0):
        kind = "a nonnegative integer" if integer else "a positive number of seconds"
        raise ValueError(f"{name}={value!r} is not {kind}")
    return number


def parse_url(url: str) -> tuple[str, str]:
    """(bucket, prefix) of ``s3://bucket/prefix``; ValueError naming the URL otherwise."""
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc or parts.query or parts.fragment:
        raise ValueError(
            f"the remote cache {url!r} is not an s3://BUCKET[/PREFIX] URL (set {REMOTE} or "
            "remote= to one, for example s3://engines/fleet-a)"
        )
    return parts.netloc, parts.path.strip("/")


def _key_path(name: str) -> Path | None:
    value = os.environ.get(name, "")
    return Path(value) if value else None


def key_file_or_text(value: str | os.PathLike[str] | None) -> tuple[Path | None, str | None]:
    """A key as given (an argument, or ``$TENSORACLE_REMOTE_VERIFY_KEY``): (its file, None),
    (None, its PEM text) when the value holds the key itself (a string starting with
    ``-----BEGIN``, as the C++ deployment library reads it too), or (None, None) for none."""
    if isinstance(value, str) and value.startswith("-----BEGIN"):
        return None, value
    return (Path(value) if value else None), None


@dataclass(frozen=True)
class ManifestTrust:
    """What a deployment manifest is trusted with: a trust policy file, or a verify key (its
    file or its PEM text), or nothing."""

    policy: str | os.PathLike[str] | None
    key_file: Path | None
    key_text: str | None


def manifest_trust(
    trust_policy: str | os.PathLike[str] | None = None,
    verify_key: str | os.PathLike[str] | None = None,
) -> ManifestTrust:
    """The trust a manifest is read with, as every reader of one chooses it (open_deployed,
    ``deploy triton``, ``cache pull --manifest``, and the C++ library's
    ``options_from_environment``): the policy or key given; when neither is,
    ``$TENSORACLE_TRUST_POLICY``, else ``$TENSORACLE_REMOTE_VERIFY_KEY`` (an empty variable is
    unset)."""
    if trust_policy is None and verify_key is None:
        trust_policy = os.environ.get(TRUST_POLICY) or None
        if trust_policy is None:
            verify_key = os.environ.get(VERIFY_KEY) or None
    key_file, key_text = key_file_or_text(verify_key)
    return ManifestTrust(trust_policy, key_file, key_text)


def configure(remote: str | None = None) -> RemoteConfig | None:
    """The remote cache for an open: ``remote`` when given, else ``$TENSORACLE_REMOTE``; None
    when neither is set (or ``remote`` is the empty string)."""
    if remote is not None and not isinstance(remote, str):
        raise ValueError(f"remote must be an s3:// URL string or None, not {remote!r}")
    url = os.environ.get(REMOTE, "") if remote is None else remote
    if not url:
        return None
    bucket, prefix = parse_url(url)
    verify_key, verify_key_pem = key_file_or_text(os.environ.get(VERIFY_KEY, ""))
    numbers = {}
    for field, name, integer in (
        ("lease_seconds", LEASE_SECONDS, False),
        ("wait_seconds", WAIT_SECONDS, False),
        ("timeout_seconds", TIMEOUT_SECONDS, False),
        ("connect_seconds", CONNECT_SECONDS, False),
        ("retries", RETRIES, True),
        ("max_engine_bytes", MAX_ENGINE_BYTES, True),
    ):
        value = os.environ.get(name, "")
        if value:
            number = _number(name, value, integer=integer)
            numbers[field] = int(number) if integer else number
    return RemoteConfig(
        url=url,
        bucket=bucket,
        prefix=prefix,
        signing_key=_key_path(SIGNING_KEY),
        verify_key=verify_key,
        verify_key_pem=verify_key_pem,
        **numbers,  # type: ignore[arg-type]  # int for the integer fields, else float
    )
