"""The remote cache's credentials come from botocore's chain, against the real S3 server: a
profile of the shared credentials file (no AWS_ACCESS_KEY_ID in the environment) reaches the
bucket through obstore and through botocore's client (keys obstore cannot name), and the
config file's region is the one both clients use."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from raw_upload import put_raw
from remote_support import Fleet

from tensoracle.cache.remote import s3_client
from tensoracle.cache.remote.config import configure
from tensoracle.cache.remote.objects import RemoteObjects, RemoteUnavailable

pytestmark = pytest.mark.slow


@pytest.fixture
def fleet(s3_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fleet:
    for name, value in s3_server.environment().items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    (tmp_path / "credentials").write_text(
        "[default]\naws_access_key_id = nobody\naws_secret_access_key = nothing\n\n"
        f"[fleet]\naws_access_key_id = {s3_server.access_key}\n"
        f"aws_secret_access_key = {s3_server.secret_key}\n"
    )
    (tmp_path / "config").write_text("[profile fleet]\nregion = eu-central-1\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setenv("AWS_PROFILE", "fleet")
    return Fleet(s3_server, tmp_path)


def objects_of(fleet: Fleet) -> RemoteObjects:
    config = configure(fleet.url)
    assert config is not None
    return RemoteObjects(config)


def test_a_profile_of_the_shared_credentials_file_reaches_the_bucket(fleet: Fleet):
    assert s3_client.region(s3_client.session()) == "eu-central-1"  # the profile's
    objects = objects_of(fleet)
    assert objects.create("engines/a.engine", b"published")
    put_raw(fleet.server, fleet.prefix.encode() + b"/engines/sub//x.engine", b"odd")

    listed = {info.key: info.representable for info in objects.list("engines/")}
    assert listed == {"engines/a.engine": True, "engines/sub//x.engine": False}
    objects.delete("engines/sub//x.engine")
    assert fleet.object_keys() == ["engines/a.engine"]


def test_the_profile_named_is_the_one_used(fleet: Fleet, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AWS_PROFILE", "default")  # the server does not know these keys
    objects = objects_of(fleet)
    with pytest.raises(RemoteUnavailable, match=r"PUT \(create-only\) .* failed"):
        objects.create("engines/a.engine", b"published")
    assert fleet.object_keys() == []


def test_keys_in_the_environment_win_over_the_profile(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("AWS_PROFILE", "default")  # keys the server does not know
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", fleet.server.access_key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", fleet.server.secret_key)
    objects = objects_of(fleet)
    assert objects.create("engines/a.engine", b"published")
    assert fleet.object_keys() == ["engines/a.engine"]


def test_credentials_are_looked_up_on_the_first_request_not_when_the_store_is_made(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch
):
    import botocore.session

    looked_up = []
    resolve = botocore.session.Session.get_credentials

    def recording(session: Any) -> Any:  # botocore's own lookup, recorded
        looked_up.append(session)
        return resolve(session)

    monkeypatch.setattr(botocore.session.Session, "get_credentials", recording)
    objects = objects_of(fleet)
    assert looked_up == []
    assert objects.create("engines/a.engine", b"published")
    assert objects.get_small("engines/a.engine", 100) == b"published"
    assert len(looked_up) == 1  # once, for every request after it


def test_no_credentials_in_the_chain_is_named_on_the_request_that_needs_them():
    looked_up = []

    def nothing() -> None:
        looked_up.append(None)

    provider = s3_client.CredentialProvider(nothing)
    for _ in range(2):
        with pytest.raises(s3_client.NoCredentials, match="found no credentials"):
            provider()
    assert looked_up == [None]  # the chain is not walked again


def test_temporary_credentials_are_renewed_before_obstore_uses_them_again():
    from botocore.credentials import Credentials, RefreshableCredentials

    static = s3_client.CredentialProvider(lambda: Credentials("key", "secret"))()
    assert static == {
        "access_key_id": "key",
        "secret_access_key": "secret",
        "token": None,
        "expires_at": None,
    }

    issued = []

    def renew() -> dict[str, str]:  # as an instance profile or an assumed role answers
        issued.append(len(issued))
        soon = datetime.now(UTC) + timedelta(minutes=5 if len(issued) == 1 else 60)
        return {
            "access_key": f"key-{len(issued)}",
            "secret_key": "secret",
            "token": f"token-{len(issued)}",
            "expiry_time": soon.isoformat(),
        }

    provider = s3_client.CredentialProvider(
        lambda: RefreshableCredentials.create_from_metadata(renew(), renew, "test")
    )
    first = provider()
    # The first key expires within botocore's 10 minutes: renewed before it is handed out.
    assert (first["access_key_id"], first["token"]) == ("key-2", "token-2")
    assert datetime.now(UTC) < first["expires_at"] <= datetime.now(UTC) + timedelta(minutes=5)
    assert provider()["access_key_id"] == "key-2"  # valid for an hour: kept
