"""Input hygiene (issue 13) through the real CLI: tests/hostile/hygiene.py's HygieneCase block, one build per
language, each next to a normal repository that must keep every example it has when built alone; and resuming
keyed by a repository's identity, not its base name."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from benchsmith.repobuild.build import unique_names
from benchsmith.records import RepoSpec
from tests.hostile import SECRET, HygieneCase, make_hygiene_suite, tree_digest
from tests.hostile.builds import CONTROL, cli, read


_TOOL_FOR = {"python": None, "csharp": "mcs", "java": "javac", "go": "go"}


def _examples_by_file(out: Path, repository: str) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for ex in read(out / "line_completion.jsonl"):
        if ex["metadata"]["repository"] == repository:
            found.setdefault(ex["metadata"]["file"], []).append(ex)
    return found


@pytest.fixture(scope="module")
def hygiene(tmp_path_factory):
    root = tmp_path_factory.mktemp("hygiene")
    outside = root / "outside"
    outside.mkdir()
    (outside / "notes.txt").write_text(SECRET)
    cases = make_hygiene_suite(root / "repos", outside)
    control = root / "repos" / "control"
    shutil.copytree(CONTROL, control)
    before = tree_digest(root)
    outs: dict[str, Path] = {}
    names: dict[str, str] = {}
    skipped: list[str] = []
    for lang, tool in _TOOL_FOR.items():
        batch = [c for c in cases if c.language == lang]
        if tool is not None and shutil.which(tool) is None:
            skipped.append(f"{lang} ({tool} not on PATH)")
            continue
        sources = [c.source for c in batch] + ([str(control)] if lang == "python" else [])
        out = tmp_path_factory.mktemp(f"hygiene-out-{lang}")
        args = ["--lang", lang, "--output", str(out), "--workers", "2"]
        for s in sources:
            args += ["--repo", s]
        cli(*args)
        outs[lang] = out / lang
        names.update(zip(sources, unique_names([RepoSpec.parse(s) for s in sources])))
    alone = tmp_path_factory.mktemp("hygiene-control-alone")
    cli("--lang", "python", "--output", str(alone), "--workers", "1", "--repo", str(control))
    return root, cases, outs, names, before, alone / "python", skipped


def _built(hygiene) -> list[tuple[HygieneCase, Path, str]]:
    _root, cases, outs, names, _before, _alone, skipped = hygiene
    if skipped:
        print(f"hygiene cases not built (toolchain missing): {', '.join(skipped)}")
    return [(c, outs[c.language], names[c.source]) for c in cases if c.language in outs]


def test_hygiene_suite_is_large_enough(hygiene):
    _root, cases, _outs, _names, _before, _alone, _skipped = hygiene
    hostile = [c for c in cases if c.items]
    assert len(hostile) >= 12, [c.name for c in hostile]


def test_hygiene_items_have_their_exact_reason(hygiene):
    for case, out, name in _built(hygiene):
        by_item: dict[str, set[str]] = {}
        reasons: set[str] = set()
        for e in read(out / "excluded.jsonl"):
            if e["repository"] == name:
                by_item.setdefault(e["item_id"], set()).add(e["reason"])
                reasons.add(e["reason"])
        for item, reason in case.items.items():
            assert by_item.get(item) == {str(reason)}, f"{case.name}: {item!r} -> {by_item.get(item)}, " \
                                                      f"expected {reason}; recorded: {sorted(by_item)}"
        bad = reasons & {str(r) for r in case.forbidden_reasons}
        assert not bad, f"{case.name}: {bad} among {sorted(reasons)}"
        assert {str(r) for r in case.reasons} <= reasons, (case.name, reasons)


def test_hygiene_markers_never_appear_and_nothing_outside_is_written(hygiene):
    root, cases, outs, _names, before, _alone, _skipped = hygiene
    for case in cases:
        for marker in case.markers:
            assert not marker.exists(), f"{case.name}: {marker} exists: something from the repository ran"
    assert tree_digest(root) == before, "a file in or next to the hygiene repositories changed"
    forbidden = [SECRET.strip(), Path("/etc/passwd").read_text().splitlines()[0]]
    for out in outs.values():
        for path in out.rglob("*"):
            if path.is_file():
                text = path.read_text(encoding="utf-8", errors="replace")
                assert not any(f in text for f in forbidden), f"{path} holds text from outside the repositories"


def test_hygiene_cases_keep_the_examples_of_their_normal_part(hygiene):
    for case, out, name in _built(hygiene):
        found = _examples_by_file(out, name)
        for file, at_least in case.examples_from.items():
            assert len(found.get(file, [])) >= at_least, f"{case.name}: {file} gave {len(found.get(file, []))} " \
                                                        f"examples, expected >= {at_least} ({sorted(found)})"


def test_hygiene_control_keeps_all_its_examples(hygiene):
    _root, _cases, outs, names, _before, alone, _skipped = hygiene
    control = next(n for s, n in names.items() if s.endswith("/control"))
    mixed = sorted(ex["metadata"]["task_id"] for exs in _examples_by_file(outs["python"], control).values()
                   for ex in exs)
    solo = sorted(ex["metadata"]["task_id"] for ex in read(alone / "line_completion.jsonl"))
    assert solo and mixed == solo


def test_line_separators_give_exact_examples(hygiene):
    """Every file of the line-separator case: its examples put back together are the file, byte for byte, and
    every use in it became an example (two per file)."""
    for case, out, name in _built(hygiene):
        if case.name != "line_separators":
            continue
        for file, examples in _examples_by_file(out, name).items():
            with open(Path(case.source) / file, encoding="utf-8", newline="") as fh:
                text = fh.read()
            for ex in examples:
                assert ex["prompt"] + ex["groundtruth"] + ex["right_context"] == text, (file, ex["groundtruth"])
                # ``pkg.a.Box()``: ``a`` (a submodule reached through its package) is a use too, and so is ``Box``
                assert re.fullmatch(r"(a\.)?(Box\(\)(\.grow\(\d+\))?|total\(\[(1, 2, \d+|\r        1, 2)\]\))",
                                    ex["groundtruth"]), (file, ex["groundtruth"])
        return
    pytest.fail("the line-separator case was not built")


def test_go_line_directives_do_not_move_positions(hygiene):
    for case, out, name in _built(hygiene):
        if case.name != "go_line":
            continue
        broken = [e for e in read(out / "excluded.jsonl") if e["item_id"] == "go_line/broken.go"]
        assert broken and "line 4:" in broken[0]["detail"], broken  # the file's own line, not fake.go:500
        found = _examples_by_file(out, name)["main.go"]
        assert sorted(ex["groundtruth"].split("(")[0] for ex in found) == ["NewBox", "Total"]
        return
    pytest.skip("go not on PATH: the //line case was not built")


def test_resume_is_keyed_by_identity_not_basename(tmp_path):
    """r1/proj then r2/proj into the same output: the second build analyses r2 (never serves r1's examples);
    building r2 again resumes; changing one file of r2 rebuilds it."""
    def project(base: Path, member: str) -> Path:
        repo = base / "proj"
        (repo / "pkg").mkdir(parents=True)
        (repo / "pkg" / "__init__.py").write_text("")
        (repo / "pkg" / "a.py").write_text(f"def {member}(values):\n    return sum(values)\n")
        (repo / "pkg" / "b.py").write_text(f"{HEADER}def main():\n    return pkg.a.{member}([1, 2, 3])\n")
        return repo

    HEADER = '"""Uses a sibling module."""\nimport os\nimport sys\n\nimport pkg.a\n\nDEBUG = os.sep, sys.argv\n\n\n'
    r1, r2 = project(tmp_path / "r1", "first_total"), project(tmp_path / "r2", "second_total")
    out = tmp_path / "out"

    def build_once(repo: Path) -> tuple[list[dict], str]:
        # members only: one example per build (``pkg.a`` would add a module_member one) keeps the shards apart
        res = cli("--lang", "python", "--output", str(out), "--workers", "1", "--kinds", "member", "--repo", str(repo))
        return read(out / "python" / "line_completion.jsonl"), res.stdout + res.stderr

    first, _ = build_once(r1)
    assert [ex["groundtruth"] for ex in first] == ["first_total([1, 2, 3])"]
    second, _ = build_once(r2)
    assert [ex["groundtruth"] for ex in second] == ["second_total([1, 2, 3])"], "r2 was served r1's shard"
    shards = out / "python" / ".shards"
    r2_shard = next(p for p in shards.iterdir() if (p / "DONE").exists()
                    and json.loads((p / "DONE").read_text())["identity"].startswith("dir:")
                    and json.loads((p / "stats.json").read_text())["examples"] == 1
                    and "second_total" in (p / "line_completion.jsonl").read_text())
    inode = r2_shard.stat().st_ino
    build_once(r2)
    assert r2_shard.stat().st_ino == inode, "an unchanged repository was rebuilt instead of resumed"
    (r2 / "pkg" / "b.py").write_text(f"{HEADER}def main():\n    return pkg.a.second_total([4, 5])\n")
    third, _ = build_once(r2)
    assert [ex["groundtruth"] for ex in third] == ["second_total([4, 5])"], "a changed repository was resumed"


@pytest.mark.parametrize("language", sorted(_TOOL_FOR))
def test_hygiene_cases_of_each_language_were_built(hygiene, language):
    """A language whose toolchain is missing here is a visible skip, not a silently smaller suite."""
    _root, cases, outs, _names, _before, _alone, skipped = hygiene
    if language not in outs:
        pytest.skip(f"hygiene cases for {language} not built: {', '.join(skipped)}")
    assert any(c.language == language for c in cases)
