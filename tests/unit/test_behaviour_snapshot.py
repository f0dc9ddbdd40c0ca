"""scripts/behaviour_snapshot.py: the manifest and comparison logic (the real builds it drives are not run here;
they are the integration tests' and the script's own job)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "behaviour_snapshot.py"


@pytest.fixture(scope="module")
def bs():
    spec = importlib.util.spec_from_file_location("behaviour_snapshot", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["behaviour_snapshot"] = mod  # dataclasses look their module up by name
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop("behaviour_snapshot", None)


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _manifest(bs, root: Path, files: dict[str, str], inputs: dict[str, str] | None = None) -> dict:
    _tree(root, {f"out/{k}": v for k, v in files.items()})
    _tree(root, {f"inputs/{k}": v for k, v in (inputs or {"repo.tar.gz": "same"}).items()})
    return {"format": bs.MANIFEST_FORMAT, "commands": [], "inputs": bs.hash_tree(root, "inputs", ()),
            "files": bs.hash_tree(root, "out")}


def test_hash_tree_is_sorted_relative_and_content_addressed(bs, tmp_path):
    a = _tree(tmp_path / "a", {"out/z.jsonl": "1\n", "out/b/x.json": "{}", "out/.shards/s/DONE": "d"})
    b = _tree(tmp_path / "b", {"out/b/x.json": "{}", "out/.shards/s/DONE": "d", "out/z.jsonl": "1\n"})
    ha, hb = bs.hash_tree(a, "out"), bs.hash_tree(b, "out")
    assert list(ha) == sorted(ha) == ["out/.shards/s/DONE", "out/b/x.json", "out/z.jsonl"]
    assert ha == hb  # creation order and location do not matter
    assert ha["out/z.jsonl"]["size"] == 2
    (b / "out/z.jsonl").write_text("2\n")
    assert bs.hash_tree(b, "out")["out/z.jsonl"]["sha256"] != ha["out/z.jsonl"]["sha256"]
    assert bs.hash_tree(a, "missing") == {}


def test_symlinks_are_recorded_by_target_and_not_followed(bs, tmp_path):
    root = _tree(tmp_path, {"out/real/f.txt": "x", "elsewhere/secret.txt": "s"})
    os.symlink("../elsewhere", root / "out" / "dirlink")
    os.symlink("real/f.txt", root / "out" / "filelink")
    h = bs.hash_tree(root, "out")
    assert h["out/dirlink"]["symlink"] == "../elsewhere"
    assert h["out/filelink"]["symlink"] == "real/f.txt"
    assert not any("secret" in k for k in h)


def test_masks_remove_only_the_named_run_dependent_keys(bs, tmp_path):
    mask = bs.Mask("out/*/stats.json", ("seconds",), "wall time")
    row = {"a": 1, "inner": {"seconds": 1.5, "b": 2}}
    one = _tree(tmp_path / "1", {"out/x/stats.json": json.dumps({**row, "seconds": 3.0}),
                                 "out/x/log.json": json.dumps({"seconds": 3.0})})
    two = _tree(tmp_path / "2", {"out/x/stats.json": json.dumps({"seconds": 9.0, **row, "inner": {"b": 2,
                                                                                                   "seconds": 7}}),
                                 "out/x/log.json": json.dumps({"seconds": 9.0})})
    h1, h2 = bs.hash_tree(one, "out", (mask,)), bs.hash_tree(two, "out", (mask,))
    assert h1["out/x/stats.json"]["sha256"] == h2["out/x/stats.json"]["sha256"]
    assert h1["out/x/stats.json"]["masked"] == ["seconds"]
    assert h1["out/x/log.json"]["sha256"] != h2["out/x/log.json"]["sha256"]  # not matched by the pattern
    (two / "out/x/stats.json").write_text(json.dumps({**row, "a": 2, "seconds": 1}))
    assert bs.hash_tree(two, "out", (mask,))["out/x/stats.json"]["sha256"] != h1["out/x/stats.json"]["sha256"]


def test_masks_apply_per_line_of_jsonl(bs, tmp_path):
    mask = bs.Mask("out/*.jsonl", ("t",), "timestamps")
    one = _tree(tmp_path / "1", {"out/r.jsonl": '{"k": 1, "t": 5}\n{"k": 2, "t": 6}\n'})
    two = _tree(tmp_path / "2", {"out/r.jsonl": '{"t": 0, "k": 1}\n{"k": 2, "t": 0}\n'})
    assert bs.hash_tree(one, "out", (mask,)) == bs.hash_tree(two, "out", (mask,))
    _tree(two, {"out/r.jsonl": '{"k": 2, "t": 0}\n{"k": 1, "t": 0}\n'})  # order is behaviour: never masked
    assert bs.hash_tree(one, "out", (mask,)) != bs.hash_tree(two, "out", (mask,))


def test_every_declared_mask_says_why(bs):
    for mask in bs.MASKS:
        assert mask.pattern and mask.keys and mask.why.strip(), mask


def test_compare_classifies_differs_missing_extra_and_ignored(bs, tmp_path):
    a = _manifest(bs, tmp_path / "a", {"same.jsonl": "1", "changed.jsonl": "a", "gone.json": "{}",
                                       "README.md": "card a"})
    b = _manifest(bs, tmp_path / "b", {"same.jsonl": "1", "changed.jsonl": "b", "new.json": "{}",
                                       "README.md": "card b"}, inputs={"repo.tar.gz": "other"})
    rows = bs.compare_manifests(a, b, ignore=["out/README.md"])
    got = [(r.status, r.path) for r in rows]
    assert got == [("differs", "inputs/repo.tar.gz"),  # inputs first: they explain the rest
                   ("ignored", "out/README.md"), ("differs", "out/changed.jsonl"), ("missing", "out/gone.json"),
                   ("extra", "out/new.json")]
    missing = next(r for r in rows if r.status == "missing")
    assert missing.a == a["files"]["out/gone.json"]["sha256"][:12] and missing.b is None
    assert bs.compare_manifests(a, a) == []


def _write(bs, path: Path, manifest: dict, root: Path | None = None) -> Path:
    bs.write_json(path, manifest)
    if root is not None:
        bs.write_json(Path(str(path) + ".run.json"), {"output_dir": str(root)})
    return path


def test_compare_cli_exit_codes_and_table(bs, tmp_path, capsys):
    a = _manifest(bs, tmp_path / "a", {"x.jsonl": '{"k": 1}\n{"k": 2}\n', "y.json": "{}"})
    b = _manifest(bs, tmp_path / "b", {"x.jsonl": '{"k": 1}\n{"k": 3}\n', "y.json": "{}"})
    pa = _write(bs, tmp_path / "a.json", a, tmp_path / "a")
    pb = _write(bs, tmp_path / "b.json", b, tmp_path / "b")
    pa2 = _write(bs, tmp_path / "a2.json", a)
    assert bs.main(["compare", str(pa), str(pa2)]) == 0
    assert "0 differs" in capsys.readouterr().out
    assert bs.main(["compare", str(pa), str(pb)]) == 1
    out = capsys.readouterr().out
    assert "differs   out/x.jsonl" in out
    assert "line 2, column 7" in out  # both records still on disk: where they first differ
    assert "1 output files identical" in out
    assert bs.main(["compare", str(pa), str(pb), "--ignore", "out/*.jsonl"]) == 0


def test_compare_rejects_what_is_not_a_manifest_in_one_line(bs, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("[1, 2]")
    ok = _write(bs, tmp_path / "ok.json", _manifest(bs, tmp_path / "r", {"f": "1"}))
    assert bs.main(["compare", str(bad), str(ok)]) == 2
    assert bs.main(["compare", str(tmp_path / "absent.json"), str(ok)]) == 2
    (tmp_path / "trunc.json").write_text('{"format": 1, "files": {')
    assert bs.main(["compare", str(tmp_path / "trunc.json"), str(ok)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("behaviour_snapshot: error: ") for line in err)


def test_manifest_of_a_record_is_byte_identical_for_the_same_outputs(bs, tmp_path):
    paths = []
    for name in ("one", "two"):
        root = _tree(tmp_path / name, {"out/d/line_completion.jsonl": "x\n", "inputs/a.tgz": "a"})
        rec = bs.Recorder(root, Path(sys.executable), tmp_path, tmp_path, "rev", False)
        rec.note("demo", ["build-ccEval", "--lang", "python"])
        rec.parts_seconds["demo"] = 1.0 if name == "one" else 2.0  # timings never reach the manifest
        bs.write_json(root / "manifest.json", rec.manifest(["demo"]))
        paths.append(root / "manifest.json")
    assert paths[0].read_bytes() == paths[1].read_bytes()
    manifest = json.loads(paths[0].read_text())
    assert manifest["commands"] == [{"part": "demo", "argv": ["build-ccEval", "--lang", "python"]}]
    assert list(manifest["files"]) == ["out/d/line_completion.jsonl"] and list(manifest["inputs"]) == ["inputs/a.tgz"]


def test_parse_parts_orders_and_rejects_unknown(bs):
    assert bs.parse_parts(None) == list(bs.PARTS)
    assert bs.parse_parts("java, demo") == ["demo", "java"]
    with pytest.raises(bs.SnapshotError, match="unknown part.*rust"):
        bs.parse_parts("demo,rust")
    with pytest.raises(bs.SnapshotError):
        bs.parse_parts(",")


def test_output_dir_is_emptied_only_when_this_script_made_it(bs, tmp_path):
    foreign = _tree(tmp_path / "foreign", {"keep.txt": "mine"})
    with pytest.raises(bs.SnapshotError, match="not empty"):
        bs.prepare_output(foreign)
    assert (foreign / "keep.txt").read_text() == "mine"
    ours = tmp_path / "ours"
    bs.prepare_output(ours)
    _tree(ours, {"out/old/shard/DONE": "stale", "manifest.json": "{}"})
    bs.prepare_output(ours)
    assert sorted(p.name for p in ours.iterdir()) == [bs.MARKER]
    (tmp_path / "file").write_text("")
    with pytest.raises(bs.SnapshotError, match="not a directory"):
        bs.prepare_output(tmp_path / "file")


def test_commands_run_through_the_entry_points_beside_the_interpreter(bs, tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    py = bindir / "python"
    rec = bs.Recorder(tmp_path, py, tmp_path, tmp_path, "rev", False)
    assert rec._exec(["build-ccEval", "--lang", "java"]) == [str(py), "-m", "benchsmith.cli", "build", "cceval",
                                                            "--lang", "java"]
    (bindir / "build-ccEval").write_text("#!/bin/sh\n")
    assert rec._exec(["build-ccEval", "--lang", "java"]) == [str(bindir / "build-ccEval"), "--lang", "java"]
    assert rec._exec(["benchsmith", "build", "humanext"]) == [str(py), "-m", "benchsmith.cli", "build", "humanext"]


def test_shard_digests_of_the_absolute_source_path_are_masked_but_their_files_compared(bs, tmp_path):
    one = _tree(tmp_path / "1", {"out/py/.shards/werkzeug-3.0.3-0302cf39b7749d39/DONE": "d",
                                 "out/py/.shards/.lock": ""})
    two = _tree(tmp_path / "2", {"out/py/.shards/werkzeug-3.0.3-5b290636c618e6f0/DONE": "d",
                                 "out/py/.shards/.lock": ""})
    h1, h2 = bs.hash_tree(one, "out"), bs.hash_tree(two, "out")
    assert h1 == h2
    assert "out/py/.shards/werkzeug-3.0.3-<source digest>/DONE" in h1
    _tree(two, {"out/py/.shards/werkzeug-3.0.3-5b290636c618e6f0/DONE": "other"})
    assert bs.compare_sections(h1, bs.hash_tree(two, "out"))[0].status == "differs"
    # two shards that would mask to one path keep their own paths (the clash stays visible)
    _tree(two, {"out/py/.shards/werkzeug-3.0.3-1111111111111111/DONE": "d"})
    assert {k for k in bs.hash_tree(two, "out") if "DONE" in k} == {
        "out/py/.shards/werkzeug-3.0.3-5b290636c618e6f0/DONE", "out/py/.shards/werkzeug-3.0.3-1111111111111111/DONE"}


def test_rehash_applies_the_current_masks_to_a_record_on_disk(bs, tmp_path):
    root = _tree(tmp_path / "rec", {"out/.shards/r-0302cf39b7749d39/DONE": "d", "inputs/a.tgz": "a"})
    stale = {"format": bs.MANIFEST_FORMAT, "commands": [{"part": "demo", "argv": ["x"]}], "inputs": {},
             "files": bs.hash_tree(root, "out", (), ())}
    path = _write(bs, tmp_path / "m.json", stale, root)
    assert bs.main(["rehash", str(path)]) == 0
    fresh = json.loads(path.read_text())
    assert list(fresh["files"]) == ["out/.shards/r-<source digest>/DONE"]
    assert fresh["commands"] == stale["commands"] and list(fresh["inputs"]) == ["inputs/a.tgz"]
    orphan = _write(bs, tmp_path / "orphan.json", stale)
    assert bs.main(["rehash", str(orphan)]) == 2


def test_a_record_with_a_toolchain_timeout_is_load_dependent(bs, tmp_path):
    timeout = {"item_id": "benchsmith", "stage": "analyzer", "reason": "toolchain_timeout", "detail": "900s"}
    other = {"item_id": "a.py:3", "stage": "example_filter", "reason": "groundtruth_too_short", "detail": ""}
    root = _tree(tmp_path, {"out/demo/cceval/python/excluded.jsonl": json.dumps(other) + "\n" + json.dumps(timeout),
                            "out/demo/cceval/python/.shards/b-0302cf39b7749d39/excluded.jsonl": json.dumps(timeout),
                            "out/java/java/excluded.jsonl": json.dumps(other) + "\nnot json\n"})
    assert bs.load_dependent_exclusions(root) == [
        "out/demo/cceval/python/excluded.jsonl: benchsmith (toolchain_timeout)"]
    _tree(root, {"out/demo/cceval/python/excluded.jsonl": json.dumps(other)})
    assert bs.load_dependent_exclusions(root) == []


def test_measured_costs_are_masked_and_nothing_else(bs, tmp_path):
    """cost.json's seconds and the card's cost table are measurements: two builds differ there and nowhere else."""
    card = "# Card\n\n## Examples\n\n{n} examples\n\n## Construction cost\n\n| wall s |\n| {s} |\n\n## Schema\n\nx\n"
    cost = '{{"total": {{"wall_seconds": {s}, "examples": {n}}}}}'
    h = [bs.hash_tree(_tree(tmp_path / d, {"out/README.md": card.format(n=n, s=s),
                                            "out/py/cost.json": cost.format(n=n, s=s)}), "out")
         for d, n, s in (("a", 3, 1.5), ("b", 3, 9.25), ("c", 4, 1.5))]
    assert h[0]["out/README.md"]["sha256"] == h[1]["out/README.md"]["sha256"]
    assert h[0]["out/py/cost.json"]["sha256"] == h[1]["out/py/cost.json"]["sha256"]
    assert h[0]["out/README.md"]["sha256"] != h[2]["out/README.md"]["sha256"]  # the rest of the card still counts
    assert h[0]["out/py/cost.json"]["sha256"] != h[2]["out/py/cost.json"]["sha256"]
