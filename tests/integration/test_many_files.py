"""A repository with thousands of files and odd names goes through the Java toolchain in one batched run."""

from __future__ import annotations

import json
import shutil

import pytest

from benchsmith.cli import main
from tests.invariants import check_split

N = 2000


@pytest.mark.skipif(shutil.which("javac") is None, reason="javac not installed (make setup installs it)")
def test_thousands_of_java_files_with_unicode_and_space_names(tmp_path):
    repo = tmp_path / "big repo"
    pkg = repo / "src" / "p"
    pkg.mkdir(parents=True)
    for i in range(N):
        prev = f"C{i - 1}" if i else "Base"
        (pkg / f"C{i}.java").write_text(
            f"package p;\n\nclass C{i} {{\n    int value() {{\n        int x = 1;\n        int y = 2;\n"
            f"        int z = x + y;\n        return new {prev}().compute(z, {i});\n    }}\n\n"
            f"    int compute(int a, int b) {{ return a + b; }}\n}}\n")
    (pkg / "Base.java").write_text("package p;\n\nclass Base {\n    int compute(int a, int b) { return a * b; }\n}\n")
    # Non-public classes may live in files of any name: spaces and non-ASCII characters included.
    (pkg / "Ünïcödé Späce.java").write_text(
        "package p;\n\nclass Odd {\n    int f() {\n        int a = 3;\n        int b = 4;\n"
        "        return new Base().compute(a, b);\n    }\n}\n")
    out = tmp_path / "out"
    assert main(["build", "cceval", "--lang", "java", "--repo", str(repo), "--output", str(out),
                 "--retrievers", "none", "--no-card", "-q", "--workers", "1", "--min-prompt-lines", "3"]) == 0
    stats = json.loads((out / "java" / "stats.json").read_text())
    assert stats["files"] == N + 2
    examples = check_split(out / "java" / "line_completion.jsonl", {"big_repo": repo})
    files = {e["metadata"]["file"] for e in examples}
    assert "src/p/Ünïcödé Späce.java" in files
    # Most files use the previous class's method; dedup keeps one per distinct groundtruth.
    assert len(examples) >= N // 2
