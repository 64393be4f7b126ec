"""A throwaway single-node Ceph cluster whose RADOS Gateway is a real S3 server for the tests.

One monitor, one OSD on memstore (data in memory), no manager, and radosgw with the beast
frontend on 127.0.0.1: about 2 s from nothing to a usable endpoint. Every data, run, log and
crash directory lives under one temporary directory, which ``stop`` removes after stopping every
daemon it started. Needs the Debian packages ceph-mon, ceph-osd, radosgw and ceph-common (the
Makefile installs them).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

DAEMONS = ("ceph-mon", "ceph-osd", "radosgw", "radosgw-admin", "ceph", "monmaptool")


def missing_programs() -> list[str]:
    return [name for name in DAEMONS if shutil.which(name) is None]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _listening_inodes(port: int) -> set[str]:
    """Socket inodes listening on 127.0.0.1:port (from /proc/net/tcp)."""
    wanted = f"0100007F:{port:04X}"
    inodes = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == wanted and fields[3] == "0A":  # 0A: LISTEN
            inodes.add(fields[9])
    return inodes


def _owns_socket(pid: int, inodes: set[str]) -> bool:
    try:
        descriptors = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for descriptor in descriptors:
        with contextlib.suppress(OSError):
            target = os.readlink(descriptor)
            if target.startswith("socket:[") and target[8:-1] in inodes:
                return True
    return False


@dataclass
class CephS3:
    """A running cluster: endpoint, credentials and one bucket (``bucket``) ready to use."""

    root: Path
    port: int
    memory_bytes: int
    access_key: str = "tensoracle-test"
    secret_key: str = field(default_factory=lambda: uuid.uuid4().hex)
    bucket: str = "engines"
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def config(self) -> Path:
        return self.root / "ceph.conf"

    def environment(self) -> dict[str, str]:
        """The variables an S3 client (and tensoracle) reads to reach this server."""
        return {
            "AWS_ACCESS_KEY_ID": self.access_key,
            "AWS_SECRET_ACCESS_KEY": self.secret_key,
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_REGION": "us-east-1",
            "AWS_ALLOW_HTTP": "true",
        }

    def _write_config(self) -> None:
        root = self.root
        for name in ("mon", "osd", "run", "log", "crash", "rgw"):
            (root / name).mkdir()
        self.config.write_text(
            f"""[global]
fsid = {uuid.uuid4()}
mon host = v2:127.0.0.1:{_free_port()}
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind msgr1 = false
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc
run dir = {root}/run
log file = {root}/log/$name.log
crash dir = {root}/crash
pid file = {root}/run/$name.pid
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
paxos propose interval = 0.01
paxos min wait = 0.001
osd objectstore = memstore
memstore device bytes = {self.memory_bytes}
osd data = {root}/osd
osd crush chooseleaf type = 0
mon data = {root}/mon
rgw frontends = beast endpoint=127.0.0.1:{self.port} tcp_nodelay=1
rgw data = {root}/rgw
rgw gc obj min wait = 1
rgw gc processor period = 2
"""
        )

    def _run(self, *args: str, timeout: float = 60) -> str:
        completed = subprocess.run(
            [*args, "-c", str(self.config)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if completed.returncode != 0:
            raise RuntimeError(
                f"{' '.join(args)} failed ({completed.returncode}): {completed.stderr[-2000:]}"
            )
        return completed.stdout

    def _daemon(self, *args: str) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            [*args, "-f", "-c", str(self.config)],
            stdout=subprocess.DEVNULL,
            stderr=(self.root / "log" / f"{args[0]}.stderr").open("wb"),
            start_new_session=True,
        )
        self.processes.append(process)
        return process

    def start(self) -> None:
        self._write_config()
        monmap = self.root / "monmap"
        mon_address = self.config.read_text().split("mon host = ")[1].split("\n")[0]
        fsid = self.config.read_text().split("fsid = ")[1].split("\n")[0]
        self._run(
            "monmaptool", "--create", "--fsid", fsid, "--addv", "a", f"[{mon_address}]", str(monmap)
        )
        self._run("ceph-mon", "--mkfs", "-i", "a", "--monmap", str(monmap))
        self._daemon("ceph-mon", "-i", "a")
        osd_id = self._run("ceph", "osd", "create", timeout=60).strip()
        self._run("ceph-osd", "-i", osd_id, "--mkfs")
        self._daemon("ceph-osd", "-i", osd_id)
        gateway = self._daemon("radosgw", "-n", "client.rgw")
        self._wait_for_gateway(gateway)
        self._run(
            "radosgw-admin",
            "user",
            "create",
            "--uid",
            "tensoracle",
            "--display-name",
            "tensoracle tests",
            "--access-key",
            self.access_key,
            "--secret",
            self.secret_key,
        )
        self.create_bucket(self.bucket)

    def _wait_for_gateway(self, gateway: subprocess.Popen[bytes], limit: float = 90) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if gateway.poll() is not None:
                raise RuntimeError(
                    f"radosgw exited with {gateway.returncode} (port {self.port} taken?); see "
                    f"{self.root / 'log'}"
                )
            inodes = _listening_inodes(self.port)
            if inodes and _owns_socket(gateway.pid, inodes):
                return
            time.sleep(0.05)
        raise RuntimeError(f"radosgw did not listen on 127.0.0.1:{self.port} within {limit} s")

    def create_bucket(self, name: str) -> None:
        _create_bucket_http(self.endpoint, name, self.access_key, self.secret_key)

    def stop(self) -> None:
        for process in reversed(self.processes):
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
        for process in reversed(self.processes):
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
        self.processes.clear()
        shutil.rmtree(self.root, ignore_errors=True)


def _create_bucket_http(endpoint: str, bucket: str, access_key: str, secret_key: str) -> None:
    """PUT /bucket signed with AWS Signature Version 2 (radosgw accepts it)."""
    import base64
    import hashlib
    import hmac
    import urllib.request
    from email.utils import formatdate

    date = formatdate(usegmt=True)
    to_sign = f"PUT\n\n\n{date}\n/{bucket}"
    signature = base64.b64encode(
        hmac.new(secret_key.encode(), to_sign.encode(), hashlib.sha1).digest()
    ).decode()
    request = urllib.request.Request(
        f"{endpoint}/{bucket}",
        method="PUT",
        headers={"Date": date, "Authorization": f"AWS {access_key}:{signature}"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        if response.status != 200:
            raise RuntimeError(f"creating bucket {bucket!r} answered {response.status}")


def start_server(memory_bytes: int = 1 << 30) -> CephS3:
    """Starts a cluster in a fresh temporary directory; stops it again if starting fails."""
    server = CephS3(
        root=Path(tempfile.mkdtemp(prefix="tensoracle-ceph-")),
        port=_free_port(),
        memory_bytes=memory_bytes,
    )
    try:
        server.start()
    except BaseException:
        server.stop()
        raise
    return server


if __name__ == "__main__":
    started = time.monotonic()
    running = start_server()
    print(json.dumps({"endpoint": running.endpoint, "seconds": time.monotonic() - started}))
    running.stop()
