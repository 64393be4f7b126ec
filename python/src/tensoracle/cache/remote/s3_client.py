"""botocore's view of the remote cache's S3 account: its credential chain, its region, and its
S3 client.

One botocore session per ``RemoteObjects`` resolves the credentials the way the AWS CLI and SDKs
do (``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/``AWS_SESSION_TOKEN``, the shared credentials
and config files with ``AWS_PROFILE``, assume-role and SSO profiles, ``credential_process``, web
identity, container credentials, the EC2 instance profile). obstore signs every request with
them (``credential_provider``); the client made here serves the requests obstore cannot make
(keys it cannot name, see ``objects``). Both use the same endpoint (``AWS_ENDPOINT_URL``) and
region (``AWS_REGION``, ``AWS_DEFAULT_REGION``, then the profile's ``region``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from tensoracle.cache.remote.config import RemoteConfig

if TYPE_CHECKING:
    import botocore.session

# Refreshable credentials (web identity, instance profile, ...) are refreshed by botocore at
# least 10 minutes before they expire; obstore asks again after this long.
_REFRESHABLE_TTL = timedelta(minutes=5)


class NoBotocore(ImportError):
    """botocore (``tensoracle[remote]``) is not installed."""


def session() -> botocore.session.Session:
    try:  # tensoracle[remote]; imported here, as opening engines never needs it
        import botocore.session
    except ImportError as error:
        raise NoBotocore(
            "the remote engine cache needs botocore: pip install 'tensoracle[remote]'"
        ) from error
    return botocore.session.get_session()


def endpoint() -> str | None:
    """The S3 endpoint when not Amazon's: the variable obstore reads too."""
    return os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT") or None


def region(aws: botocore.session.Session) -> str:
    configured = aws.get_config_variable("region")  # AWS_DEFAULT_REGION, then the profile's
    return os.environ.get("AWS_REGION") or configured or "us-east-1"


class NoCredentials(Exception):
    """botocore's chain found no credentials."""


class CredentialProvider:
    """obstore's ``credential_provider``: the credentials of botocore's chain, resolved on the
    first request that signs (``resolve``, ``Session.get_credentials``), not before: walking the
    chain can end at the container and instance metadata endpoints, which on a machine without
    credentials only answer with timeouts, and a remote cache that is configured is not always
    used."""

    def __init__(self, resolve: Callable[[], Any]) -> None:
        self._resolve = resolve
        self._lock = threading.Lock()
        self._credentials: Any = None
        self._missing = False  # the chain was walked once and found nothing: not walked again

    def _resolved(self) -> Any:
        from botocore.credentials import RefreshableCredentials

        with self._lock:
            if self._credentials is None and not self._missing:
                self._credentials = self._resolve()
                self._missing = self._credentials is None
            if self._missing:
                raise NoCredentials(
                    "botocore's credential chain found no credentials (AWS_ACCESS_KEY_ID and "
                    "AWS_SECRET_ACCESS_KEY, AWS_PROFILE's profile, web identity, container or "
                    "instance credentials)"
                )
            return self._credentials, isinstance(self._credentials, RefreshableCredentials)

    def __call__(self) -> dict[str, Any]:
        credentials, refreshable = self._resolved()
        frozen = credentials.get_frozen_credentials()  # refreshed first when due
        return {
            "access_key_id": frozen.access_key,
            "secret_access_key": frozen.secret_key,
            "token": frozen.token,
            "expires_at": datetime.now(UTC) + _REFRESHABLE_TTL if refreshable else None,
        }


def credential_provider(aws: botocore.session.Session) -> CredentialProvider:
    """The chain's credentials for obstore, looked up when obstore first asks for them."""
    return CredentialProvider(aws.get_credentials)


def client(config: RemoteConfig, aws: botocore.session.Session) -> Any:
    """An S3 client for the configured bucket: path-style addressing (as obstore uses with an
    endpoint), the remote cache's timeouts and retries."""
    from botocore.config import Config

    settings = Config(  # type: ignore[call-arg]  # the stubs lack ignore_configured_endpoint_urls
        s3={"addressing_style": "path"},
        connect_timeout=config.connect_seconds,
        read_timeout=config.timeout_seconds,
        retries={"mode": "standard", "total_max_attempts": config.retries + 1},
        # The endpoint obstore uses, or Amazon's: never another one from the profile.
        ignore_configured_endpoint_urls=True,
    )
    return aws.create_client(
        "s3", region_name=region(aws), endpoint_url=endpoint(), config=settings
    )
