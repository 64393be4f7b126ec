"""The bucket behind a remote engine cache, through obstore (Rust's ``object_store``).

Why obstore: one well-kept client for S3 and S3-compatible stores (and GCS and Azure), with
conditional create (``mode="create"`` sends ``If-None-Match: *`` on a single PUT), explicit
request and connect timeouts and a bounded retry policy, and zero-copy buffers for downloads.

Layout under the prefix:
    engines/<entry file name>                 one object per saved engine (remote/object.hpp)
    leases/<entry file name>/<generation>     build leases (lease.py)

obstore signs with the credentials of botocore's chain (``s3_client``). A key obstore cannot
represent (an empty segment, a control character: anyone with write access can create one) is
still listed, with ``representable`` False, and can be deleted: both through botocore's S3 client
(ListObjectsV2 with ``EncodingType=url``, so every key arrives as bytes, and DeleteObject), since
obstore refuses such a key and fails the whole listing page that holds one. Such keys are ``str``
with undecodable bytes kept as surrogates (``surrogateescape``), so the same value reaches the
store again; ``tensoracle.terminal_text`` gives the form for people.

Every failure of the store itself (network, timeout, credentials, missing bucket, 5xx) is raised
as ``RemoteUnavailable``; "not found" and "already exists" are answers, not failures.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar
from urllib.parse import unquote_to_bytes

from tensoracle.cache.remote import s3_client
from tensoracle.cache.remote.config import RemoteConfig
from tensoracle.cache.remote.interruptible import interruptible
from tensoracle.terminal_text import terminal_text

ENGINES = "engines/"
LEASES = "leases/"


class RemoteUnavailable(RuntimeError):
    """The store did not answer, or refused the request (credentials, bucket, server error)."""


class TooLarge(ValueError):
    """An object holds more bytes than this node accepts for its kind."""


# Streamed downloads hand chunks of this size on (see docs/benchmarks.md for the measurement).
_STREAM_CHUNK_BYTES = 1 << 20


class Receiver(Protocol):
    """Where a streamed download goes (``_core.RemoteReceiver``): the chunks in order."""

    def feed(self, chunk: Any) -> None: ...

    def abort(self) -> None: ...


_R = TypeVar("_R", bound=Receiver)


@dataclass(frozen=True)
class ObjectInfo:
    key: str  # relative to the prefix; undecodable bytes as surrogates when not representable
    size: int
    last_modified: datetime
    representable: bool = True  # False: obstore cannot name it


def representable(key: str) -> bool:
    """Whether obstore can name ``key``: UTF-8, every segment non-empty, not ``.`` or ``..``,
    without control characters."""
    if any(0xDC80 <= ord(char) <= 0xDCFF for char in key):
        return False
    if any(ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F for char in key):
        return False
    return all(segment not in ("", ".", "..") for segment in key.split("/"))


def engine_key(file_name: str) -> str:
    return ENGINES + file_name


class RemoteObjects:
    """Get, create-only put, list and delete of keys relative to the configured prefix."""

    def __init__(self, config: RemoteConfig) -> None:
        try:
            import obstore
            from obstore.store import S3Store
        except ImportError as error:
            raise RemoteUnavailable(
                "the remote engine cache needs obstore: pip install 'tensoracle[remote]'"
            ) from error
        self._obstore = obstore
        self.config = config
        self._client: Any = None  # botocore's, made when a key obstore cannot name turns up
        try:
            self._aws = s3_client.session()
            # The whole chain of botocore (files, profiles, web identity, instance profile...),
            # walked on the first request that signs, not here.
            credentials = s3_client.credential_provider(self._aws)
            region = s3_client.region(self._aws)
        except Exception as error:  # botocore's own errors (a broken profile, say)
            raise RemoteUnavailable(f"cannot configure {config.url}: {error}") from error
        retry: Any = {
            "max_retries": config.retries,
            "backoff": {
                "init_backoff": timedelta(milliseconds=100),
                "max_backoff": timedelta(seconds=2),
                "base": 2,
            },
            "retry_timeout": timedelta(seconds=config.timeout_seconds),
        }
        client: Any = {
            "timeout": timedelta(seconds=config.timeout_seconds),
            "connect_timeout": timedelta(seconds=config.connect_seconds),
        }
        # Client options given here replace those obstore reads from the environment: carry
        # over the one an http:// endpoint (a local test store, say) needs.
        if os.environ.get("AWS_ALLOW_HTTP", "").lower() in ("1", "true", "yes"):
            client["allow_http"] = True
        try:
            self._store = S3Store(
                config.bucket,
                prefix=config.prefix or None,
                client_options=client,
                retry_config=retry,
                credential_provider=credentials,  # type: ignore[arg-type]  # a TypedDict's keys
                region=region,
            )
        except Exception as error:  # obstore reports configuration problems as its own errors
            raise RemoteUnavailable(f"cannot configure {config.url}: {error}") from error

    def url(self, key: str) -> str:
        return self.config.object_url(key)

    def _failure(self, action: str, key: str, error: Exception) -> RemoteUnavailable:
        text = " ".join(str(error).split())
        if len(text) > 400:
            text = text[:400] + "..."
        return RemoteUnavailable(f"{action} {self.url(key)} failed: {type(error).__name__}: {text}")

    def _get(self, key: str, max_bytes: int) -> tuple[Any, int] | None:
        """The GET's response and the object's size, before any of its body is read: None when
        there is no object, ``TooLarge`` past ``max_bytes``."""
        try:
            result = interruptible(lambda: self._obstore.get(self._store, key))
            size = int(result.meta["size"])
        except FileNotFoundError:  # obstore.exceptions.NotFoundError
            return None
        except Exception as error:
            raise self._failure("GET", key, error) from error
        if size > max_bytes:
            raise TooLarge(
                f"{self.url(key)} holds {size} bytes, more than the limit of {max_bytes} bytes"
            )
        return result, size

    def get_into(self, key: str, start: Callable[[int], _R], max_bytes: int) -> _R | None:
        """Streams the object into the receiver ``start(object_size)`` returns and returns it,
        every chunk fed, for the caller to finish: None when there is no object, ``TooLarge``
        past ``max_bytes`` (known from the response, before its body). Each chunk is fed on a
        worker thread (the receiver writes and hashes it without the GIL) while the next one
        downloads. Whatever stops the download (a refusal raised by ``start`` or ``feed``, a
        failed or cut-off transfer, more bytes than announced, an interruption) aborts the
        receiver before the error propagates."""
        opened = self._get(key, max_bytes)
        if opened is None:
            return None
        result, size = opened
        receiver = start(size)
        try:
            with ThreadPoolExecutor(1, thread_name_prefix="tensoracle-download") as worker:
                self._feed_all(key, result, size, receiver, worker)
        except BaseException:
            receiver.abort()  # after the worker finished its last feed (the with block waits)
            raise
        return receiver

    def _feed_all(
        self, key: str, result: Any, size: int, receiver: Receiver, worker: ThreadPoolExecutor
    ) -> None:
        chunks = iter(result.stream(min_chunk_size=_STREAM_CHUNK_BYTES))
        fed: Future[None] | None = None
        arrived = 0
        while True:
            try:
                chunk = interruptible(lambda: next(chunks, None))
            except Exception as error:
                raise self._failure("GET", key, error) from error
            if fed is not None:
                fed.result()  # the previous chunk's refusal, if any
            if chunk is None:
                break
            arrived += len(chunk)
            if arrived > size:
                raise TooLarge(f"{self.url(key)} sent more than the {size} bytes it announced")
            fed = worker.submit(receiver.feed, chunk)
        if arrived < size:
            raise self._failure("GET", key, EOFError(f"{arrived} of {size} bytes arrived"))

    def get_small(self, key: str, max_bytes: int) -> bytes | None:
        """The bytes of an object expected to be small (a lease), or None when there is none;
        ``TooLarge`` (before the body is read) when it announces more than ``max_bytes``, or as
        soon as it sends more than it announced. What is held grows with what arrived, never
        beyond ``max_bytes``."""
        opened = self._get(key, max_bytes)
        if opened is None:
            return None
        result, size = opened
        received = bytearray()
        chunks = iter(result.stream(min_chunk_size=_STREAM_CHUNK_BYTES))
        while True:
            try:
                chunk = interruptible(lambda: next(chunks, None))
            except Exception as error:
                raise self._failure("GET", key, error) from error
            if chunk is None:
                break
            if len(received) + len(chunk) > size:
                raise TooLarge(f"{self.url(key)} sent more than the {size} bytes it announced")
            received += memoryview(chunk).cast("B")
        if len(received) < size:
            raise self._failure("GET", key, EOFError(f"{len(received)} of {size} bytes arrived"))
        return bytes(received)

    def get_range(self, key: str, start: int, end: int) -> Any | None:
        try:
            return interruptible(
                lambda: self._obstore.get_range(self._store, key, start=start, end=end)
            )
        except FileNotFoundError:  # obstore.exceptions.NotFoundError
            return None
        except Exception as error:
            raise self._failure("GET (range)", key, error) from error

    def get_tail(self, key: str, count: int) -> tuple[int, bytes] | None:
        """(the object's size, its last ``count`` bytes, or all of them when it holds fewer) in
        one ranged GET, or None when there is no object."""
        try:

            def tail() -> tuple[int, bytes]:
                result = self._obstore.get(self._store, key, options={"range": {"suffix": count}})
                return int(result.meta["size"]), bytes(result.bytes())

            return interruptible(tail)
        except FileNotFoundError:  # obstore.exceptions.NotFoundError
            return None
        except Exception as error:
            raise self._failure("GET (range)", key, error) from error

    def create(self, key: str, data: Any) -> bool:
        """Writes ``data`` only if ``key`` does not exist: one PUT with ``If-None-Match: *``.

        True when this call created the object, False when it existed already (412). Never a
        multipart upload: some S3-compatible stores ignore the condition on
        CompleteMultipartUpload, which would let a second writer replace the object."""
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        try:
            interruptible(
                lambda: self._obstore.put(
                    self._store, key, data, mode="create", use_multipart=False
                )
            )
        except (AlreadyExistsError, PreconditionError):
            return False
        except Exception as error:
            raise self._failure("PUT (create-only)", key, error) from error
        return True

    def list(self, prefix: str) -> Iterator[ObjectInfo]:
        """Every object under ``prefix``; one whose key obstore cannot represent is listed too,
        with ``representable`` False (the listing goes on through botocore)."""
        from obstore.exceptions import InvalidPathError

        seen: set[str] = set()
        try:
            batches = iter(self._obstore.list(self._store, prefix, chunk_size=1000))
            while (batch := interruptible(lambda: next(batches, None))) is not None:
                for meta in batch:
                    seen.add(meta["path"])
                    yield ObjectInfo(meta["path"], int(meta["size"]), meta["last_modified"])
            return
        except InvalidPathError:
            pass  # a key obstore cannot parse: the whole page failed
        except Exception as error:
            raise self._failure("LIST", prefix, error) from error
        try:
            for key, size, modified in self._list_every_key(prefix):
                if key not in seen:
                    yield ObjectInfo(key, size, modified, representable(key))
        except Exception as error:
            raise self._failure("LIST", prefix, error) from error

    def _botocore(self) -> Any:
        if self._client is None:
            self._client = s3_client.client(self.config, self._aws)
        return self._client

    def _list_every_key(self, prefix: str) -> Iterator[tuple[str, int, datetime]]:
        """(key, size, last modified) of every object under ``prefix``, through botocore, keys
        exactly as stored (relative to the configured prefix)."""
        root = self.config.prefix + "/" if self.config.prefix else ""
        pages = iter(
            self._botocore()
            .get_paginator("list_objects_v2")
            .paginate(Bucket=self.config.bucket, Prefix=root + prefix, EncodingType="url")
        )
        while (page := interruptible(lambda: next(pages, None))) is not None:
            for item in page.get("Contents", []):
                key = unquote_to_bytes(item["Key"]).decode("utf-8", "surrogateescape")
                yield key[len(root) :], int(item["Size"]), item["LastModified"]

    def delete(self, key: str) -> None:
        if not representable(key):
            root = self.config.prefix + "/" if self.config.prefix else ""
            try:  # DeleteObject answers 204 whether or not the key exists
                interruptible(
                    lambda: self._botocore().delete_object(
                        Bucket=self.config.bucket, Key=root + key
                    )
                )
            except Exception as error:
                raise self._failure("DELETE", terminal_text(key), error) from error
            return
        try:
            interruptible(lambda: self._obstore.delete(self._store, key))
        except FileNotFoundError:  # obstore.exceptions.NotFoundError
            return
        except Exception as error:
            raise self._failure("DELETE", key, error) from error
