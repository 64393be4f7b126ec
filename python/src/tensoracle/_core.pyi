# Generated from the installed tensoracle._core by tools/check_stubs.py --write (nanobind.stubgen,
# then ruff); do not edit. `make lint` checks that it matches the bindings.

import enum
import os
from collections.abc import Sequence
from typing import Annotated

def default_cache_directory() -> str:
    """
    The cache directory: $XDG_CACHE_HOME/tensoracle, else <home>/.cache/tensoracle.
    """

class EngineIdentity:
    """
    The identity of a saved engine: digest and file name of its canonical conditions.
    """

    @property
    def digest(self) -> str: ...
    @property
    def file_name(self) -> str: ...
    @property
    def conditions(self) -> dict:
        """
        The conditions (a new dict each time); the digest is that of their canonical JSON.
        """

    def __repr__(self) -> str: ...

def make_identity(conditions: object) -> EngineIdentity:
    """
    Identity of the dict `conditions` of JSON values (needs a non-empty string "name"; floating point numbers are refused).
    """

def recorded_identity(conditions: object) -> EngineIdentity:
    """
    Identity of conditions exactly as a saved header records them (targets neither sorted nor checked): what the name of a saved file, and a manifest entry's file_name, are.
    """

class FileLock:
    """A held cross-process lock on one identity; a context manager."""

    @property
    def path(self) -> str: ...
    @property
    def exclusive(self) -> bool: ...
    @property
    def held(self) -> bool: ...
    def release(self) -> None:
        """Releases the lock (again: no effect)."""

    def __enter__(self) -> object: ...
    def __exit__(
        self, exc_type: object | None, exc_value: object | None, traceback: object | None
    ) -> None: ...

class SavedEngine:
    """A verified saved engine; `plan` is a view of its verified copy."""

    @property
    def path(self) -> str: ...
    @property
    def conditions(self) -> dict: ...
    @property
    def references(self) -> dict: ...
    @property
    def plan(
        self,
    ) -> Annotated[memoryview, dict(dtype="uint8", shape=(None,), order="C", writable=False)]:
        """
        Read-only memoryview of the plan bytes: the copy in this process's memory that was verified (the file is closed; later changes to it do not reach the view). Raises EngineKeyError for an encrypted entry (opened_plan opens it).
        """

    @property
    def encrypted(self) -> bool: ...
    @property
    def recipients(self) -> list[str]:
        """
        The key ids (SHA-256 of each raw X25519 public key, 64 hex digits) an encrypted entry is sealed for, sorted; empty for a plain one.
        """

    def opened_plan(
        self, decrypt_key: str | os.PathLike | None = None, decrypt_key_pem: str | None = None
    ) -> bytes:
        """
        The plan of an encrypted entry, opened with a recipient's X25519 private key (a file, or its PEM text), each chunk authenticated; the plan itself for a plain one. Raises EngineKeyError when the key is no recipient, CorruptEngineError when a chunk does not authenticate.
        """

    def plan_for(
        self, decrypt_key: str | os.PathLike | None = None, decrypt_key_pem: str | None = None
    ) -> object:
        """
        The plan open_engine hands to TensorRT for this entry and this decrypt key (a file, or its PEM text, or none): an encrypted entry's plan opened with the key, a plain entry's `plan` without one. Raises EngineKeyError for an encrypted entry without a key, a key that is no recipient, and a plain entry with a key (a downgrade); CorruptEngineError when a chunk does not authenticate.
        """

class Store:
    """A directory of saved engines."""

    def __init__(self, directory: str | os.PathLike) -> None:
        """Opens the directory, creating it (owner-only) when missing."""

    @property
    def directory(self) -> str: ...
    def entry_path(self, identity: EngineIdentity) -> str: ...
    def lock_path(self, identity: EngineIdentity) -> str: ...
    def contains(self, identity: EngineIdentity) -> bool: ...
    def lock(self, identity: EngineIdentity, exclusive: bool) -> FileLock:
        """Blocks (without holding the GIL) until the identity's lock is granted."""

    def try_lock(self, identity: EngineIdentity, exclusive: bool) -> FileLock | None:
        """The identity's lock when it is free now, else None (never waits)."""

    def lock_entry(self, file_name: str, exclusive: bool) -> FileLock:
        """
        Blocks (without holding the GIL) until the lock of the entry `file_name` is granted: the same lock as lock(identity) for the identity whose file name it is. Raises ValueError when `file_name` is not the plain file name of an engine entry.
        """

    def remove_abandoned_temporaries(self, file_name: str) -> int:
        """
        Removes the temporary files that killed writers of the entry `file_name` left (their process is gone); call it holding the entry's exclusive lock. Returns how many.
        """

    def read(self, identity: EngineIdentity) -> SavedEngine | None:
        """
        The verified entry, or None when there is none. Raises CorruptEngineError, EngineConditionError or OSError.
        """

    def save(
        self,
        identity: EngineIdentity,
        references: object,
        plan: object,
        encrypt_to: Sequence[str] = [],
    ) -> str:
        """
        Atomically saves `plan` (any contiguous bytes-like object, read in place) as the identity's entry; returns its path. With `encrypt_to` (X25519 public keys: PEM files, or PEM texts), the plan is sealed for those recipients (engine file format 3) and only the sealed bytes are written.
        """

def recipient_key_id(key: str) -> str:
    """
    The key id of an X25519 public key (a PEM file, or its PEM text): the SHA-256 of its raw 32 bytes, 64 hex digits, as an encrypted entry's header names its recipients. Raises OSError when the file cannot be read, ValueError when it holds no X25519 public key.
    """

def weight_digest(
    cache_directory: str | os.PathLike, path: str | os.PathLike, force: bool = False
) -> tuple[str, bool]:
    """
    (sha256 hex, from_record) of a weight file, reusing the record in `cache_directory` when path, size, mtime and inode match (unless `force`).
    """

def link_refusal(path: str | os.PathLike) -> str:
    """Why a symbolic link at `path` in the cache folder is refused."""

def not_regular_refusal(path: str | os.PathLike, directory: bool) -> str:
    """
    Why a directory (`directory`) or another file that is not regular (a FIFO, socket or device) at `path` in the cache folder is refused.
    """

def gpu_properties() -> object:
    """
    Compatibility properties of the current context's GPU (else device 0), or None.
    """

def gpu_absent_reason() -> str | None:
    """
    Why no GPU can be described (no driver, no device, a driver error), or None.
    """

def compare_floating(
    candidate: tuple[int, Sequence[int], Sequence[int], str],
    reference: tuple[int, Sequence[int], Sequence[int], str],
    atol: float | None,
    rtol: float | None,
    statistics: bool,
    histogram_bins: int,
    threads: int,
) -> dict: ...
def count_mismatches(
    candidate: tuple[int, Sequence[int], Sequence[int], str],
    reference: tuple[int, Sequence[int], Sequence[int], str],
    threads: int,
) -> int: ...
def decode_codes(dtype: str, codes: Sequence[int]) -> list[float]: ...
def compare_kernel(
    candidate: tuple[int, Sequence[int], Sequence[int], str],
    reference: tuple[int, Sequence[int], Sequence[int], str],
) -> str:
    """
    Which first pass compare_floating runs for these arrays: "avx512", "avx2" or "portable" (tensoracle::compare_kernel).
    """

def inspect_bundle(directory: str, plugin: str | None = None) -> str:
    """
    Checks a cubin bundle directory (and a plugin library); returns the report as JSON.
    """

def bundle_sha256(manifest: str) -> str:
    """
    The bundle digest of a manifest given as JSON text (its bundle_sha256 key left out).
    """

def cubin_sm(data: object, allowed: Sequence[int]) -> int:
    """
    The SM number in a cubin's ELF header; raises CubinArchitectureError unless in allowed.
    """

def is_safe_relative_path(path: str) -> bool:
    """
    Whether a path stays inside its base under both POSIX and Windows rules.
    """

MAX_MANIFEST_BYTES: int = 4194304

MAX_MANIFEST_VALUES: int = 1048576

MAX_CUBIN_BYTES: int = 268435456

def json_refusal(
    data: object, max_bytes: int, max_depth: int = 64, max_values: int | None = None
) -> tuple[str, int | None] | None:
    """
    Why the core's JSON parser refuses data (bytes-like) within max_bytes, max_depth and max_values (None: no limit but max_bytes): None when it parses, else (message, offset), offset being the byte at which a text that is not JSON stopped the parser, None for a passed limit or a number beyond a double.
    """

def inspected_sms() -> list[int]: ...
def elf_exported_functions(library: object, name: str) -> list[str]:
    """
    The functions an ELF shared library (its bytes) exports, read without loading it. Raises ValueError naming `name` for bytes that are not an ELF shared object.
    """

def nearest_entry(directory: str | os.PathLike, conditions: object) -> dict | None:
    """
    {compared_with, differences: [{key, before, after, description}]} for the saved entry of the same name nearest to `conditions`, or None when there is none.
    """

class SigningKey:
    """An Ed25519 private key (signs published engines)."""

    @staticmethod
    def from_pem_file(path: str | os.PathLike) -> SigningKey: ...
    @staticmethod
    def from_pem(pem: str) -> SigningKey: ...
    def public_key_pem(self) -> str: ...

class VerifyKey:
    """An Ed25519 public key (verifies remote engines)."""

    @staticmethod
    def from_pem_file(path: str | os.PathLike) -> VerifyKey: ...
    @staticmethod
    def from_pem(pem: str) -> VerifyKey: ...
    @property
    def fingerprint(self) -> str: ...

def signature_trailer(key: SigningKey, file_name: str, engine: object) -> bytes:
    """
    The signature trailer that follows the engine file `engine` in its remote object.
    """

class RemoteEngine:
    """A downloaded object that passed verification."""

    @property
    def identity(self) -> EngineIdentity: ...
    @property
    def references(self) -> dict: ...
    @property
    def plan_offset(self) -> int: ...
    @property
    def plan_size(self) -> int: ...
    @property
    def engine_bytes(self) -> int: ...
    @property
    def is_signed(self) -> bool: ...
    @property
    def signer(self) -> str | None: ...

def verify_remote_object(
    object: object,
    object_name: str,
    file_name: str,
    identity: EngineIdentity | None,
    verify_key: VerifyKey | None,
) -> RemoteEngine:
    """
    Verifies a downloaded object as a local engine file is verified, then its signature when `verify_key` is given. Raises CorruptEngineError, EngineConditionError or UntrustedEngineError naming `object_name`.
    """

def decode_engine_header(prefix: object, file_size: int, name: str) -> tuple[dict, dict, int]:
    """
    (conditions, references, plan_offset) from the first bytes of an engine file of `file_size` bytes (preamble and header). Raises CorruptEngineError naming `name`.
    """

ENGINE_PREAMBLE_BYTES: int = 20

PLAN_CHUNK_BYTES: int = 4194304

SIGNATURE_MAGIC_BYTES: int = 8

SIGNATURE_TRAILER_BYTES: int = 72

def engine_prefix_bytes(preamble: object) -> int:
    """
    How many bytes from the start of an engine file hold its preamble and header, from its first ENGINE_PREAMBLE_BYTES bytes.
    """

def has_signature_trailer(object_size: int, tail: object) -> bool:
    """
    Whether a remote object of `object_size` bytes ending in `tail` (its last SIGNATURE_MAGIC_BYTES bytes or more) carries a signature trailer.
    """

def parse_size_bytes(text: str, option: str) -> int: ...
def parse_days_nanoseconds(text: str, option: str) -> int: ...
def format_utc_time(nanoseconds: int) -> str: ...
def format_size_human(bytes: int) -> str: ...

class RemoteReceiver:
    """
    Receives a remote object into a store as it downloads: feed(chunk) in order, then finish(). Refused or abandoned, it leaves no temporary file and the entry as it was.
    """

    def __init__(
        self,
        store: Store,
        object_name: str,
        file_name: str,
        object_size: int,
        identity: EngineIdentity | None,
        verify_key: VerifyKey | None,
    ) -> None:
        """
        Prepares to receive the object `object_name` (its URL, for messages) of `object_size` bytes as the entry `file_name` (with the conditions of `identity`, or when None those whose identity is `file_name`). Raises CorruptEngineError when the size cannot hold an engine.
        """

    def feed(self, chunk: object) -> None:
        """
        Writes and hashes the next bytes of the object (any contiguous bytes-like object). Raises CorruptEngineError or EngineConditionError when its preamble or header (or more bytes than announced) refuse it.
        """

    def finish(self) -> tuple[RemoteEngine, SavedEngine]:
        """
        Verifies the whole object (signature, header, plan checksum, conditions) and saves it atomically as the entry: (RemoteEngine, SavedEngine). Raises CorruptEngineError, EngineConditionError or UntrustedEngineError naming the object.
        """

    def abort(self) -> None:
        """Removes the temporary file; the entry stays as it was."""

    @property
    def object_size(self) -> int: ...
    @property
    def received(self) -> int: ...
    @property
    def temporary_path(self) -> str | None:
        """The temporary file while receiving; None once finished or aborted."""

class PlanSeekFrom(enum.Enum):
    """Where a plan seek is counted from (TensorRT's SeekPosition)."""

    SET = 0

    CUR = 1

    END = 2

def plan_seek_target(position: int, size: int, where: PlanSeekFrom, offset: int) -> int | None:
    """
    Where a seek of `offset` bytes from `where` lands in a plan of `size` bytes read up to `position` (tensoracle::deploy::seek_target, the rule of the C++ VerifiedPlanStream), or None when outside the plan and not its end.
    """

class VerifiedPluginLibrary:
    """
    A plugin library read into this process and checked against a deployed entry's recorded digests; its sealed in-memory copy lives as long as this object.
    """

    @property
    def path(self) -> str: ...
    @property
    def sha256(self) -> str: ...
    @property
    def loader_path(self) -> str:
        """
        What to hand the loader: /proc/self/fd/N of the sealed copy of the bytes checked (nobody can write, grow or shrink it).
        """

class DeployedEngine:
    """A verified deployed engine; `plan` is a view of its verified copy."""

    @property
    def path(self) -> str: ...
    @property
    def file_name(self) -> str: ...
    @property
    def recipe(self) -> str: ...
    @property
    def why(self) -> str: ...
    @property
    def signer(self) -> str | None: ...
    @property
    def backend(self) -> str: ...
    @property
    def io(self) -> object: ...
    @property
    def streamed(self) -> bool: ...
    @property
    def plan_size(self) -> int: ...
    def verify_plugins(self, paths: Sequence[str | os.PathLike]) -> list[VerifiedPluginLibrary]:
        """
        The plugin libraries `paths` name, each read into a sealed in-memory copy and checked against the SHA-256 digests the entry's conditions record (tensoracle::deploy::verify_plugins), in the order given. Nothing is loaded. Raises EngineConditionError naming the file and the digests for a library the entry was not built with, and naming the digest for a recorded library none of `paths` is; OSError naming the file when it cannot be read or is not a regular file; RuntimeError elsewhere than Linux (no sealed in-memory files) when `paths` is not empty.
        """

    def read_plan(self, offset: int, size: int) -> bytes:
        """
        At most `size` bytes of the verified plan from `offset`, no further than the end of the 4 MiB chunk that holds it (none past the plan's end), as bytes: the chunk is checked against the verified header before any of its bytes is handed out. Raises CorruptEngineError naming the file and the chunk when the file changed since the open (and on every later call).
        """

    def check_rest(self) -> None:
        """
        Reads and checks every chunk of the plan that read_plan did not hand on yet, handing none of it on (PlanReader::check_rest): after a consumer that may stop before the plan's end, so that nothing made from a plan not checked whole is used. Raises as read_plan.
        """

    @property
    def checked_whole(self) -> bool:
        """Whether every chunk of the plan was checked by the reads so far."""

    def read_plan_into(self, offset: int, into: object) -> int:
        """
        Fills the writable buffer `into` with the verified plan from `offset`, as a C++ consumer's read does (a 4 MiB chunk the buffer covers whole is read into it and checked there, zeroed if refused); returns how many bytes (fewer at the plan's end). Raises as read_plan.
        """

    @property
    def plan(self) -> object:
        """
        Read-only memoryview of the verified plan: the bytes to deserialize; None when streamed (read it with read_plan).
        """

class DeployManifest:
    """A deployment manifest as the C++ library reads it."""

    @staticmethod
    def read(path: str | os.PathLike) -> DeployManifest:
        """Reads the manifest at `path` (errors as read_deploy_manifest)."""

    @property
    def size(self) -> int: ...
    def select(self, recipe: str, device: dict, backend: str, backend_version: str) -> str:
        """
        The file name of the entry of `recipe` select_for_device chooses for the GPU described by `device` (a dict of its properties) and the runtime `backend` `backend_version`. Raises EngineTargetError listing every candidate when none can run, ValueError for an unknown recipe.
        """

def open_deployed(
    manifest_path: str | os.PathLike,
    recipe: str,
    device: dict,
    backend: str,
    backend_version: str,
    cache_dir: str | os.PathLike | None,
    verify_key: str | os.PathLike | None,
    verify_key_pem: str | None = None,
    skip_signature_verification: bool = False,
    stream_plan: bool = False,
    trust_policy: str | os.PathLike | None = None,
    minimum_version: int = 0,
    decrypt_key: str | os.PathLike | None = None,
    decrypt_key_pem: str | None = None,
) -> DeployedEngine:
    """
    Reads the manifest as tensoracle::deploy::read_manifest(path, options) does (with `verify_key`, a PEM public key file, `verify_key_pem`, its text, or `trust_policy`, a policy file, it must be a signed manifest those keys accept, of a version no lower than `minimum_version` and than the cache folder accepted before; without them a signed manifest is refused unless `skip_signature_verification`), selects the entry of `recipe` for the GPU described by `device` (a dict of its properties) and the runtime `backend` `backend_version`, and opens it from `cache_dir` (the default cache folder when None), verified as tensoracle::deploy::DeployedEngine::open verifies it. With `stream_plan` only the header is read and checked, and the plan is read through read_plan, chunk by chunk (entries saved before chunk digests existed are read whole either way). Raises EngineTargetError listing every candidate when none can run, ValueError for an unknown recipe or an invalid manifest, FileNotFoundError when the entry is not in the cache folder, CorruptEngineError, EngineConditionError, EngineIOError or UntrustedEngineError naming the file and field. An encrypted entry is opened with `decrypt_key` (an X25519 private key file) or `decrypt_key_pem` (its text), each chunk authenticated and decrypted before it is handed on; EngineKeyError when the entry is encrypted and no key opens it, or a key is given and it is not encrypted.
    """

def device_target(device: dict) -> str:
    """
    The build target ("sm89") of the GPU described by `device` (a dict of its properties). Raises ValueError naming compute_capability when it is not MAJOR.MINOR.
    """

def cannot_run(conditions: dict, device: dict) -> str | None:
    """
    Why an engine with the identity conditions `conditions` (a dict) cannot run on the GPU described by `device` (a dict of its properties), or None when it can. Raises ValueError naming a mistyped field.
    """

def read_deploy_manifest(path: str | os.PathLike) -> list:
    """
    The entries of the deployment manifest at `path` as the C++ library reads them (dicts of recipe, graph_version, file_name, conditions, backend, backend_version, targets, plan_size, plan_xxh3_128, engine_bytes, fleet_key, fleet_signature (hex, or None)). Raises ValueError naming the file, field and value of what it refuses, OSError when the file cannot be read.
    """

class TrustedManifest:
    """
    A deployment manifest read once and trusted as open_deployed trusts it; each of its entries can be opened without selecting one for a GPU.
    """

    @property
    def document(self) -> dict:
        """
        The manifest as read: a dict of spec, remote (or None), entries (as read_deploy_manifest gives them, with sha256, header_sha256 and bound), version and expires (None for a plain manifest) and signers (the key ids that verified it).
        """

    def open(self, index: int, stream_plan: bool = True) -> DeployedEngine:
        """
        The entry `index` (of document's entries) opened from the cache folder and verified as open_deployed verifies the entry it selects (tensoracle::deploy::DeployedEngine::open with the options the manifest was read with); `why` is empty. Raises as open_deployed, IndexError for an index beyond the entries.
        """

def read_trusted_manifest(
    path: str | os.PathLike,
    cache_dir: str | os.PathLike | None = None,
    verify_key: str | os.PathLike | None = None,
    verify_key_pem: str | None = None,
    trust_policy: str | os.PathLike | None = None,
    minimum_version: int = 0,
    skip_signature_verification: bool = False,
) -> TrustedManifest:
    """
    The deployment manifest at `path`, read once and trusted as open_deployed trusts it (the same keys, policy, minimum version and cache folder, whose record of accepted versions a verified signed manifest updates), kept with those options so that its entries can be opened. Errors as read_deploy_manifest, and UntrustedEngineError naming what failed for a manifest the keys do not accept.
    """

def sign_manifest(
    text: str,
    name: str,
    version: int | None,
    expires: str | None,
    keys: Sequence[str | os.PathLike],
) -> str:
    """
    The signed manifest (a DSSE envelope's text) of the manifest `text` (named `name` in messages), signed by the Ed25519 signing key files `keys`, as `tensoracle manifest sign` writes it: a plain manifest needs `version` and `expires` (UTC, "2027-03-01T00:00:00Z"); a signed one gets the signatures added. Raises ValueError naming the field.
    """

class ManifestEntryCheck:
    """
    What a pull checks of one entry of a trusted manifest: a saved file at the entry's name (check_saved) and a download (ManifestObjectCheck).
    """

    def __init__(self, manifest: TrustedManifest, index: int, where: str) -> None:
        """
        The checks of the entry `index` of `manifest`, named `where` in messages ("deploy.json: entries[0]"). Raises IndexError for an index beyond the entries.
        """

    def check_saved(self, path: str | os.PathLike) -> None:
        """
        Judges the saved entry at `path` from its header: EngineConditionError naming the field that differs (UntrustedEngineError for the header's SHA-256 of a verified signed manifest's entry), CorruptEngineError for a link, anything but a regular file (never followed or waited on) or a damaged header, OSError when it cannot be read. The file is only read.
        """

class ManifestObjectCheck:
    """
    The manifest's checks of one download, as it arrives: its size when made, its header once fed, its signature trailer at finish().
    """

    def __init__(self, entry: ManifestEntryCheck, url: str, object_size: int) -> None:
        """
        Checks a download of `object_size` bytes named `url` for `entry`. Raises EngineConditionError naming the object and the field when the size is not the entry's engine_bytes (with or without a signature trailer, as the manifest says).
        """

    def feed(self, chunk: object) -> None:
        """
        Takes the object's next bytes (any contiguous bytes-like object), in order. Raises EngineConditionError (UntrustedEngineError, CorruptEngineError) naming the object and the field once its header differs from the entry's.
        """

    def finish(self) -> None:
        """
        After the last byte. Raises EngineConditionError when the signature trailer is not the manifest's, CorruptEngineError when the object ended before its header.
        """

class TensorDescription:
    """
    One IO tensor as an engine or a recorded IO signature describes it (TensorRT's enum names as texts).
    """

    def __init__(
        self,
        *,
        name: str,
        is_input: bool,
        dtype: str,
        shape: Sequence[int],
        location: str,
        format: str,
        profile: tuple[Sequence[int], Sequence[int], Sequence[int]] | None = None,
    ) -> None:
        """
        `location` and `format` empty where not stated; `profile` (min, opt, max) for an input whose profile 0 is recorded.
        """

    @property
    def name(self) -> str: ...
    @property
    def is_input(self) -> bool: ...
    @property
    def dtype(self) -> str: ...
    @property
    def shape(self) -> list[int]: ...
    @property
    def location(self) -> str: ...
    @property
    def format(self) -> str: ...

class IoDifference:
    """Where two IO descriptions differ first."""

    @property
    def tensor(self) -> str: ...
    @property
    def field(self) -> str:
        """name, mode, dtype, shape, location, format or profile"""

    @property
    def observed(self) -> str: ...
    @property
    def expected(self) -> str: ...

def first_io_difference(
    observed: Sequence[TensorDescription],
    expected: Sequence[TensorDescription],
    *,
    placement_where_stated: bool = False,
    profiles_last: bool = False,
) -> IoDifference | None:
    """
    The first difference of `observed` from `expected` (tensoracle::deploy::first_io_difference: names, then each expected tensor's mode, dtype, shape, location, format and input profile; location and format only where `expected` states them when `placement_where_stated`; profiles after all other fields when `profiles_last`; a fixed input without a reported profile matches a profile equal to its shape), or None.
    """

def io_field(difference: IoDifference, expected: Sequence[TensorDescription]) -> str:
    """
    Where `difference` lies in an IO signature whose tensors are `expected`, as refusals name it: "io.tensors[1].dtype", or "io.tensors" for a tensor only the observed IO has (tensoracle::deploy::io_field).
    """
