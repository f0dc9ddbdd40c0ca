"""npm: the packument (``registry.npmjs.org/NAME``) gives every version's tarball, its ``dist.integrity``
(SHA-512) or ``dist.shasum`` (SHA-1), and ``time`` (when each version was published)."""

from __future__ import annotations

import re
import urllib.parse

from benchsmith.archives import SourceError
from benchsmith.records import Reason
from benchsmith.registries.cache import sri_to_digest
from benchsmith.registries.dates import iso_utc
from benchsmith.registries.http import check_url, fetch_json, text_field
from benchsmith.registries.licenses import normalise
from benchsmith.registries.metadata import RegistryKind, RegistryRelease, RegistrySpec, valid_version

API = "https://registry.npmjs.org"
_TARBALL_RE = re.compile(r"[A-Za-z0-9._+-]{1,200}\.tgz")
_SHA1 = re.compile(r"[0-9a-f]{40}")


def _declared_license(meta: dict) -> str | None:
    lic = meta.get("license")
    if isinstance(lic, dict):
        lic = lic.get("type")
    if isinstance(lic, str):
        return text_field({"l": lic}, "l")
    legacy = meta.get("licenses")  # the old form: [{"type": "MIT", "url": ...}, ...]
    if isinstance(legacy, list):
        types = [t["type"] for t in legacy[:10] if isinstance(t, dict) and isinstance(t.get("type"), str)]
        return " OR ".join(types)[:300] if types else None
    return None


def _repository(meta: dict) -> str | None:
    repo = meta.get("repository")
    if isinstance(repo, dict):
        return text_field(repo, "url")
    return text_field(meta, "repository")


def resolve(spec: RegistrySpec) -> RegistryRelease:
    what = f"npm:{spec.name}"
    data = fetch_json(f"{API}/{urllib.parse.quote(spec.name, safe='@')}")
    if data.get("name") != spec.name:
        raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"{what}: the registry answered for "
                          f"{str(data.get('name'))[:100]!r}")
    tags = data.get("dist-tags") if isinstance(data.get("dist-tags"), dict) else {}
    version = spec.version or tags.get("latest")
    if not isinstance(version, str) or not valid_version(RegistryKind.NPM, version):
        raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"{what}: version {str(version)[:80]!r} is not a "
                          "version")
    versions = data.get("versions") if isinstance(data.get("versions"), dict) else {}
    meta = versions.get(version)
    if not isinstance(meta, dict):
        raise SourceError(Reason.SOURCE_NOT_FOUND, f"{what}: no version {version!r}")
    dist = meta.get("dist") if isinstance(meta.get("dist"), dict) else {}
    url = check_url(str(dist.get("tarball", "")))
    filename = urllib.parse.urlsplit(url).path.rsplit("/", 1)[-1]
    if not _TARBALL_RE.fullmatch(filename):
        raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"{what}@{version}: tarball {filename[:100]!r}")
    digest = sri_to_digest(dist.get("integrity"))
    if digest is None and isinstance(dist.get("shasum"), str) and _SHA1.fullmatch(dist["shasum"]):
        digest = f"sha1:{dist['shasum']}"  # packages published before npm recorded SHA-512
    if digest is None:
        raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"{what}@{version}: no integrity or shasum")
    times = data.get("time") if isinstance(data.get("time"), dict) else {}
    published = [iso_utc(times.get(v)) for v in versions]
    published = [t for t in published if t]
    first = min(published) if published else iso_utc(times.get("created"))
    declared = _declared_license(meta)
    return RegistryRelease(
        registry=str(RegistryKind.NPM), name=spec.name, version=version, released=iso_utc(times.get(version)),
        first_released=first, license_declared=declared, license_spdx=normalise(declared),
        homepage=text_field(meta, "homepage"), repository=_repository(meta), artifact_url=url,
        artifact_name=filename, digest=digest)
