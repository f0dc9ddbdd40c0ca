"""Cross-file retrieval: chunking, candidate order, BM25Okapi equality, Jaccard, settings, rendering, keys."""

from __future__ import annotations

import dataclasses

import json
import random

import numpy as np
import pytest

from benchsmith.builders.cceval import retrieval as R
from benchsmith.builders.cceval.tokenize_code import tokenize
from benchsmith.files import SourceFile
from benchsmith.builders.cceval.records import CompletionExample, ExampleMetadata

rank_bm25 = pytest.importorskip("rank_bm25", reason="rank-bm25 is in the retrieval extra")


def _example(file: str, prompt: str, groundtruth: str, task: str = "t/0") -> CompletionExample:
    md = ExampleMetadata(task_id=task, repository="repo", file=file, context_start_lineno=0,
                         groundtruth_start_lineno=prompt.count("\n"), right_context_start_lineno=prompt.count("\n") + 1)
    return CompletionExample(prompt=prompt, groundtruth=groundtruth, right_context="\n", metadata=md)


def _lines(prefix: str, n: int) -> str:
    return "\n".join(f"{prefix}_{i} = compute_{prefix}({i})" for i in range(n)) + "\n"


def test_chunks_are_windows_of_non_empty_lines_and_tokenless_windows_are_dropped():
    text = "a = 1\n\n   \nb = 2\nc = 3\n\n"
    assert R.chunk_text(text, window=2, step=2) == ["a = 1\nb = 2", "c = 3"]
    # sliding windows overlap and shorten at the end, as CrossCodeEval's range(0, n, stride)
    assert R.chunk_text(text, window=2, step=1) == ["a = 1\nb = 2", "b = 2\nc = 3", "c = 3"]
    # a window with no \w token ("}" lines) is not a chunk
    assert R.chunk_text("x = 1\n}\n};\n", window=1, step=1) == ["x = 1"]


def test_file_distance_counts_directories_between_files():
    assert R.file_distance("a.py", "b.py") == 0
    assert R.file_distance("pkg/a.py", "pkg/b.py") == 0
    assert R.file_distance("pkg/sub/a.py", "pkg/b.py") == 1
    assert R.file_distance("x/a.py", "y/b.py") == 2
    assert R.file_distance("x/y/a.py", "x/z/w/b.py") == 3


def test_candidates_exclude_current_file_and_come_nearest_first_with_cap():
    files = [SourceFile("pkg/cur.py", _lines("c", 30)), SourceFile("pkg/near.py", _lines("n", 25)),
             SourceFile("far/away/f.py", _lines("f", 30)), SourceFile("pkg/sub/mid.py", _lines("m", 12))]
    repo = R.RepoChunks(files, window=10, step=10)
    names = lambda ids: [repo.chunks[i].filename for i in ids]  # noqa: E731
    cand = repo.candidates("pkg/cur.py", None)
    assert "pkg/cur.py" not in names(cand)
    assert names(cand) == ["pkg/near.py"] * 3 + ["pkg/sub/mid.py"] * 2 + ["far/away/f.py"] * 3
    assert names(repo.candidates("pkg/cur.py", 4)) == ["pkg/near.py"] * 3 + ["pkg/sub/mid.py"]


def _corpus(seed: int, n_docs: int, vocab: int) -> list[list[str]]:
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab)]
    docs = []
    for _ in range(n_docs):
        # a few very common words push some idfs negative, exercising BM25Okapi's epsilon floor
        doc = [rng.choice(words[:3]) for _ in range(rng.randint(1, 4))]
        doc += [rng.choice(words) for _ in range(rng.randint(1, 30))]
        docs.append(doc)
    return docs


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bm25_matches_rank_bm25_on_every_candidate_subset(seed):
    docs = _corpus(seed, 120, 60)
    index = R.BM25Index(docs)
    rng = np.random.default_rng(seed)
    for _ in range(5):
        cand = np.sort(rng.choice(len(docs), size=int(rng.integers(2, len(docs))), replace=False))
        sub = index.prepare(cand)
        queries = [docs[int(i)][:12] + ["never_seen"] for i in rng.choice(len(docs), 4)] + [["w0", "w0", "w1"]]
        ours = sub.score(queries)
        ref = rank_bm25.BM25Okapi([docs[int(i)] for i in cand])
        assert ref.average_idf != 0
        assert any(v == ref.epsilon * ref.average_idf for v in ref.idf.values()), "floor not exercised"
        for q, row in zip(queries, ours):
            np.testing.assert_allclose(row, ref.get_scores(q), rtol=1e-12, atol=1e-12)


def test_jaccard_is_token_set_overlap():
    docs = [["a", "b", "b"], ["c"], ["a", "c", "d"]]
    sub = R.JaccardIndex(docs).prepare(np.arange(3))
    got = sub.score([["a", "b", "zz"], ["c", "c"]])
    np.testing.assert_allclose(got, [[2 / 3, 0.0, 1 / 5], [0.0, 1.0, 1 / 3]])


def test_queries_use_last_non_empty_lines():
    ex = _example("a.py", "l1\n\nl2\nl3\n    ", "g1\n\ng2")
    assert R.build_query(ex, R.QuerySetting.RG1, 2) == "l2\nl3"
    assert R.build_query(ex, R.QuerySetting.ORACLE, 3) == "l3\ng1\ng2"


def test_render_context_matches_crosscodeeval_text():
    chunks = [R.RetrievedChunk("def f():\n    return 1", "pkg/a.py", 3.5), R.RetrievedChunk("\nx = 2\n", "b.py", 1.0)]
    expected = (
        "# Here are some relevant code fragments from other files of the repo:\n\n"
        "# the below code fragment can be found in:\n# pkg/a.py\n# def f():\n#     return 1\n\n"
        "# the below code fragment can be found in:\n# b.py\n# x = 2\n\n"
    )
    assert R.render_context(chunks, "#") == expected
    assert R.render_context(chunks, "//").startswith("// Here are some relevant code fragments")
    assert R.render_context([], "#") == ""


def _repo():
    helper = (
        "def parse_config(path):\n    with open(path) as fh:\n        return load_settings(fh.read())\n"
        + _lines("helper", 9)
        + "def render_page(template, values):\n    return template.format_map(values)\n"
        + _lines("page", 9)
    )
    files = [
        SourceFile("app/main.py", "from app.helpers import parse_config\n" + _lines("main", 12)),
        SourceFile("app/helpers.py", helper),
        SourceFile("app/other.py", _lines("other", 20)),
    ]
    prompt = "from app.helpers import parse_config\n" + _lines("main", 12) + "settings = "
    ex = _example("app/main.py", prompt, "parse_config(path)", task="repo/0")
    return files, ex


def test_retrieve_for_repo_keys_fields_and_oracle_finds_the_definition():
    files, ex = _repo()
    cfg = R.RetrievalConfig(retrievers=("bm25", "jaccard"), top_k=2)
    out = R.retrieve_for_repo([ex], files, "python", "#", cfg)
    assert list(out) == ["line_completion_rg1_bm25", "line_completion_oracle_bm25",
                         "line_completion_rg1_jaccard_sim", "line_completion_oracle_jaccard_sim"]
    for key, examples in out.items():
        (got,) = examples
        assert got.prompt == ex.prompt and ex.crossfile_context is None
        assert dataclasses.replace(got.metadata, retrieved_lines=None) == ex.metadata
        # each chunk's lines in its file: what tells whether the definition was retrieved
        for chunk, (first, last) in zip(got.crossfile_context.list, got.metadata.retrieved_lines):
            file_lines = next(f for f in files if f.path == chunk.filename).text.split("\n")
            assert chunk.retrieved_chunk.split("\n")[0] == file_lines[first]
            assert chunk.retrieved_chunk.split("\n")[-1] == file_lines[last]
        ctx = got.crossfile_context
        assert len(ctx.list) == 2
        assert all(c.filename != "app/main.py" for c in ctx.list), key
        assert ctx.text == R.render_context(ctx.list, "#")
        assert all(isinstance(c.score, float) for c in ctx.list)
        assert ctx.list[0].score >= ctx.list[1].score
        record = json.loads(json.dumps(got.to_dict()))
        assert set(record["crossfile_context"]) == {"text", "list"}
        assert set(record["crossfile_context"]["list"][0]) == {"retrieved_chunk", "filename", "score"}
    oracle_top = out["line_completion_oracle_bm25"][0].crossfile_context.list[0]
    assert "def parse_config(path):" in oracle_top.retrieved_chunk and oracle_top.filename == "app/helpers.py"


def test_next_chunk_option_returns_the_following_chunk_for_rg1_only():
    files, ex = _repo()
    plain = R.retrieve_for_repo([ex], files, "python", "#", R.RetrievalConfig(top_k=3))
    nxt = R.retrieve_for_repo([ex], files, "python", "#", R.RetrievalConfig(top_k=3, return_next_chunk=True))
    repo = R.RepoChunks(files, 10, 10)
    by_text = {c.text: i for i, c in enumerate(repo.chunks)}
    hits = plain["line_completion_rg1_bm25"][0].crossfile_context.list
    got = nxt["line_completion_rg1_bm25"][0].crossfile_context.list
    expected = []
    for h in hits + [None]:
        if h is None:
            break
        follow = repo.chunks[repo.next_chunk(by_text[h.retrieved_chunk])].text
        if follow not in [e[0] for e in expected]:
            expected.append((follow, h.score))
    assert [(c.retrieved_chunk, c.score) for c in got][: len(expected)] == expected[: len(got)]
    assert got != hits
    # the oracle setting never uses the next chunk (CrossCodeEval forbids it with a groundtruth query)
    assert nxt["line_completion_oracle_bm25"] == plain["line_completion_oracle_bm25"]


def test_no_other_files_gives_empty_context_not_a_crash():
    files, ex = _repo()
    out = R.retrieve_for_repo([ex], [f for f in files if f.path == "app/main.py"], "python", "#", R.RetrievalConfig())
    ctx = out["line_completion_rg1_bm25"][0].crossfile_context
    assert ctx.text == "" and ctx.list == []


def test_ties_go_to_the_earlier_candidate_and_output_is_deterministic():
    same = "value = shared_token + other_token\n" * 10
    files = [SourceFile("a.py", "x = 1\n"), SourceFile("b.py", same), SourceFile("c.py", same)]
    ex = _example("a.py", "y = shared_token\n", "other_token")
    cfg = R.RetrievalConfig(top_k=2)
    first = R.retrieve_for_repo([ex], files, "python", "#", cfg)
    second = R.retrieve_for_repo([ex], files, "python", "#", cfg)
    assert [c.filename for c in first["line_completion_rg1_bm25"][0].crossfile_context.list] == ["b.py", "c.py"]
    assert [e.to_dict() for e in first["line_completion_rg1_bm25"]] == [e.to_dict() for e in second["line_completion_rg1_bm25"]]


def test_config_errors_say_what_to_do():
    with pytest.raises(ValueError, match="unknown retriever 'tfidf'"):
        R.RetrievalConfig(retrievers=("tfidf",))
    with pytest.raises(ValueError, match="dense_model"):
        R.RetrievalConfig(retrievers=("dense",))
    with pytest.raises(ValueError, match="unknown retrieval setting"):
        R.RetrievalConfig(settings=("rg2",))
    with pytest.raises(ValueError, match="window"):
        R.RetrievalConfig(window=0)
    assert R.RetrievalConfig(retrievers=("jaccard_sim",)).retriever_kinds == [R.Retriever.JACCARD]


def test_dense_key_names_follow_crosscodeeval():
    assert R.output_key(R.QuerySetting.RG1, R.Retriever.DENSE, "/models/unixcoder-base") == \
        "line_completion_rg1_unixcoder_cosine_sim"
    assert R.output_key(R.QuerySetting.ORACLE, R.Retriever.DENSE, "/x/all-MiniLM-L6-v2/") == \
        "line_completion_oracle_all-minilm-l6-v2_cosine_sim"


def test_tokenizer_is_the_one_used_for_chunks():
    files, ex = _repo()
    repo = R.RepoChunks(files, 10, 10)
    assert all(repo.tokens[i] == tokenize(c.text) for i, c in enumerate(repo.chunks))
