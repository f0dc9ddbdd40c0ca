"""``benchsmith collect`` without the network: real tarballs made here stand for the registry's artifacts (served
by a patched download and resolve), judged on the paper's criteria with each candidate's recorded reason."""

from __future__ import annotations

import hashlib
import json
import tarfile

import pytest

from benchsmith.cli import main
from benchsmith.registries.metadata import RegistryRelease

MIT_TEXT = "Permission is hereby granted, free of charge, to any person obtaining a copy of this software"


def _package(tmp_path, name: str, files: dict[str, str]) -> bytes:
    root = tmp_path / "src" / name
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    out = tmp_path / f"{name}.tar.gz"
    with tarfile.open(out, "w:gz") as tf:
        tf.add(root, arcname=name)
    return out.read_bytes()


@pytest.fixture
def registry(tmp_path, monkeypatch):
    """name -> (artifact bytes, release fields); resolve and download answer from it."""
    from benchsmith import registries
    from benchsmith.registries import npm, pypi

    monkeypatch.setenv("BENCHSMITH_CACHE", str(tmp_path / "cache"))
    served: dict[str, tuple[bytes, dict]] = {}
    by_url: dict[str, bytes] = {}

    def resolve(spec):
        data, fields = served[spec.name]
        url = f"https://files.pythonhosted.org/{spec.name}.tar.gz"
        by_url[url] = data
        base = dict(registry=str(spec.kind), name=spec.name, version="1.0.0", released="2026-01-02T00:00:00Z",
                    first_released="2020-01-01T00:00:00Z", license_declared="MIT", license_spdx="MIT",
                    homepage=None, repository=None, artifact_url=url, artifact_name=f"{spec.name}.tar.gz",
                    digest=f"sha256:{hashlib.sha256(data).hexdigest()}")
        return RegistryRelease(**{**base, **fields})

    monkeypatch.setattr(pypi, "resolve", resolve)
    monkeypatch.setattr(npm, "resolve", resolve)
    monkeypatch.setattr(registries, "fetch_bytes", lambda url, limit: by_url[url])
    return served


def _py_files(n: int) -> dict[str, str]:
    return {f"pkg/m{i}.py": f"from pkg.m0 import X{i}\n" for i in range(n)} | {"LICENSE": MIT_TEXT}


def test_collect_keeps_what_meets_the_criteria_and_records_why_not(tmp_path, registry):
    registry["fresh"] = (_package(tmp_path, "fresh", _py_files(12)), {})
    registry["old"] = (_package(tmp_path, "old", _py_files(12)), {"released": "2024-01-01T00:00:00Z"})
    registry["gpl"] = (_package(tmp_path, "gpl", _py_files(12)), {"license_spdx": "GPL-3.0-only"})
    registry["tiny"] = (_package(tmp_path, "tiny", _py_files(3)), {})
    registry["mostly-js"] = (_package(tmp_path, "mostly-js", _py_files(12) | {
        f"web/w{i}.js": "x\n" for i in range(30)}), {})
    names = tmp_path / "names.txt"
    names.write_text("fresh\nold  # a comment\ngpl\ntiny\nmostly-js\nfresh\n")
    repos = tmp_path / "out" / "repos.txt"
    repos.parent.mkdir()
    argv = ["collect", "--lang", "python", "--from", "pypi", "--names", str(names), "--released-after",
            "2025-06-01", "--permissive-license", "--output", str(repos), "-q"]
    assert main(argv) == 0
    assert repos.read_text() == "pypi:fresh==1.0.0\n"
    rows = [json.loads(line) for line in (repos.parent / "collection.jsonl").read_text().splitlines()]
    assert [(r["candidate"], r["reason"]) for r in rows] == [
        ("pypi:fresh", None), ("pypi:old", "released_before"), ("pypi:gpl", "license_not_permissive"),
        ("pypi:tiny", "too_few_files"), ("pypi:mostly-js", "language_share_too_low")]
    assert rows[0]["files"] == 12 and rows[0]["release"]["released"] == "2026-01-02T00:00:00Z"
    assert rows[1]["files"] is None  # judged on its dates alone: nothing downloaded
    first = (repos.read_bytes(), (repos.parent / "collection.jsonl").read_bytes())
    assert main(argv) == 0  # the same candidates, the same bytes
    assert (repos.read_bytes(), (repos.parent / "collection.jsonl").read_bytes()) == first


def test_typescript_declarations_do_not_count_and_unreachable_is_recorded(tmp_path, registry, monkeypatch):
    from benchsmith.archives import SourceError
    from benchsmith.records import Reason
    from benchsmith.registries import npm

    files = {f"dist/t{i}.d.ts": "export declare const x: number;\n" for i in range(12)}
    files |= {f"src/s{i}.ts": "export const y = 1;\n" for i in range(3)}
    registry["decl"] = (_package(tmp_path, "decl", files), {})
    names = tmp_path / "names.txt"
    names.write_text("decl\n")
    repos = tmp_path / "repos.txt"
    assert main(["collect", "--lang", "typescript", "--from", "npm", "--names", str(names), "--output", str(repos),
                 "-q"]) == 0
    row = json.loads((tmp_path / "collection.jsonl").read_text())
    assert row["reason"] == "too_few_files" and row["declaration_files"] == 12 and "3 source files" in row["detail"]

    def down(spec):
        raise SourceError(Reason.REGISTRY_UNREACHABLE, "https://registry.npmjs.org/decl: timed out")

    monkeypatch.setattr(npm, "resolve", down)
    assert main(["collect", "--lang", "typescript", "--from", "npm", "--names", str(names), "--output", str(repos),
                 "-q"]) == 0
    row = json.loads((tmp_path / "collection.jsonl").read_text())
    assert row["reason"] == "registry_unreachable" and repos.read_text() == ""
