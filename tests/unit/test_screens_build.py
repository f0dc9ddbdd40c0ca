"""Screens profiles through a real build (pylint on a small package), and ``benchsmith audit`` on the split.

The fixture ``tests/fixtures/python/screens`` says in its README which example each screen should drop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchsmith.builders.cceval.build import build
from benchsmith.builders.cceval.config import BuildConfig
from benchsmith.builders.cceval.screens import ScreenProfile, judge_all, profile_drops
from benchsmith.cli import main
from benchsmith.records import Reason, RepoSpec

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "python" / "screens"
TID = "project_cc_python/screens/pkg/"
ALWAYS = [TID + "app.py:11:19", TID + "app.py:17:12"]  # fill("crimson"), draw_line(start, end)
VOCAB, FIRST, ECHO = TID + "app.py:18:12", TID + "app.py:23:19", TID + "test_app.py:9:19"


def _build(out: Path, profile: ScreenProfile):
    cfg = BuildConfig(language="python", output=str(out), repos=[RepoSpec(str(FIXTURE))], retrievers=(), workers=1,
                      screens=profile)
    return cfg, build(cfg, progress=False)


def _ids(path: Path) -> list[str]:
    return [json.loads(line)["metadata"]["task_id"] for line in path.read_text().splitlines()]


def _excluded(lang_dir: Path) -> dict[str, str]:
    return {e["item_id"]: e["reason"] for e in map(json.loads, (lang_dir / "excluded.jsonl").read_text().splitlines())}


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    base = tmp_path_factory.mktemp("screens-build")
    return {p: (base / p.value, *_build(base / p.value, p)) for p in ScreenProfile}


def test_each_profile_drops_what_its_screens_catch_with_their_reasons(builds):
    kept = {p: _ids(out / "python" / "line_completion.jsonl") for p, (out, _, _) in builds.items()}
    assert kept[ScreenProfile.NONE] == [*ALWAYS, VOCAB, FIRST, ECHO]
    assert kept[ScreenProfile.DEFAULT] == [*ALWAYS, FIRST]
    assert kept[ScreenProfile.STRICT] == [*ALWAYS, FIRST]  # first_name is in no profile since issue 25
    released = [json.loads(line) for line in
                (builds[ScreenProfile.NONE][0] / "python" / "line_completion.jsonl").read_text().splitlines()]
    score = {e["metadata"]["task_id"]: e["metadata"]["predictability"] for e in released}
    assert "vocabulary" in score[VOCAB]["screens"] and "first_name" in score[FIRST]["screens"]
    assert all(isinstance(s["surprisal"], float) for s in score.values())
    default = _excluded(builds[ScreenProfile.DEFAULT][0] / "python")
    assert default[VOCAB] == Reason.GROUNDTRUTH_VOCABULARY_IN_FILE.value
    assert default[ECHO] == Reason.ECHOES_ENCLOSING_NAME.value
    for profile, (out, cfg, summary) in builds.items():
        stats = json.loads((out / "python" / "stats.json").read_text())
        assert stats["screens"]["profile"] == profile.value
        assert stats["examples"] == len(kept[profile])
        screen_reasons = {a["reason"] for a in stats["screens"]["applied"]}
        dropped = {r: n for r, n in stats["dropped"].items() if r in screen_reasons}
        assert sum(dropped.values()) == len(kept[ScreenProfile.NONE]) - len(kept[profile])
    fingerprints = {cfg.fingerprint() for _, cfg, _ in builds.values()}
    assert len(fingerprints) == 3  # the profile is part of what a shard's content depends on


def test_the_same_profile_resumes_byte_identically_and_another_one_rebuilds(builds, tmp_path):
    out, cfg, _ = builds[ScreenProfile.DEFAULT]
    before = {p.name: p.read_bytes() for p in (out / "python").glob("*.json*")}
    _, again = _build(out, ScreenProfile.DEFAULT)
    assert all(s.skipped for s in again.shards)
    assert {p.name: p.read_bytes() for p in (out / "python").glob("*.json*")} == before
    fresh_out = tmp_path / "fresh"
    _build(fresh_out, ScreenProfile.DEFAULT)  # a fresh build writes the same bytes as the first one
    assert (fresh_out / "python" / "line_completion.jsonl").read_bytes() == before["line_completion.jsonl"]
    _, switched = _build(out, ScreenProfile.STRICT)
    assert not any(s.skipped for s in switched.shards)
    assert _ids(out / "python" / "line_completion.jsonl") == [*ALWAYS, FIRST]


def test_cli_profile_flag_audit_and_card(tmp_path, capsys):
    out = tmp_path / "cli"
    rc = main(["build", "cceval", "--lang", "python", "--repo", str(FIXTURE), "--output", str(out),
               "--retrievers", "none", "--screens", "none", "-q"])
    assert rc == 0
    lang_dir = out / "python"
    audit = json.loads((lang_dir / "audit.json").read_text())
    examples = [json.loads(line) for line in (lang_dir / "line_completion.jsonl").read_text().splitlines()]
    assert audit["examples"] == len(examples) == 5
    # The audit's screen shares are the screens' own verdicts on the released examples.
    verdicts = [judge_all(e["prompt"], e["groundtruth"], "python") for e in examples]
    for name, entry in audit["screens"].items():
        assert entry["drops"] == sum(v[next(k for k in v if k.value == name)] is not None for v in verdicts)
    assert audit["profiles"]["default"]["drops"] == sum(profile_drops(v, "default") is not None for v in verdicts) == 2
    assert audit["profiles"]["strict"]["drops"] == 2
    assert sum(audit["surprisal"]["histogram"].values()) == 5 and audit["surprisal"]["max"] > 0
    for mode in ("compat-cceval", "default"):
        assert audit["self_consistency"][mode] == {"em": 100.0, "es": 100.0, "violations": 0,
                                                   "violating_task_ids": []}
    conc = audit["concentration"]
    assert conc["repository_count"] == 1 and conc["top_repository_share"] == 1.0
    # fill is the API of 3 of the 5 examples: ("crimson"), ("navy") and (colour)
    assert conc["top_api"] == "pkg/shapes.py:fill" and conc["top_api_share"] == 0.6
    assert audit["lengths"]["groundtruth_lines"]["max"] == 1
    card = (out / "README.md").read_text()
    assert "## Audit" in card and "| python | 5 | 100.0 / 100.0 (0) | 100.0 / 100.0 (0) |" in card
    assert "`pkg/shapes.py:fill`" in card and "Screens profile applied by the build: python: `none`" in card

    # `benchsmith audit` recomputes the same bytes, prints a table, and takes a file too.
    first = (lang_dir / "audit.json").read_bytes()
    capsys.readouterr()
    assert main(["audit", str(out)]) == 0
    assert (lang_dir / "audit.json").read_bytes() == first
    printed = capsys.readouterr().out
    assert "self-consistency (compat-cceval)" in printed and "top API" in printed and "surprisal" in printed
    assert main(["audit", str(lang_dir / "line_completion.jsonl"), "-q"]) == 0
    assert main(["audit", str(tmp_path / "missing")]) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_audit_finds_near_duplicates_and_unscorable_groundtruths(tmp_path):
    from benchsmith.builders.cceval.audit import audit_split

    def rec(tid, prompt, gt, repo="r", symbol="Api"):
        return json.dumps({"prompt": prompt, "groundtruth": gt, "right_context": "",
                           "metadata": {"task_id": tid, "repository": repo, "file": "a.ts", "symbol": symbol,
                                        "defining_file": "b.ts", "language": "typescript"}})

    lines = [rec("t1", "const a = x.", 'get("one");'), rec("t2", "const b = x.", "get( 'two' );", repo="s"),
             rec("t3", "const c = x.", "put(1);", symbol="Other"),
             # The released scorer cuts at the first ';' even inside a template literal: unscorable in compat mode.
             rec("t4", "let m = e.", "msg = `a ${b}; c`;")]
    split = tmp_path / "line_completion.jsonl"
    split.write_text("\n".join(lines) + "\n")
    report = audit_split(split)
    assert report["language"] == "typescript"
    dup = report["near_duplicates"]
    assert dup["groups"] == 1 and dup["examples_in_groups"] == 2 and dup["largest"][0]["repositories"] == 2
    assert report["self_consistency"]["compat-cceval"]["violating_task_ids"] == ["t4"]
    assert report["concentration"]["top_api"] == "b.ts:Api" and report["concentration"]["top_api_share"] == 0.75
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"prompt": 1}\n')
    from benchsmith.builders.cceval.audit import AuditError

    with pytest.raises(AuditError, match="task_id"):
        audit_split(broken, "typescript")


def test_audit_refuses_unknown_languages_with_a_clear_error(tmp_path, capsys):
    split = tmp_path / "line_completion.jsonl"
    split.write_text(json.dumps({"prompt": "a", "groundtruth": "b", "right_context": "",
                                 "metadata": {"task_id": "t", "language": "cobol"}}) + "\n")
    assert main(["audit", str(split)]) == 2
    assert "unsupported language 'cobol'" in capsys.readouterr().err
    assert main(["audit", str(split), "--language", "python", "-q"]) == 0  # an explicit language wins
