"""The registry cache: artifacts stored under their digest, and the metadata of pinned releases.

An artifact is fetched once: ``artifacts/<algo>/<hex>`` holds exactly the bytes whose digest is its name (checked
when it is written and again when it is read, so a file altered on disk is fetched anew, never used).  A pinned
release's metadata (``releases/<registry>/<repo id>.json``) lets a rerun resolve a repos file of pinned sources
without any request: the same repos file gives the same identities, and a resumed build downloads nothing."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

from benchsmith.archives import SourceError
from benchsmith.records import Reason
from benchsmith.registries.metadata import RegistryRelease, RegistrySpec

_DIGEST_RE = re.compile(r"(sha256|sha512|sha1):([0-9a-f]{40,128})")
_DIGEST_LENGTHS = {"sha1": 40, "sha256": 64, "sha512": 128}


def cache_root() -> Path:
    """``$BENCHSMITH_CACHE`` or ``$XDG_CACHE_HOME/benchsmith`` (``~/.cache/benchsmith``), then ``registries``."""
    base = os.environ.get("BENCHSMITH_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "benchsmith")
    return Path(base) / "registries"


def parse_digest(digest: str) -> tuple[str, str]:
    m = _DIGEST_RE.fullmatch(digest or "")
    if not m or len(m.group(2)) != _DIGEST_LENGTHS[m.group(1)]:
        raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"digest {str(digest)[:160]!r} is not sha1/sha256/"
                          "sha512 hex")
    return m.group(1), m.group(2)


def sri_to_digest(integrity: str) -> str | None:
    """An npm ``dist.integrity`` (``sha512-<base64>``) as ``sha512:<hex>``; None when it is not one."""
    if not isinstance(integrity, str) or not integrity.startswith("sha512-"):
        return None
    try:
        raw = base64.b64decode(integrity.removeprefix("sha512-").split()[0], validate=True)
    except (ValueError, IndexError):
        return None
    return f"sha512:{raw.hex()}" if len(raw) == 64 else None


def digest_of(data: bytes, algo: str) -> str:
    return hashlib.new(algo, data).hexdigest()


def _write_atomic(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# The archive extractor picks its decompressor by the file name's suffix: the cached file keeps the artifact's.
_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip")


def archive_suffix(artifact_name: str) -> str:
    return next((s for s in _SUFFIXES if artifact_name.endswith(s)), "")


def artifact_path(digest: str, artifact_name: str, root: Path | None = None) -> Path:
    algo, hexd = parse_digest(digest)
    return (root or cache_root()) / "artifacts" / algo / (hexd + archive_suffix(artifact_name))


def cached_artifact(digest: str, artifact_name: str, root: Path | None = None) -> Path | None:
    """The cached file for ``digest`` when its bytes still match; a mismatching file is removed."""
    path = artifact_path(digest, artifact_name, root)
    if path.is_symlink() or not path.is_file():
        return None
    algo, hexd = parse_digest(digest)
    if digest_of(path.read_bytes(), algo) == hexd:
        return path
    path.unlink(missing_ok=True)
    return None


def store_artifact(data: bytes, digest: str, artifact_name: str, what: str, root: Path | None = None) -> Path:
    """Keep ``data`` under ``digest`` when it matches; ``artifact_digest_mismatch`` otherwise (nothing kept)."""
    algo, hexd = parse_digest(digest)
    got = digest_of(data, algo)
    if got != hexd:
        raise SourceError(Reason.DIGEST_MISMATCH, f"{what}: {algo} of the {len(data)} bytes downloaded is {got}, "
                          f"the registry publishes {hexd}; refused")
    path = artifact_path(digest, artifact_name, root)
    _write_atomic(path, data)
    return path


def _release_path(spec: RegistrySpec, root: Path | None) -> Path:
    # keyed by registry, name and version only: the same release whatever #SUBDIR a source names in it
    key = RegistrySpec(spec.kind, spec.name, spec.version).repo_id()
    return (root or cache_root()) / "releases" / str(spec.kind) / f"{key}.json"


def cached_release(spec: RegistrySpec, root: Path | None = None) -> RegistryRelease | None:
    """A pinned release's metadata as first resolved; None when unpinned, absent or unreadable."""
    if not spec.version:
        return None
    path = _release_path(spec, root)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        rec = RegistryRelease.from_dict(data)
    except (OSError, ValueError, TypeError):
        return None
    if (rec.registry, rec.name, rec.version) != (str(spec.kind), spec.name, spec.version):
        return None
    return rec


def store_release(rec: RegistryRelease, spec: RegistrySpec, root: Path | None = None) -> None:
    body = json.dumps(rec.to_dict(), sort_keys=True, indent=1).encode()
    _write_atomic(_release_path(spec.pinned(rec.version), root), body)
