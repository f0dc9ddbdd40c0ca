"""Lombok accessors (``@Data`` DTOs, as in released Java repositories' ``bookDTO.setAuthorName("Ranjan Sir");``):
javac runs without annotation processors, so the accessor fails in both runs; the original run's error names it and
the project class it was looked up in."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchsmith.analyzers import AnalyzerOptions, get_analyzer
from benchsmith.files import snapshot
from benchsmith.records import ReferenceKind

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "java"
needs_javac = pytest.mark.skipif(shutil.which("javac") is None or shutil.which("java") is None,
                                 reason="javac/java not on PATH (run scripts/setup_toolchains.sh)")


@needs_javac
def test_lombok_accessors_of_a_project_class_are_members_defined_by_its_fields(tmp_path):
    analyzer = get_analyzer("java", AnalyzerOptions())
    snap = snapshot(FIXTURES / "lombok", analyzer.extensions, tmp_path / "snap", repo_name="lombok")
    res = analyzer.analyze(snap, tmp_path / "work")
    assert not res.exclusions, res.exclusions
    lombok = {(r.line + 1, r.column + 1, r.symbol): (r.definition.symbol, r.definition.start_line)
              for r in res.refs if r.diagnostic == "lombok.accessor"}
    assert lombok == {(13, 17, "setName"): ("name", 9), (14, 17, "setAuthorName"): ("authorName", 10),
                      (15, 21, "isAvailable"): ("available", 11), (18, 28, "getName"): ("name", 9)}
    assert all(r.kind is ReferenceKind.MEMBER and r.defining_file.endswith("dto/BookDTO.java")
               for r in res.refs if r.diagnostic == "lombok.accessor")
    # no field `publisher`; `Plain` has no Lombok annotation: neither is defined in the repository
    assert not [r for r in res.refs if r.symbol in ("getPublisher",) or (r.symbol == "getName" and r.line + 1 == 21)]
    assert res.stats["lombok_refs"] == 4
