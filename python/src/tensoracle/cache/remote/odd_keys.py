"""Object keys that obstore cannot represent, and the requests that still reach them.

obstore (``object_store``) accepts only keys made of non-empty segments without control
characters; a listing page holding one other key (``engines/sub//x.engine``, a name with a
control character) fails as a whole with ``InvalidPathError``, and such a key cannot be deleted
through it. Anyone with write access to the bucket can create one, so the listing falls back to
this module: one S3 ListObjectsV2 (``encoding-type=url``, so every key arrives as bytes) and
DeleteObject, signed with AWS Signature Version 4 from the credentials S3 tools read from the
environment (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``,
``AWS_ENDPOINT_URL``, ``AWS_REGION``).

Keys are returned as ``str`` with undecodable bytes kept as surrogates (``surrogateescape``), so
the same value reaches the store again; ``escaped`` is the form for people.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import quote, unquote_to_bytes, urlsplit
from xml.etree import ElementTree

from tensoracle.cache.remote.config import RemoteConfig

_S3 = "{http://s3.amazonaws.com/doc/2006-03-01/}"
_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def representable(key: str) -> bool:
    """Whether obstore can name ``key``: UTF-8, every segment non-empty, not ``.`` or ``..``,
    without control characters."""
    if any(0xDC80 <= ord(char) <= 0xDCFF for char in key):
        return False
    if any(ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F for char in key):
        return False
    return all(segment not in ("", ".", "..") for segment in key.split("/"))


def escaped(key: str) -> str:
    """``key`` for a message or a listing: control characters, backslashes and bytes that are
    not UTF-8 as ``\\xNN``."""
    out = []
    for char in key:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x20 or 0x7F <= code <= 0x9F or char == "\\":
            out.append(f"\\x{code:02x}")
        else:
            out.append(char)
    return "".join(out)


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
        self._access, self._secret = access, secret
        self._token = os.environ.get("AWS_SESSION_TOKEN")
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
        canonical_query = "&".join(
            f"{quote(name, safe='-_.~')}={quote(value, safe='-_.~')}"
            for name, value in sorted(query.items())
        )
        if canonical_query:
            url += "?" + canonical_query
        now = datetime.now(UTC)
        stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
        headers = {
            "host": urlsplit(self._base).netloc,
            "x-amz-content-sha256": _EMPTY_SHA256,
            "x-amz-date": stamp,
        }
        if self._token:
            headers["x-amz-security-token"] = self._token
        signed = ";".join(sorted(headers))
        canonical = "\n".join(
            [
                method,
                path,
                canonical_query,
                "".join(f"{name}:{headers[name]}\n" for name in sorted(headers)),
                signed,
                _EMPTY_SHA256,
            ]
        )
        scope = f"{day}/{self._region}/s3/aws4_request"
        to_sign = "\n".join(
            ["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()]
        )
        signing = f"AWS4{self._secret}".encode()
        for part in (day, self._region, "s3", "aws4_request"):
            signing = hmac.new(signing, part.encode(), hashlib.sha256).digest()
        signature = hmac.new(signing, to_sign.encode(), hashlib.sha256).hexdigest()
        headers["authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={self._access}/{scope}, SignedHeaders={signed}, "
            f"Signature={signature}"
        )
        request = urllib.request.Request(url, method=method, headers=headers)
        shown = self.config.object_url(escaped(key[len(self._root) :])) if key else self.config.url
        try:
            with urllib.request.urlopen(request, timeout=self.config.timeout_seconds) as answer:
                return bytes(answer.read())
        except urllib.error.HTTPError as error:
            if method == "DELETE" and error.code == 404:
                return b""
            detail = error.read(400).decode("utf-8", "replace")
            raise OSError(f"{method} {shown} answered {error.code}: {escaped(detail)}") from error
        except (OSError, ValueError) as error:
            raise OSError(f"{method} {shown} failed: {error}") from error
