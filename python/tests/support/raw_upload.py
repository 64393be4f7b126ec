"""Uploads to the test S3 server under keys obstore refuses to name (an empty segment, control
characters, bytes that are not UTF-8), as any writer of the bucket could: one PUT signed with AWS
Signature Version 2, which radosgw accepts."""

from __future__ import annotations

import base64
import hashlib
import hmac
import urllib.request
from email.utils import formatdate
from urllib.parse import quote

from s3_server import CephS3


def put_raw(server: CephS3, key: bytes, data: bytes) -> None:
    """PUT ``data`` at ``key`` (bytes, the full key in the server's bucket)."""
    path = f"/{server.bucket}/" + quote(key, safe="/")
    date = formatdate(usegmt=True)
    content_type = "application/octet-stream"
    to_sign = f"PUT\n\n{content_type}\n{date}\n{path}"
    signature = base64.b64encode(
        hmac.new(server.secret_key.encode(), to_sign.encode(), hashlib.sha1).digest()
    ).decode()
    request = urllib.request.Request(
        server.endpoint + path,
        data=data,
        method="PUT",
        headers={
            "Content-Type": content_type,
            "Date": date,
            "Authorization": f"AWS {server.access_key}:{signature}",
        },
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        if response.status != 200:
            raise RuntimeError(f"PUT {key!r} answered {response.status}")
