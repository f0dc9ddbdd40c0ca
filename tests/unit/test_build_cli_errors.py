"""`build cceval` user errors end in one line on stderr and a non-zero exit, never a traceback; the card records
the command as typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchsmith.cli import main

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "python" / "shoplib"


def _exit_message(argv: list[str]) -> str:
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code not in (0, None)
    text = str(info.value.code)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_missing_repos_file_is_one_line(tmp_path):
    text = _exit_message(["build", "cceval", "--lang", "python", "--repos-file", str(tmp_path / "nope.txt"),
                          "--output", str(tmp_path / "out")])
    assert "nope.txt" in text and "--repos-file" in text


def test_unwritable_output_is_one_line(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    text = _exit_message(["build", "cceval", "--lang", "python", "--repo", str(SAMPLE),
                          "--output", str(blocker / "out"), "-q"])
    assert "--output" in text and str(blocker) in text


def test_every_repository_failed_exits_non_zero(tmp_path, capsys):
    rc = main(["build", "cceval", "--lang", "python", "--repo", str(tmp_path / "missing"), "--output",
               str(tmp_path / "out"), "--retrievers", "none", "--no-card", "-q", "--workers", "1"])
    assert rc != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nothing was built" in err[0]
    assert (tmp_path / "out" / "python" / "excluded.jsonl").read_text().strip()  # the reason is still recorded


def test_card_records_the_command_as_typed(tmp_path):
    from benchsmith.cli import build_cceval_main

    out = tmp_path / "out"
    argv = ["--lang", "python", "--repo", str(SAMPLE), "--output", str(out), "--retrievers", "none", "-q",
            "--workers", "1", "--max-per-repo", "2"]
    assert build_cceval_main(argv) == 0
    card = (out / "README.md").read_text()
    assert f"build-ccEval --lang python --repo {SAMPLE} --output {out} --retrievers none -q" in card
    first = card
    assert build_cceval_main(argv) == 0
    assert (out / "README.md").read_text() == first  # same command, same bytes


def test_rewrite_derived_refreshes_every_view_of_a_changed_split(tmp_path):
    """What `benchsmith screen` calls after rewriting a split: audit, card and parquet follow the split."""
    import json

    import pyarrow.parquet as pq

    from benchsmith.builders.cceval.derived import recorded_command, rewrite_derived

    out = tmp_path / "out"
    argv = ["build", "cceval", "--lang", "python", "--repo", str(SAMPLE), "--output", str(out), "--retrievers",
            "none", "-q", "--workers", "1", "--format", "jsonl,parquet"]
    assert main(argv) == 0
    lang = out / "python"
    split = lang / "line_completion.jsonl"
    lines = split.read_text().splitlines(keepends=True)
    assert len(lines) >= 2
    split.write_text("".join(lines[1:]))
    rewrite_derived(lang)
    assert json.loads((lang / "audit.json").read_text())["examples"] == len(lines) - 1
    table = pq.read_table(next((out / "parquet" / "python").glob("line_completion.parquet")))
    assert table.num_rows == len(lines) - 1
    card = (out / "README.md").read_text()
    assert f"{len(lines) - 1} examples" in card
    assert recorded_command(out) == ["benchsmith", *argv]
