"""Object keys obstore cannot represent, against the real S3 server: an empty path segment, a
control character (S3 keys are UTF-8: the server refuses other bytes). obstore fails a whole
listing page holding one and refuses to delete one; the remote cache's listing still lists every
object (such keys flagged) and deletes them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import obstore
import pytest
from obstore.exceptions import InvalidPathError
from raw_upload import put_raw
from remote_support import Fleet

from tensoracle.cache.remote.config import configure
from tensoracle.cache.remote.objects import RemoteObjects, representable
from tensoracle.cli.remote_cache import listed_engines

pytestmark = pytest.mark.slow

ODD = {
    b"engines/sub//x.engine": "sub//x.engine",
    b"engines/ctl\x01name.engine": "ctl\\x01name.engine",
    b"engines/del\x7f.engine": "del\\x7f.engine",
}


@pytest.fixture
def fleet(s3_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Fleet:
    for name, value in s3_server.environment().items():
        monkeypatch.setenv(name, value)
    return Fleet(s3_server, tmp_path)


def objects_of(fleet: Fleet) -> RemoteObjects:
    config = configure(fleet.url)
    assert config is not None
    return RemoteObjects(config)


def upload_odd(fleet: Fleet) -> None:
    for key in ODD:
        put_raw(fleet.server, fleet.prefix.encode() + b"/" + key, b"hostile " + key)


def test_keys_obstore_cannot_name():
    # How such a key is shown (tensoracle.terminal_text) is tested in cli/test_terminal_text.py.
    assert representable("engines/a.engine")
    assert representable("engines/é.engine")
    for key in ("engines/sub//x", "engines/./x", "engines/ctl\x01", "/engines/x", "engines/"):
        assert not representable(key), key


def test_obstore_alone_fails_on_such_keys(fleet: Fleet):
    """Why the listing falls back to botocore: the behaviour of obstore it works around."""
    fleet.replace("engines/good.engine", b"good")
    upload_odd(fleet)
    with pytest.raises(InvalidPathError):
        [meta for batch in obstore.list(fleet.bucket(), "engines/") for meta in batch]
    with pytest.raises((TypeError, InvalidPathError)):
        obstore.delete(fleet.bucket(), "engines/sub//x.engine")


def test_the_listing_flags_odd_keys_and_deletes_them(fleet: Fleet):
    fleet.replace("engines/good.engine", b"good")
    fleet.replace("engines/zz.engine", b"zz")
    upload_odd(fleet)
    objects = objects_of(fleet)

    listed = {info.key: info for info in objects.list("engines/")}
    raw_keys = {key.decode("utf-8", "surrogateescape") for key in ODD}
    assert set(listed) == {"engines/good.engine", "engines/zz.engine"} | raw_keys
    assert [key for key, info in listed.items() if not info.representable] == sorted(
        raw_keys, key=lambda key: key.encode("utf-8", "surrogateescape")
    )
    assert listed["engines/sub//x.engine"].size == len(b"hostile engines/sub//x.engine")

    listing = listed_engines(objects)
    assert [name for name, _info in listing.entries] == ["good.engine", "zz.engine"]
    assert sorted(name for name, _info in listing.unrepresentable) == sorted(ODD.values())
    unrecognized = {entry["file_name"]: entry for entry in listing.unrecognized()}
    assert unrecognized["ctl\\x01name.engine"]["reason"].endswith(": engines/ctl\\x01name.engine")
    for entry in unrecognized.values():
        assert entry["status"] == "unrecognized"
        assert "\x01" not in entry["reason"]
        assert "\x7f" not in entry["reason"]

    for _name, info in listing.unrepresentable:
        objects.delete(info.key)
    assert fleet.object_keys() == ["engines/good.engine", "engines/zz.engine"]
    objects.delete("engines/sub//x.engine")  # gone already: not an error
