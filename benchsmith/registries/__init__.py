"""Package registries as repository sources: ``pypi:NAME[==VERSION]``, ``npm:NAME[@VERSION]`` and
``debian:SOURCE[=VERSION]``, each with an optional ``#SUBDIR``.

A source resolves to one pinned release (``RegistryRelease``: version, dates, licence, digest), whose artifact is
downloaded once, checked against the registry's digest and kept in the digest-keyed cache (``cache``); the build
extracts it with the hardened archive code and keys its resumable shard by that digest.  Every registry answer is
untrusted input (``http``): a failure is a ``SourceError`` with its recorded reason."""

from __future__ import annotations

from pathlib import Path

from benchsmith.archives import SourceError
from benchsmith.records import Reason
from benchsmith.registries import cache
from benchsmith.registries.http import MAX_ARTIFACT_BYTES, fetch_bytes
from benchsmith.registries.metadata import RegistryKind, RegistryRelease, RegistrySpec

__all__ = ["RegistryKind", "RegistryRelease", "RegistrySpec", "parse_source", "resolve", "fetch_artifact",
           "identity"]


def parse_source(text: str) -> RegistrySpec | None:
    """The registry source ``text`` names; None when it names none; ``SourceError`` when it names one badly."""
    return RegistrySpec.parse(text)


def _module(kind: RegistryKind):
    if kind is RegistryKind.PYPI:
        from benchsmith.registries import pypi as mod
    elif kind is RegistryKind.NPM:
        from benchsmith.registries import npm as mod
    else:
        from benchsmith.registries import debian as mod
    return mod


def resolve(spec: RegistrySpec, *, offline_only: bool = False) -> RegistryRelease:
    """The pinned release ``spec`` names (the newest one when it pins none).  A pinned release resolved before is
    read from the cache without any request; ``offline_only`` never makes one (``registry_unreachable``)."""
    hit = cache.cached_release(spec)
    if hit is not None:
        return hit
    if offline_only:
        raise SourceError(Reason.REGISTRY_UNREACHABLE, f"{spec.text()}: not resolved yet (no request made)")
    rec = _module(spec.kind).resolve(spec)
    if spec.version is not None and rec.version != spec.version:
        raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"{spec.text()}: the registry answered version "
                          f"{rec.version!r}")
    cache.parse_digest(rec.digest)
    cache.store_release(rec, spec)
    return rec


def fetch_artifact(rec: RegistryRelease) -> Path:
    """The release's artifact in the cache, downloaded only when it is not there; ``artifact_digest_mismatch``
    when the bytes are not the ones the registry published."""
    hit = cache.cached_artifact(rec.digest, rec.artifact_name)
    if hit is not None:
        return hit
    # no more than the registry said it would be (when it said), and never more than the artifact cap
    limit = MAX_ARTIFACT_BYTES if not rec.size or rec.size < 0 else min(rec.size, MAX_ARTIFACT_BYTES)
    data = fetch_bytes(rec.artifact_url, limit)
    return cache.store_artifact(data, rec.digest, rec.artifact_name, f"{rec.source()} ({rec.artifact_name})")


def identity(text: str) -> str | None:
    """What a build's results depend on for a registry source: its pin and the artifact's digest.  Resolved from
    the cache when it can be; None when the source cannot be resolved now (it is then rebuilt, never resumed)."""
    try:
        spec = parse_source(text)
        if spec is None:
            return None
        rec = resolve(spec)
    except SourceError:
        return None
    return f"registry:{rec.source(spec.subdir)}:{rec.digest}"
