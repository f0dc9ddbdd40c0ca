"""A registry source on disk: resolve the pin, fetch (or reuse) the digest-checked artifact, extract it with the
hardened archive code, and step into ``#SUBDIR`` when one is given."""

from __future__ import annotations

from pathlib import Path

from benchsmith.archives import ArchiveSkip, SourceError, extract_archive
from benchsmith.files import printable_name
from benchsmith.records import Checkout, Exclusion, Reason, RepoSpec, Stage
from benchsmith.registries import fetch_artifact, resolve
from benchsmith.registries.metadata import RegistrySpec


def materialise_registry(spec: RepoSpec, reg: RegistrySpec, name: str, workdir: Path) -> Checkout:
    rec = resolve(reg)
    archive = fetch_artifact(rec)
    skipped: list[ArchiveSkip] = []
    root = extract_archive(archive, workdir / "extract", skipped=skipped)
    exclusions = [Exclusion(f"{name}/{printable_name(s.member)}" if s.member else name, Stage.SOURCE, s.reason,
                            s.detail, name) for s in skipped]
    if reg.subdir:
        # checked part by part: no link is followed out of the extracted tree (the extractor writes none anyway)
        path = root
        for part in Path(reg.subdir).parts:
            path = path / part
            if path.is_symlink() or not path.is_dir():
                raise SourceError(Reason.SOURCE_NOT_FOUND, f"{rec.source(reg.subdir)}: no folder {reg.subdir!r} "
                                  f"in {rec.artifact_name}")
        root = path
    return Checkout(spec=spec, name=name, path=str(root), kind="registry", created=rec.first_released,
                    license=rec.license_spdx, exclusions=exclusions, release=rec)
