"""PyPI: the JSON API (``/pypi/NAME/json`` for every release's files and dates, ``/pypi/NAME/VERSION/json`` for the
pinned version's own metadata); the artifact is the version's sdist, checked against its published SHA-256."""

from __future__ import annotations

import re
import urllib.parse

from benchsmith.archives import SourceError
from benchsmith.records import Reason
from benchsmith.registries.dates import iso_utc
from benchsmith.registries.http import check_url, fetch_json, text_field
from benchsmith.registries.licenses import normalise
from benchsmith.registries.metadata import RegistryKind, RegistryRelease, RegistrySpec, valid_version

API = "https://pypi.org/pypi"
_SDIST_RE = re.compile(r"[A-Za-z0-9._+!-]{1,200}\.(tar\.gz|zip|tar\.bz2|tar\.xz)")
_HEX64 = re.compile(r"[0-9a-f]{64}")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _release_files(data: dict, version: str) -> list[dict]:
    files = (data.get("releases") or {}).get(version)
    return [f for f in files if isinstance(f, dict)] if isinstance(files, list) else []


def _first_release(data: dict) -> str | None:
    times = [iso_utc(f.get("upload_time_iso_8601")) for files in (data.get("releases") or {}).values()
             if isinstance(files, list) for f in files if isinstance(f, dict)]
    times = [t for t in times if t]
    return min(times) if times else None


def _sdist(files: list[dict], what: str) -> dict:
    sdists = [f for f in files if f.get("packagetype") == "sdist" and isinstance(f.get("filename"), str)
              and _SDIST_RE.fullmatch(f["filename"])]
    if not sdists:
        raise SourceError(Reason.REGISTRY_NO_SOURCE_ARTIFACT, f"{what}: no source distribution (sdist) on PyPI")
    return sorted(sdists, key=lambda f: f["filename"])[0]  # one per version in practice; the choice is stable


def resolve(spec: RegistrySpec) -> RegistryRelease:
    what = f"pypi:{spec.name}"
    data = fetch_json(f"{API}/{spec.name}/json")
    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    if canonical(str(info.get("name", ""))) != canonical(spec.name):
        raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"{what}: the registry answered for "
                          f"{str(info.get('name'))[:100]!r}")
    version = spec.version or info.get("version")
    if not isinstance(version, str) or not valid_version(RegistryKind.PYPI, version):
        raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"{what}: newest version {str(version)[:80]!r} is not "
                          "a version")
    if version not in (data.get("releases") or {}):
        raise SourceError(Reason.SOURCE_NOT_FOUND, f"{what}: no release {version!r}")
    sdist = _sdist(_release_files(data, version), f"{what}=={version}")
    if spec.version is not None and version != info.get("version"):
        # the pinned version's own metadata (the package's ``info`` is the newest version's); where the registry
        # serves no per-version record, the newest version's licence and links stand for it
        try:
            pinned = fetch_json(f"{API}/{spec.name}/{version}/json").get("info")
        except SourceError as exc:
            if exc.reason is not Reason.SOURCE_NOT_FOUND:
                raise
            pinned = None
        info = pinned if isinstance(pinned, dict) else info
    sha = (sdist.get("digests") or {}).get("sha256") if isinstance(sdist.get("digests"), dict) else None
    if not isinstance(sha, str) or not _HEX64.fullmatch(sha):
        raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"{what}=={version}: no SHA-256 for {sdist['filename']}")
    # a mirror may answer with a URL relative to the API's; it is resolved there and checked like any other
    url = check_url(urllib.parse.urljoin(f"{API}/{spec.name}/json", str(sdist.get("url", ""))))
    declared = info.get("license_expression") if isinstance(info.get("license_expression"), str) else None
    declared = declared or text_field(info, "license", 2000)
    classifiers = [c for c in info.get("classifiers") or () if isinstance(c, str)][:200]
    urls = info.get("project_urls") if isinstance(info.get("project_urls"), dict) else {}
    repository = next((text_field(urls, k) for k in sorted(urls) if k.lower() in ("source", "source code",
                                                                                  "repository", "code")), None)
    size = sdist.get("size") if isinstance(sdist.get("size"), int) else None
    return RegistryRelease(
        registry=str(RegistryKind.PYPI), name=spec.name, version=version,
        released=iso_utc(sdist.get("upload_time_iso_8601")), first_released=_first_release(data),
        license_declared=(declared[:300] if declared else None), license_spdx=normalise(declared, classifiers),
        homepage=text_field(info, "home_page") or text_field(urls, "Homepage"), repository=repository,
        artifact_url=url, artifact_name=sdist["filename"], digest=f"sha256:{sha}", size=size)
