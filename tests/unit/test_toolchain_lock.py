"""The toolchain lock (benchsmith/data/toolchains.lock): what `make venv` and scripts/setup_toolchains.sh install,
what this environment runs, what the containers and pyproject.toml ask for, and what the card says of it."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version

import pytest
from packaging.requirements import Requirement

from benchsmith import toolchain_lock
from benchsmith.containers import build_args_for
from benchsmith.runner import repo_root
from benchsmith.toolchain_lock import Pin, PinKind

PINS = toolchain_lock.pins()
ROOT = repo_root()


def pinned(kind: PinKind) -> dict[str, str]:
    return {p.name: p.version for p in PINS if p.kind is kind}


def test_the_lock_pins_every_toolchain_that_decides_examples():
    pip = pinned(PinKind.PIP)
    grammars = {"tree-sitter-python", "tree-sitter-java", "tree-sitter-typescript", "tree-sitter-c-sharp",
                "tree-sitter-go", "tree-sitter-javascript"}
    assert {"pylint", "astroid", "tree-sitter"} | grammars <= set(pip)
    assert all(re.fullmatch(r"\d+(\.\d+)+", v) for v in pip.values()), pip  # exact versions, not ranges
    assert set(pinned(PinKind.NPM)) == {"typescript"}
    assert {"go", "javac", "mcs"} <= set(pinned(PinKind.SYSTEM))


def test_this_environment_runs_the_locked_python_packages():
    """`make venv` installs the lock as constraints: a venv of other versions was not made by the set-up (or the
    lock changed without a reinstall), and its builds are not the reproducible ones."""
    drift = {name: version(name) for name, want in pinned(PinKind.PIP).items() if version(name) != want}
    assert not drift, f"installed versions differ from toolchains.lock: {drift}; run `make venv`"


def test_pyproject_admits_the_locked_versions():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    reqs = {Requirement(d).name: Requirement(d) for d in deps}
    for name, want in pinned(PinKind.PIP).items():
        if name in reqs:
            assert reqs[name].specifier.contains(want), (name, str(reqs[name].specifier), want)
    assert "pylint" in reqs and reqs["pylint"].specifier.contains("4.1.5")
    assert not reqs["pylint"].specifier.contains("3.3.1")  # the series whose examples differ is not admitted


def test_the_set_up_installs_from_the_lock():
    makefile = (ROOT / "Makefile").read_text()
    assert "LOCK := benchsmith/data/toolchains.lock" in makefile
    assert re.search(r"^\$\(VENV\)/\.installed: .*\$\(LOCK\)", makefile, re.M)  # a changed lock reinstalls
    assert re.search(r"pip install .*-c \$\(VENV\)/toolchains-constraints\.txt -e", makefile.replace("$(PIP)", "pip"))
    setup = (ROOT / "scripts" / "setup_toolchains.sh").read_text()
    assert "TS_VERSION=$(pin npm typescript)" in setup
    assert not re.search(r"typescript@\d|TS_VERSION=\d", setup)  # no second, hard-coded TypeScript version
    assert '"openjdk-$JAVA_SERIES-jdk-headless"' in setup


def test_the_containers_use_the_locked_versions():
    ts = pinned(PinKind.NPM)["typescript"]
    assert f"ARG TYPESCRIPT_VERSION={ts}\n" in (ROOT / "containers" / "tsc.Dockerfile").read_text()
    java = pinned(PinKind.SYSTEM)["javac"]
    assert f"openjdk-{java}-jdk-headless" in (ROOT / "containers" / "javac.Dockerfile").read_text()
    image = build_args_for("pylint", "debian:bookworm-slim")["PYLINT_REQUIREMENTS"].split()
    pip = pinned(PinKind.PIP)
    assert {f"pylint=={pip['pylint']}", f"astroid=={pip['astroid']}"} <= set(image)


def test_a_system_pin_holds_its_series_only():
    javac = Pin(PinKind.SYSTEM, "javac", "17")
    assert javac.holds("17") and javac.holds("17.0.15")
    assert not javac.holds("170.1") and not javac.holds("21.0.1")
    go = Pin(PinKind.SYSTEM, "go", "go1.19")
    assert go.holds("go1.19.8") and not go.holds("go1.190") and not go.holds("go1.21.0")
    pylint = Pin(PinKind.PIP, "pylint", "4.1.5")
    assert pylint.holds("4.1.5") and not pylint.holds("4.1.50")


def test_the_card_line_names_what_differs():
    lock = toolchain_lock.parse("pip pylint 4.1.5\npip astroid 4.4.0\nsystem javac 17\nnpm typescript 5.6.3\n")
    same = toolchain_lock.check({"pylint": "4.1.5", "javac": "17.0.15", "node": "20"}, lock)
    assert same.summary() == "pylint 4.1.5, javac 17.0.15 (as pinned in toolchains.lock)"
    moved = toolchain_lock.check({"astroid": "4.4.0", "pylint": "3.3.1"}, lock)
    assert moved.summary() == ("pylint 3.3.1, astroid 4.4.0; NOT as pinned in toolchains.lock: "
                               "pylint 3.3.1 (lock: 4.1.5)")
    assert toolchain_lock.check({"go": "go1.19.8"}, lock).summary() == "none of toolchains.lock's pins took part"


@pytest.mark.parametrize("text, message", [
    ("pip pylint\n", "line 1: expected '<kind> <name> <version>'"),
    ("# c\napt go 1.19\n", "line 2: unknown kind 'apt'"),
    ("pip pylint 4.1.5 extra\n", "line 1: expected"),
])
def test_a_malformed_lock_says_which_line(text, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        toolchain_lock.parse(text)


def test_the_shard_key_holds_the_parsers_and_the_toolchain(tmp_path):
    from benchsmith.builders.cceval.config import BuildConfig
    from benchsmith.repobuild.shard import make_analyzer, toolchain_versions

    versions = toolchain_versions(make_analyzer(BuildConfig(language="python", output=str(tmp_path))))
    assert versions["tree-sitter"] == version("tree-sitter")
    assert versions["tree-sitter-python"] == version("tree-sitter-python")
    assert versions["pylint"] == version("pylint") and versions["astroid"] == version("astroid")
