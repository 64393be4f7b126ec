"""Object keys that obstore cannot represent, and the requests that still reach them.

obstore (``object_store``) accepts only keys made of non-empty segments without control
characters; a listing page holding one other key (``engines/sub//x.engine``, a name with a
control character) fails as a whole with ``InvalidPathError``, and such a key cannot be deleted
through it. Anyone with write access to the bucket can create one, so the listing falls back to
this module: one S3 ListObjectsV2 (``encoding-type=url``, so every key arrives as bytes) and
DeleteObject, signed with AWS Signature Version 4 by botocore from the credentials S3 tools read
from the environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``,
``AWS_ENDPOINT_URL``, ``AWS_REGION``).

Keys are returned as ``str`` with undecodable bytes kept as surrogates (``surrogateescape``), so
the same value reaches the store again; ``tensoracle.terminal_text`` gives the form for people.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote, unquote_to_bytes, urlsplit
from xml.etree import ElementTree

from tensoracle.cache.remote.config import RemoteConfig
from tensoracle.terminal_text import terminal_text

_S3 = "{http://s3.amazonaws.com/doc/2006-03-01/}"


def representable(key: str) -> bool:
    """Whether obstore can name ``key``: UTF-8, every segment non-empty, not ``.`` or ``..``,
    without control characters."""
    if any(0xDC80 <= ord(char) <= 0xDCFF for char in key):
        return False
    if any(ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F for char in key):
        return False
    return all(segment not in ("", ".", "..") for segment in key.split("/"))


@dataclass(frozen=True)
class ListedKey:
    key: str  # relative to the prefix; undecodable bytes as surrogates
    size: int
    last_modified: datetime


class SignedRequests:
    """ListObjectsV2 and DeleteObject under the configured prefix, signed with SigV4."""

    def __init__(self, config: RemoteConfig) -> None:
        self.config = config
        access = os.environ.get("AWS_ACCESS_KEY_ID")
        secret = os.environ.get("AWS_SECRET_ACCESS_KEY")
        if not access or not secret:
            raise OSError(
                f"{config.url} holds keys obstore cannot read; listing or deleting them needs "
                "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment"
            )
        try:  # tensoracle[remote]; imported here, as opening engines never needs it
            from botocore.credentials import Credentials
        except ImportError as error:
            raise OSError(
                f"{config.url} holds keys obstore cannot read; listing or deleting them needs "
                "botocore: pip install 'tensoracle[remote]'"
            ) from error
        self._credentials = Credentials(access, secret, os.environ.get("AWS_SESSION_TOKEN"))
        self._region = (
            os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        )
        endpoint = os.environ.get("AWS_ENDPOINT_URL") or os.environ.get("AWS_ENDPOINT")
        if endpoint:
            self._base = endpoint.rstrip("/") + "/" + config.bucket
        else:
            self._base = f"https://{config.bucket}.s3.{self._region}.amazonaws.com"
        self._root = config.prefix + "/" if config.prefix else ""

    def list(self, prefix: str) -> Iterator[ListedKey]:
        """Every key under ``prefix`` (relative to the configured prefix), in the store's order."""
        token: str | None = None
        while True:
            query = {"list-type": "2", "prefix": self._root + prefix, "encoding-type": "url"}
            if token is not None:
                query["continuation-token"] = token
            document = ElementTree.fromstring(self._request("GET", "", query))
            for item in document.iter(f"{_S3}Contents"):
                raw = unquote_to_bytes(item.findtext(f"{_S3}Key", ""))
                key = raw.decode("utf-8", "surrogateescape")[len(self._root) :]
                modified = datetime.fromisoformat(item.findtext(f"{_S3}LastModified", ""))
                if modified.tzinfo is None:
                    modified = modified.replace(tzinfo=UTC)
                yield ListedKey(key, int(item.findtext(f"{_S3}Size", "0")), modified)
            token = document.findtext(f"{_S3}NextContinuationToken")
            if document.findtext(f"{_S3}IsTruncated") != "true" or not token:
                return

    def delete(self, key: str) -> None:
        self._request("DELETE", self._root + key, {})

    def _request(self, method: str, key: str, query: dict[str, str]) -> bytes:
        path = urlsplit(self._base).path
        if key:
            path += "/" + quote(key.encode("utf-8", "surrogateescape"), safe="/~")
        url = self._base[: len(self._base) - len(urlsplit(self._base).path)] + path
        if query:
            url += "?" + "&".join(
                f"{quote(name, safe='-_.~')}={quote(value, safe='-_.~')}"
                for name, value in sorted(query.items())
            )
        from botocore.auth import S3SigV4Auth
        from botocore.awsrequest import AWSRequest

        # botocore's S3 signer keeps the path as given (an empty segment stays one), as S3 does.
        signed = AWSRequest(method=method, url=url)
        S3SigV4Auth(self._credentials, "s3", self._region).add_auth(signed)
        headers = dict(signed.prepare().headers.items())
        request = urllib.request.Request(url, method=method, headers=headers)
        shown = (
            self.config.object_url(terminal_text(key[len(self._root) :]))
            if key
            else self.config.url
        )
        try:
            with urllib.request.urlopen(request, timeout=self.config.timeout_seconds) as answer:
                return bytes(answer.read())
        except urllib.error.HTTPError as error:
            if method == "DELETE" and error.code == 404:
                return b""
            detail = error.read(400).decode("utf-8", "replace")
            raise OSError(
                f"{method} {shown} answered {error.code}: {terminal_text(detail)}"
            ) from error
        except (OSError, ValueError) as error:
            raise OSError(f"{method} {shown} failed: {error}") from error
