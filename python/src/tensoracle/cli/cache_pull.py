"""``tensoracle cache pull [ENTRY...]``: downloads published engines into the local cache.

Each object is verified exactly as ``open_engine`` verifies a download (format, header, plan
checksum, a file name that is the identity of its conditions, and the signature when
``TENSORACLE_REMOTE_VERIFY_KEY`` is set) before it is saved through the store's atomic save.
Entries already saved locally are left alone. Prints one JSON object.
"""

from __future__ import annotations

from tensoracle import _core
from tensoracle.cache.remote.fleet import download, load_keys, save_verified
from tensoracle.cache.remote.objects import RemoteObjects, TooLarge, engine_key
from tensoracle.cli.remote_cache import (
    EXIT_FAILURE,
    EXIT_SUCCESS,
    add_remote_option,
    cache_directory,
    parser,
    print_json,
    remote_config,
    remote_entries,
    run,
)
from tensoracle.errors import EngineCacheError

USAGE = "tensoracle cache pull [ENTRY...] [--remote URL] [--cache-dir DIR]"


def _pull(args: list[str], prog: str) -> int:
    made = parser(
        prog,
        "Download published engines (all of them, or the ENTRY file names "
        "given) into the local cache, verified. Exit status: 0 success, 1 an entry "
        "was refused or missing, 2 invalid usage.",
    )
    made.add_argument("entries", nargs="*", metavar="ENTRY", help="file names in the remote cache")
    add_remote_option(made, required_flag=False)
    options = made.parse_args(args)
    config = remote_config(options.remote)
    directory = cache_directory(options.cache_dir)
    _signing, verify = load_keys(config)
    objects = RemoteObjects(config)
    names = options.entries or [name for name, _info in remote_entries(objects)]
    store = _core.Store(str(directory))
    pulled, present, refused = [], [], []
    for name in names:
        if "/" in name or not name.endswith(".engine") or name.startswith("."):
            refused.append({"file_name": name, "reason": "not the file name of a saved engine"})
            continue
        if (directory / name).exists():
            present.append({"file_name": name})
            continue
        key = engine_key(name)
        try:
            found = download(objects, key, None, verify)
            if found is None:
                refused.append({"file_name": name, "reason": f"{objects.url(key)} does not exist"})
                continue
            verified = _core.verify_remote_object(found, objects.url(key), name, None, verify)
        except (EngineCacheError, TooLarge) as error:
            refused.append({"file_name": name, "reason": str(error)})
            continue
        with store.lock(verified.identity, True):
            save_verified(store, verified, found)
        pulled.append(
            {"file_name": name, "size_bytes": verified.engine_bytes, "signed": verified.is_signed}
        )
    print_json(
        {
            "remote": config.url,
            "directory": str(directory),
            "pulled": pulled,
            "already_present": present,
            "refused": refused,
        }
    )
    return EXIT_FAILURE if refused else EXIT_SUCCESS


def main(args: list[str], prog: str) -> int:
    return run(prog, USAGE, lambda: _pull(args, prog))
