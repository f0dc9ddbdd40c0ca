"""Retrieval on a real repository (click 8.1.7 from PyPI): BM25 rankings equal rank_bm25.BM25Okapi rebuilt per
query, as CrossCodeEval's prompt builder does, and the oracle query finds definitions more often than rg1."""

from __future__ import annotations

import tarfile

import numpy as np
import pytest

from benchsmith.builders.cceval import retrieval as R
from benchsmith.builders.cceval.retrieval_check import DefinitionHits, python_import_probes
from benchsmith.builders.cceval.tokenize_code import tokenize
from benchsmith.files import SourceFile

rank_bm25 = pytest.importorskip("rank_bm25", reason="rank-bm25 is in the retrieval extra")


@pytest.fixture(scope="module")
def click_files(download):
    archive = download("pypi", "click==8.1.7", "click-8.1.7.tar.gz")
    files = []
    with tarfile.open(archive) as tf:  # read members as data; nothing is extracted or run
        for m in tf.getmembers():
            if m.isfile() and m.name.endswith(".py"):
                files.append(SourceFile(m.name.split("/", 1)[1], tf.extractfile(m).read().decode("utf-8")))
    assert len(files) > 50
    return files


def same_top_k(ours: np.ndarray, ref: np.ndarray, k: int) -> bool:
    """Identical top-k lists, where candidates with equal reference scores may swap places."""
    a = np.argsort(-ours, kind="stable")[:k]
    b = np.argsort(-ref, kind="stable")[:k]
    if not np.allclose(ref[a], ref[b], rtol=1e-9, atol=1e-9):
        return False
    return all(x == y or abs(ref[x] - ref[y]) <= 1e-9 for x, y in zip(a, b))


def test_bm25_top5_equals_bm25okapi_rebuilt_per_query(click_files):
    probes = python_import_probes(click_files, "click", per_file=None)
    assert len(probes) >= 150
    repo = R.RepoChunks(click_files, 10, 10)
    assert len(repo) > 1000  # more chunks than CrossCodeEval's cap: the nearest-files-first cut matters
    index = R.BM25Index(repo.tokens)
    checked = 0
    for setting in (R.QuerySetting.RG1, R.QuerySetting.ORACLE):
        for probe in probes[:100]:
            ex = probe.example
            cand = repo.candidates(ex.metadata.file, 1000)
            query = tokenize(R.build_query(ex, setting, 10))
            ours = index.prepare(cand).score([query])[0]
            ref = rank_bm25.BM25Okapi([repo.tokens[i] for i in cand]).get_scores(query)
            np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-9)
            assert same_top_k(ours, ref, 5), ex.metadata.task_id
            checked += 1
    assert checked == 200
    # and the public entry point returns exactly those chunks, in that order
    out = R.retrieve_for_repo([p.example for p in probes[:20]], click_files, "python", "#", R.RetrievalConfig())
    for probe, got in zip(probes[:20], out["line_completion_rg1_bm25"]):
        cand = repo.candidates(probe.example.metadata.file, 1000)
        query = tokenize(R.build_query(probe.example, R.QuerySetting.RG1, 10))
        ref = rank_bm25.BM25Okapi([repo.tokens[i] for i in cand]).get_scores(query)
        top = np.argsort(-ref, kind="stable")[:5]
        assert [c.score for c in got.crossfile_context.list] == pytest.approx(list(ref[top]), rel=1e-9)
        assert {c.filename for c in got.crossfile_context.list} <= {repo.chunks[int(cand[i])].filename for i in
                                                                    np.flatnonzero(ref >= ref[top[-1]] - 1e-9)}


def test_oracle_query_finds_the_definition_more_often_than_rg1(click_files):
    probes = python_import_probes(click_files, "click", per_file=None)
    out = R.retrieve_for_repo([p.example for p in probes], click_files, "python", "#", R.RetrievalConfig())
    hits = DefinitionHits(click_files)
    rate = {(key, k): sum(hits.hit(e.crossfile_context, p, k) for e, p in zip(exs, probes)) / len(probes)
            for key, exs in out.items() for k in (1, 5)}
    for k in (1, 5):
        assert rate[("line_completion_oracle_bm25", k)] > rate[("line_completion_rg1_bm25", k)], rate
    # with the groundtruth line alone as query, the definition is in the top 5 for a large share of probes
    one_line = R.retrieve_for_repo([p.example for p in probes], click_files, "python", "#",
                                   R.RetrievalConfig(settings=("oracle",), query_lines=1))
    top5 = sum(hits.hit(e.crossfile_context, p, 5) for e, p in zip(one_line["line_completion_oracle_bm25"], probes))
    assert top5 / len(probes) > 0.3
