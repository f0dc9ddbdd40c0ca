"""Debian: source packages of the suite this machine's apt uses (bookworm, main).  The chain of trust is Debian's
own: ``InRelease`` is checked with ``gpgv`` against the Debian archive keyring, it names the SHA-256 of
``main/source/Sources.xz``, and the Sources index names the SHA-256 of every file of a source package.  The
artifact is the upstream (``.orig``) tarball, or the package's one tarball when it is native; the version's
release date is its ``debian/changelog`` entry's, the first release the changelog's oldest entry, and the licence
that of ``debian/copyright``'s ``Files: *`` paragraph -- all read from the (digest-checked) ``.debian`` tarball."""

from __future__ import annotations

import email.utils
import lzma
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

from benchsmith.archives import SourceError, extract_archive
from benchsmith.records import Reason
from benchsmith.registries import cache
from benchsmith.registries.dates import iso_utc
from benchsmith.registries.http import MAX_ARTIFACT_BYTES, fetch_bytes
from benchsmith.registries.licenses import normalise
from benchsmith.registries.metadata import RegistryKind, RegistryRelease, RegistrySpec, valid_name, valid_version

MIRROR = "http://deb.debian.org/debian"
SUITE = "bookworm"
KEYRING = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
MAX_INDEX_BYTES = 512 * 1024 * 1024  # the decompressed Sources index (about 50 MB for bookworm main)
_DIRECTORY_RE = re.compile(r"pool/main/(?:lib)?[a-z0-9]/[a-z0-9][a-z0-9.+-]{0,99}")
_FILE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+~_-]{0,200}")
_TRAILER_RE = re.compile(r"^ -- .{1,300}?>  (?P<date>.{10,60})$", re.MULTILINE)


def _verified_release() -> str:
    """The suite's InRelease, its signature checked with gpgv against the Debian archive keyring."""
    body = fetch_bytes(f"{MIRROR}/dists/{SUITE}/InRelease", 4 * 1024 * 1024)
    if not KEYRING.is_file() or shutil.which("gpgv") is None:
        raise SourceError(Reason.REGISTRY_UNREACHABLE, f"cannot check Debian's signature: gpgv or {KEYRING} is "
                          "missing")
    with tempfile.TemporaryDirectory(prefix="benchsmith-debian-") as tmp:
        signed, plain = Path(tmp) / "InRelease", Path(tmp) / "Release"
        signed.write_bytes(body)
        res = subprocess.run(["gpgv", "--keyring", str(KEYRING), "--output", str(plain), str(signed)],
                             capture_output=True, timeout=60)
        if res.returncode != 0 or not plain.is_file():
            raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"{SUITE}/InRelease: bad signature: "
                              f"{res.stderr.decode(errors='replace')[-300:]}")
        return plain.read_text(encoding="utf-8", errors="replace")


def sources_index() -> Path:
    """The suite's ``main/source/Sources`` (decompressed, in the cache under its digest)."""
    release = _verified_release()
    section = release.split("\nSHA256:\n", 1)[-1]
    m = re.search(r"^ ([0-9a-f]{64}) +(\d+) main/source/Sources\.xz$", section, re.MULTILINE)
    if not m:
        raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"{SUITE}/InRelease names no main/source/Sources.xz")
    digest = f"sha256:{m.group(1)}"
    plain = cache.cache_root() / "debian" / f"{m.group(1)}.Sources"
    if plain.is_file():
        return plain
    packed = cache.cached_artifact(digest, "Sources.xz") or cache.store_artifact(
        fetch_bytes(f"{MIRROR}/dists/{SUITE}/main/source/Sources.xz", int(m.group(2)) + 1), digest, "Sources.xz",
        f"{SUITE} Sources.xz")
    plain.parent.mkdir(parents=True, exist_ok=True)
    tmp = plain.with_suffix(".tmp")
    with lzma.open(packed) as src, open(tmp, "wb") as dst:
        total = 0
        while block := src.read(1024 * 1024):
            total += len(block)
            if total > MAX_INDEX_BYTES:
                tmp.unlink(missing_ok=True)
                raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"{SUITE} Sources: over {MAX_INDEX_BYTES} bytes")
            dst.write(block)
    tmp.replace(plain)
    return plain


def paragraphs(index: Path) -> Iterator[dict[str, str]]:
    """The index's stanzas as {field: value} (continuation lines joined with newlines)."""
    para: dict[str, str] = {}
    key = None
    with open(index, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line:
                if para:
                    yield para
                para, key = {}, None
            elif line[0] in " \t" and key:
                para[key] += "\n" + line.strip()
            elif ":" in line:
                key, _, value = line.partition(":")
                para[key] = value.strip()
    if para:
        yield para


def _files(para: dict[str, str]) -> dict[str, tuple[str, int]]:
    out = {}
    for line in para.get("Checksums-Sha256", "").splitlines():
        parts = line.split()
        if len(parts) == 3 and re.fullmatch(r"[0-9a-f]{64}", parts[0]) and parts[1].isdigit() \
                and _FILE_RE.fullmatch(parts[2]):
            out[parts[2]] = (parts[0], int(parts[1]))
    return out


def _changelog_dates(text: str) -> tuple[str | None, str | None]:
    dates = []
    for m in _TRAILER_RE.finditer(text):
        try:
            dates.append(iso_utc(email.utils.parsedate_to_datetime(m.group("date").strip()).isoformat()))
        except (TypeError, ValueError):
            continue
    dates = [d for d in dates if d]
    return (dates[0], min(dates)) if dates else (None, None)


def _copyright_licence(text: str) -> str | None:
    for para in re.split(r"\n\s*\n", text):
        if re.search(r"^Files:\s*\*\s*$", para, re.MULTILINE):
            m = re.search(r"^License:[ \t]*(.+)$", para, re.MULTILINE)
            return m.group(1).strip()[:300] if m else None
    return None


def _debian_metadata(name: str, files: dict[str, tuple[str, int]], directory: str) -> tuple[str | None, ...]:
    """(released, first released, declared licence) from the .debian tarball; Nones without one."""
    deb = next((f for f in sorted(files) if f.endswith((".debian.tar.xz", ".debian.tar.gz"))), None)
    if deb is None:
        return None, None, None
    sha, size = files[deb]
    digest = f"sha256:{sha}"
    try:
        path = cache.cached_artifact(digest, deb) or cache.store_artifact(
            fetch_bytes(f"{MIRROR}/{directory}/{deb}", min(size + 1, MAX_ARTIFACT_BYTES)), digest, deb,
            f"debian:{name}")
    except SourceError as exc:
        if exc.reason is not Reason.SOURCE_NOT_FOUND:
            raise
        return None, None, None  # a mirror without it: no dates, no licence (the filters say so if asked)
    with tempfile.TemporaryDirectory(prefix="benchsmith-debian-") as tmp:
        root = extract_archive(path, Path(tmp) / "x")
        base = root if (root / "changelog").is_file() else root / "debian"
        read = lambda n: (base / n).read_text(encoding="utf-8", errors="replace")[:2_000_000] \
            if (base / n).is_file() and not (base / n).is_symlink() else ""  # noqa: E731
        released, first = _changelog_dates(read("changelog"))
        return released, first, _copyright_licence(read("copyright"))


def release_of(para: dict[str, str]) -> RegistryRelease:
    name, version, directory = para.get("Package", ""), para.get("Version", ""), para.get("Directory", "")
    if not (valid_name(RegistryKind.DEBIAN, name) and valid_version(RegistryKind.DEBIAN, version)
            and _DIRECTORY_RE.fullmatch(directory)):
        raise SourceError(Reason.REGISTRY_RESPONSE_INVALID, f"debian:{name[:100]}: a malformed Sources stanza")
    files = _files(para)
    upstream = re.sub(r"^\d+:", "", version).rsplit("-", 1)[0]
    artifact = next((f for f in sorted(files) if f.startswith(f"{name}_{upstream}.orig.tar.")), None) or next(
        (f for f in sorted(files) if f.startswith(f"{name}_") and re.search(r"\.tar\.(gz|xz|bz2)$", f)
         and ".debian." not in f and ".orig-" not in f), None)
    if artifact is None:
        raise SourceError(Reason.REGISTRY_NO_SOURCE_ARTIFACT, f"debian:{name}={version}: no source tarball")
    released, first, declared = _debian_metadata(name, files, directory)
    sha, size = files[artifact]
    homepage = para.get("Homepage", "").strip()[:300] or None
    return RegistryRelease(
        registry=str(RegistryKind.DEBIAN), name=name, version=version, released=released, first_released=first,
        license_declared=declared, license_spdx=normalise(declared), homepage=homepage,
        repository=(para.get("Vcs-Git", "").split()[:1] or [None])[0], artifact_url=f"{MIRROR}/{directory}/{artifact}",
        artifact_name=artifact, digest=f"sha256:{sha}", size=size)


def resolve(spec: RegistrySpec) -> RegistryRelease:
    index = sources_index()
    found = [p for p in paragraphs(index) if p.get("Package") == spec.name]
    if spec.version:
        found = [p for p in found if p.get("Version") == spec.version]
    if not found:
        what = f"{spec.name}={spec.version}" if spec.version else spec.name
        raise SourceError(Reason.SOURCE_NOT_FOUND, f"debian:{what}: not in {SUITE} main")
    return release_of(found[-1])




# Build dependencies that mark a source package as one of a language's (``benchsmith collect --from debian``).
BUILD_DEPENDS = {
    "python": ("dh-python", "dh-sequence-python3"),
    "java": ("default-jdk", "default-jdk-headless", "maven-debian-helper", "javahelper", "gradle-debian-helper"),
    "typescript": ("node-typescript",),
    "javascript": ("pkg-js-tools", "dh-sequence-nodejs"),
    "csharp": ("mono-devel", "cli-common-dev", "mono-mcs", "mono-xbuild"),
    "go": ("dh-golang", "dh-sequence-golang", "golang-go"),
}


def candidates(language: str, names: set[str] | None = None) -> list[dict[str, str]]:
    """The index's stanzas whose build dependencies name one of the language's (or, with ``names``, those
    packages), in the index's order (sorted by name)."""
    marks = set(BUILD_DEPENDS.get(language, ()))
    out = []
    for para in paragraphs(sources_index()):
        if names is not None:
            if para.get("Package") in names:
                out.append(para)
            continue
        deps = ",".join(para.get(k, "") for k in ("Build-Depends", "Build-Depends-Indep", "Build-Depends-Arch"))
        if marks & {d.split()[0].split(":")[0] for d in re.split(r"[,|]", deps) if d.split()}:
            out.append(para)
    return out
