"""A fresh split from the real registries, end to end: ``benchsmith collect`` over real PyPI packages with a
cut-off, then ``build-ccEval`` on the repos file it wrote; the card's dates and licences are the registry's, a
rerun downloads nothing and gives byte-identical files.  Every test skips, naming the reason, when the registry
cannot be reached from here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchsmith.archives import SourceError
from benchsmith.cli import main
from benchsmith.records import Reason

# tabulate 0.10.0 (released 2026, 10 Python files, MIT) passes a 2025-06-01 cut-off; mdurl 0.1.2 (2022) does not.
FRESH, STALE = "tabulate==0.10.0", "mdurl==0.1.2"
CUT_OFF = "2025-06-01"


def _reachable(url: str) -> None:
    from benchsmith.registries.http import fetch_json

    try:
        fetch_json(url)
    except SourceError as exc:
        if exc.reason in (Reason.REGISTRY_UNREACHABLE, Reason.SOURCE_NOT_FOUND):
            pytest.skip(f"registry not reachable from here: {exc.detail}")
        raise


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHSMITH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_pypi_and_npm_pins_resolve_verify_and_extract(cache, tmp_path):
    from benchsmith.records import RepoSpec
    from benchsmith.sources import materialise, source_identity

    _reachable("https://pypi.org/pypi/tabulate/json")
    _reachable("https://registry.npmjs.org/ms")
    for text, top in (("pypi:" + FRESH, "tabulate-0.10.0"), ("npm:ms@2.1.3", "package")):
        co = materialise(RepoSpec(text), tmp_path / text.replace(":", "_"))
        assert co.kind == "registry" and co.path.endswith(top) and co.release.license_spdx == "MIT"
        assert co.created and co.release.released and co.created <= co.release.released
        assert source_identity(RepoSpec(text)) == f"registry:{text}:{co.release.digest}"
    # unpinned: the newest release is pinned, and the pin is what the identity and the repo id carry
    co = materialise(RepoSpec("npm:ms"), tmp_path / "unpinned")
    assert co.release.version and source_identity(RepoSpec("npm:ms")).startswith(f"registry:npm:ms@{co.release.version}:")


def test_a_tampered_artifact_from_the_real_registry_is_refused(cache, tmp_path):
    """The real download checked against a digest it does not have: the registry's bytes are refused, not used."""
    import dataclasses

    from benchsmith import registries
    from benchsmith.registries.metadata import RegistrySpec

    _reachable("https://pypi.org/pypi/tabulate/json")
    rec = registries.resolve(RegistrySpec.parse("pypi:" + FRESH))
    forged = dataclasses.replace(rec, digest="sha256:" + "0" * 64)
    with pytest.raises(SourceError) as exc:
        registries.fetch_artifact(forged)
    assert exc.value.reason is Reason.DIGEST_MISMATCH
    assert not any((cache / "artifacts").rglob("0" * 64 + "*"))


def test_fresh_split_end_to_end(cache, tmp_path, monkeypatch):
    _reachable("https://pypi.org/pypi/tabulate/json")
    names = tmp_path / "names.txt"
    names.write_text(f"{FRESH}\n{STALE}\n# a comment\npypi:no_such_package_benchsmith_zz9\n")
    repos = tmp_path / "repos.txt"
    assert main(["collect", "--lang", "python", "--from", "pypi", "--names", str(names), "--released-after", CUT_OFF,
                 "--permissive-license", "--output", str(repos), "-q"]) == 0
    assert repos.read_text() == f"pypi:{FRESH}\n"
    records = [json.loads(line) for line in (tmp_path / "collection.jsonl").read_text().splitlines()]
    assert [r["kept"] for r in records] == [True, False, False]
    assert records[1]["reason"] == "released_before" and records[2]["reason"] == "source_not_found"
    release = records[0]["release"]
    assert release["released"] >= CUT_OFF and release["license_spdx"] == "MIT"

    out = tmp_path / "out"
    build = ["build", "cceval", "--lang", "python", "--repos-file", str(repos), "--output", str(out),
             "--released-after", CUT_OFF, "--permissive-license", "--retrievers", "none", "-q", "--workers", "1"]
    assert main(build) == 0
    stats = json.loads((out / "python" / "stats.json").read_text())
    row = stats["per_repository"][0]
    assert row["provenance"] == release and row["status"] == "ok"
    assert stats["cut_off"] == {"created_after": None, "released_after": CUT_OFF}
    card = (out / "README.md").read_text()
    assert f"| pypi:tabulate | 0.10.0 | {release['released'][:10]} | {release['first_released'][:10]} | MIT |" in card
    cost = json.loads((out / "python" / "cost.json").read_text())["total"]
    assert cost["toolchain_cpu_seconds"] > 0 and cost["examples"] == stats["examples"]
    assert "## Construction cost" in card

    # the rerun: no request to any registry, every shard resumed, the same bytes
    from benchsmith import registries
    from benchsmith.registries import http, pypi

    monkeypatch.setattr(registries, "fetch_bytes", lambda *a, **k: pytest.fail("downloaded again"))
    monkeypatch.setattr(http, "fetch_bytes", lambda *a, **k: pytest.fail("requested again"))
    monkeypatch.setattr(pypi, "fetch_json", lambda *a, **k: pytest.fail("requested again"))
    before = {p.name: p.read_bytes() for p in (out / "python").glob("*.json*")}
    assert main(build) == 0
    after = {p.name: p.read_bytes() for p in (out / "python").glob("*.json*")}
    assert after == before
    # a fresh build of the same repos file elsewhere (from the cache, still no request): the same split and stats;
    # only the measured cost differs
    other = tmp_path / "other"
    assert main([*build[:7], str(other), *build[8:], "--no-card"]) == 0
    for name in ("line_completion.jsonl", "excluded.jsonl", "stats.json"):
        assert (other / "python" / name).read_bytes() == before[name], name


def test_debian_source_resolves_through_the_signed_index(cache, tmp_path):
    """InRelease (gpgv, Debian's keyring) -> Sources.xz -> the .orig and .debian tarballs, every step digest-checked;
    the issue's example source, with its #SUBDIR."""
    import shutil

    from benchsmith.records import RepoSpec
    from benchsmith.registries import debian
    from benchsmith.sources import materialise

    if shutil.which("gpgv") is None or not debian.KEYRING.is_file():
        pytest.skip(f"gpgv or {debian.KEYRING} is not installed: Debian's signature cannot be checked here")
    try:
        debian.fetch_bytes(f"{debian.MIRROR}/dists/{debian.SUITE}/InRelease", 4 * 1024 * 1024)
    except SourceError as exc:
        pytest.skip(f"Debian mirror not reachable from here: {exc.detail}")
    try:
        co = materialise(RepoSpec("debian:thrift=0.17.0-2#lib/netstd/Thrift"), tmp_path / "w")
    except SourceError as exc:
        if exc.reason is Reason.SOURCE_NOT_FOUND and "HTTP 404" in exc.detail:
            pytest.skip(f"this mirror does not carry thrift's tarballs: {exc.detail}")
        raise
    rec = co.release
    assert co.path.endswith("thrift-0.17.0/lib/netstd/Thrift") and any(Path(co.path).rglob("*.cs"))
    assert (rec.released[:10], rec.first_released[:10], rec.license_spdx) == ("2022-09-28", "2015-03-21",
                                                                                "Apache-2.0")
    assert rec.digest == "sha256:f5888bcd3b8de40c2c2ab86896867ad9b18510deb412cba3e5da76fb4c604c29"
