"""Image tags, build arguments, Dockerfile conventions and the hardened `<engine> run` argv; no engine needed."""

from __future__ import annotations

import re
from importlib.metadata import version

import pytest

import benchsmith.containers as containers
from benchsmith.containers import IMAGES, build_args_for, detect_engine, image_tag
from benchsmith.runner import ToolchainBackend, ContainerSpec, Limits, Mount, container_argv, container_name, repo_root


def test_tag_is_a_hash_of_dockerfile_and_build_args(tmp_path, monkeypatch):
    monkeypatch.setattr(containers, "CONTAINERS_DIR", tmp_path)
    df = tmp_path / "tool.Dockerfile"
    df.write_text("FROM scratch\n")
    first = image_tag("tool.Dockerfile", {"BASE_IMAGE": "a"})
    assert re.fullmatch(r"benchsmith-tool:[0-9a-f]{12}", first)
    assert image_tag("tool.Dockerfile", {"BASE_IMAGE": "a"}) == first
    assert image_tag("tool.Dockerfile", {"BASE_IMAGE": "b"}) != first
    df.write_text("FROM scratch\nLABEL x=1\n")
    assert image_tag("tool.Dockerfile", {"BASE_IMAGE": "a"}) != first


def test_default_tag_follows_the_base_image_setting(monkeypatch):
    monkeypatch.delenv("BENCHSMITH_BASE_IMAGE", raising=False)
    default = image_tag("sandbox.Dockerfile")
    assert default == image_tag("sandbox.Dockerfile", {"BASE_IMAGE": "debian:bookworm-slim"})
    monkeypatch.setenv("BENCHSMITH_BASE_IMAGE", "benchsmith-base:bookworm-local")
    assert image_tag("sandbox.Dockerfile") != default


def test_pylint_image_is_pinned_to_the_hosts_pylint():
    pins = build_args_for("pylint", "debian:bookworm-slim")["PYLINT_REQUIREMENTS"].split()
    assert f"pylint=={version('pylint')}" in pins
    assert f"astroid=={version('astroid')}" in pins
    assert all(re.fullmatch(r"[a-z0-9.\-]+==\S+", p) for p in pins)


def test_csharp_compiler_variant(monkeypatch):
    monkeypatch.delenv("BENCHSMITH_CSHARP_COMPILER", raising=False)
    assert build_args_for("csharp")["CSHARP_COMPILER"] == "mcs"
    monkeypatch.setenv("BENCHSMITH_CSHARP_COMPILER", "csc")
    assert build_args_for("csharp")["CSHARP_COMPILER"] == "csc"
    monkeypatch.setenv("BENCHSMITH_CSHARP_COMPILER", "gcc")
    with pytest.raises(ValueError, match="mcs, csc"):
        build_args_for("csharp")


def test_unknown_image_is_named_in_the_error():
    with pytest.raises(KeyError, match=re.escape(f"unknown image 'rustc'; choose from: {', '.join(sorted(IMAGES))}")):
        build_args_for("rustc")
    with pytest.raises(KeyError, match="did you mean 'pylint'"):
        build_args_for("pylnt")


def test_every_dockerfile_takes_the_base_image_as_a_build_arg():
    for name, dockerfile in IMAGES.items():
        text = (repo_root() / "containers" / dockerfile).read_text()
        instructions = [line for line in text.splitlines() if line and not line.startswith("#")]
        assert instructions[0] == "ARG BASE_IMAGE=debian:bookworm-slim", dockerfile
        assert instructions[1] == "FROM ${BASE_IMAGE}", dockerfile
        assert f'LABEL org.benchsmith.image="{name}"' in text


def first_run(dockerfile: str) -> str:
    text = (repo_root() / "containers" / dockerfile).read_text()
    return re.search(r"^RUN .*?[^\\]\n", text, re.M | re.S).group(0)


def test_sandbox_and_pylint_share_their_python_layer():
    assert first_run("sandbox.Dockerfile") == first_run("pylint.Dockerfile")


def test_tsc_image_pins_the_typescript_of_setup_toolchains():
    # scripts/setup_toolchains.sh installs the lock's TypeScript (tests/unit/test_toolchain_lock.py)
    from benchsmith.toolchain_lock import PinKind, pins

    pinned = [p.version for p in pins() if p.kind is PinKind.NPM and p.name == "typescript"]
    assert len(pinned) == 1
    assert f"ARG TYPESCRIPT_VERSION={pinned[0]}\n" in (repo_root() / "containers" / "tsc.Dockerfile").read_text()


def test_no_engine_on_path_means_none(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("BENCHSMITH_CONTAINER_ENGINE", raising=False)
    assert detect_engine() is None
    with pytest.raises(ValueError):
        detect_engine("local")


def spec(**kw) -> ContainerSpec:
    return ContainerSpec(engine=ToolchainBackend.DOCKER, image="benchsmith-x:0123456789ab", **kw)


def test_run_argv_is_hardened(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    argv = container_argv(["tool", "--flag"], spec(mounts=(Mount(str(tmp_path), "/src"), Mount(str(out), "/out", True))),
                          {"B": "2", "A": "1"})
    joined = " ".join(argv)
    for flag in ("--network none", "--security-opt no-new-privileges", "--cap-drop ALL", "--read-only",
                 "--log-driver none", "--memory 4g --memory-swap 4g", "--pids-limit 512"):
        assert flag in joined
    assert re.search(r"--user \d+:\d+", joined)
    assert "--tmpfs /tmp:" in joined
    assert f"--mount type=bind,source={tmp_path},target=/src,readonly" in joined
    assert f"--mount type=bind,source={out},target=/out " in joined + " "
    assert argv[-3:] == ["benchsmith-x:0123456789ab", "tool", "--flag"]
    assert argv[argv.index("-e") + 1] == "A=1"  # sorted, deterministic
    assert container_name(argv).startswith("benchsmith-")
    assert "-v" not in argv  # -v would create a missing host path instead of failing


@pytest.mark.parametrize("host", ["relative/dir", "/tmp/a,readonly=false", "/tmp/a=b"])
def test_mount_paths_that_could_smuggle_options_are_refused(host):
    with pytest.raises(ValueError, match="absolute and free of"):
        container_argv(["x"], spec(mounts=(Mount(host, "/src"),)), None)


def test_missing_mount_source_is_an_error_not_a_new_directory(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        container_argv(["x"], spec(mounts=(Mount(str(tmp_path / "absent"), "/src"),)), None)


def test_extra_args_override_the_defaults():
    argv = container_argv(["x"], spec(extra_args=("--tmpfs", "/tmp:rw,size=16m", "--user", "65534:65534",
                                                  "--name", "mine")), None)
    assert [a for a in argv if a.startswith("/tmp")] == ["/tmp:rw,size=16m"]
    assert argv[len(argv) - 1 - argv[::-1].index("--user") + 1] == "65534:65534"  # the last --user wins
    assert container_name(argv) == "mine"


def test_limits_become_ulimits_and_the_smaller_pids_limit():
    argv = container_argv(["x"], spec(pids=512), None, Limits(cpu_seconds=5, file_size=1024, open_files=64,
                                                                 processes=32))
    joined = " ".join(argv)
    assert "--ulimit cpu=5:5" in joined and "--ulimit fsize=1024:1024" in joined
    assert "--ulimit nofile=64:64" in joined
    assert "--pids-limit 32" in joined and "--pids-limit 512" not in joined
