"""End to end on real code not written by us: the requests sdist from PyPI."""

from __future__ import annotations

import json

import pytest

from benchsmith.cli import main
from benchsmith.sources import extract_archive
from tests.invariants import check_split

SDIST = ("requests==2.32.3", "requests-2.32.3.tar.gz")


@pytest.fixture(scope="module")
def requests_sdist(download):
    return download("pypi", *SDIST)


def _build(archive, out, *extra):
    rc = main(["build", "cceval", "--lang", "python", "--repo", str(archive), "--output", str(out),
               "--retrievers", "none", "--no-card", "-q", *extra])
    assert rc == 0


def test_real_sdist_examples_hold_invariants(requests_sdist, tmp_path):
    out = tmp_path / "a"
    _build(requests_sdist, out, "--workers", "1")
    root = extract_archive(requests_sdist, tmp_path / "src")
    examples = check_split(out / "python" / "line_completion.jsonl", {"requests-2.32.3": root})
    assert len(examples) >= 50, "a real package with many intra-project imports yields many references"
    diagnostics = {e["metadata"]["diagnostic"] for e in examples}
    assert "E1101" in diagnostics
    # Groundtruths respect the 3-30 token bounds and never leak verbatim from the prompt.
    for e in examples:
        assert 3 <= e["metadata"]["groundtruth_tokens"] <= 30
        assert e["groundtruth"].strip() not in e["prompt"]
    stats = json.loads((out / "python" / "stats.json").read_text())
    assert stats["examples"] == len(examples)
    excluded = [json.loads(l) for l in (out / "python" / "excluded.jsonl").read_text().splitlines()]
    assert sum(stats["dropped"].values()) == len(excluded)

    # Same inputs -> byte-identical files, whatever the executor's worker count.
    out2 = tmp_path / "b"
    _build(requests_sdist, out2, "--workers", "2")
    for name in ("line_completion.jsonl", "excluded.jsonl", "stats.json"):
        assert (out / "python" / name).read_bytes() == (out2 / "python" / name).read_bytes(), name
