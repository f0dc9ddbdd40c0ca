"""The toolchain/sandbox images and the runner's container backend, against a real engine (docker or podman).

These skip only when no engine answers at all.  With an engine, the module fixture builds whatever image is
missing (nothing after `make images`), so a broken Dockerfile or base image fails here with the build log."""

from __future__ import annotations

import json
import os
import re
import sys
from importlib.metadata import version

import pytest

from benchsmith.containers import IMAGES, build_all, detect_engine, image_tag
from benchsmith.runner import ContainerSpec, Limits, Mount, container_name, run
from benchsmith.toolchain_lock import PinKind, pins

pytestmark = pytest.mark.container


@pytest.fixture(scope="module")
def engine():
    found = detect_engine()
    if found is None:
        pytest.skip("no container engine answers (`docker info` / `podman info` failed): install docker or "
                    "podman, or run scripts/ci_containers.sh as root")
    return found


@pytest.fixture(scope="module")
def images(engine):
    return {name: item.tag for name, item in build_all(engine).items()}


def in_image(engine, images, name: str, argv, **spec_fields):
    limits = spec_fields.pop("limits", None)
    timeout = spec_fields.pop("timeout", 120)
    spec = ContainerSpec(engine=engine, image=images[name], **spec_fields)
    return run(argv, container=spec, limits=limits, timeout=timeout)


def python_in_sandbox(engine, images, code: str, **spec_fields):
    return in_image(engine, images, "sandbox", ["python3", "-c", code], **spec_fields)


def inspect(engine, tag: str) -> dict:
    res = run([engine.value, "image", "inspect", tag], timeout=60)
    assert res.ok, res.stderr
    return json.loads(res.stdout)[0]


def test_images_carry_their_input_hash_and_are_not_rebuilt(engine, images):
    assert set(images) == set(IMAGES)
    for name, tag in images.items():
        assert tag == image_tag(IMAGES[name])  # what analyzers and the sandbox compute is what was built
        labels = inspect(engine, tag)["Config"]["Labels"] or {}
        assert labels.get("org.benchsmith.image") == name
        assert labels.get("org.benchsmith.inputs") == tag.rsplit(":", 1)[1]
    again = build_all(engine)
    assert [item.name for item in again.values() if item.built] == []


def test_pylint_image_runs_the_hosts_pylint_and_astroid(engine, images):
    res = in_image(engine, images, "pylint", ["pylint", "--version"])
    assert res.ok, res.stderr
    assert f"pylint {version('pylint')}" in res.stdout
    assert f"astroid {version('astroid')}" in res.stdout
    # same minor Python: the pinned dependency set was resolved with the same environment markers
    minor = f"Python {sys.version_info.major}.{sys.version_info.minor}."
    assert minor in res.stdout


def test_tsc_image_runs_the_pinned_typescript(engine, images):
    pinned = _locked(PinKind.NPM, "typescript")  # what scripts/setup_toolchains.sh installs too
    res = in_image(engine, images, "tsc", ["tsc", "--version"])
    assert res.ok, res.stderr
    assert res.stdout.strip() == f"Version {pinned}"


def test_javac_image_runs_jdk17(engine, images):
    res = in_image(engine, images, "javac", ["javac", "-version"])
    assert res.ok, res.stderr
    assert re.match(rf"javac {re.escape(_locked(PinKind.SYSTEM, 'javac'))}\.", (res.stdout + res.stderr).strip())


def _locked(kind: PinKind, name: str) -> str:
    return next(p.version for p in pins() if p.kind is kind and p.name == name)


@pytest.mark.parametrize("compiler", ["mcs", "benchsmith-csc"])
def test_csharp_image_runs_mono_mcs_by_default(engine, images, compiler):
    res = in_image(engine, images, "csharp", [compiler, "--version"])
    assert res.ok, res.stderr
    assert res.stdout.startswith("Mono C# compiler version")


def test_toolchains_compile_in_their_containers(engine, images, tmp_path):
    """Each compiler reads a read-only source tree and reports a real diagnostic (an unresolved name)."""
    (tmp_path / "A.java").write_text("class A { Missing m; }\n")
    (tmp_path / "a.ts").write_text("import { Missing } from './nowhere';\nexport const x: number = 1;\n")
    (tmp_path / "a.cs").write_text("class A { Missing m; }\n")
    src = (Mount(str(tmp_path), "/src"),)
    java = in_image(engine, images, "javac", ["javac", "-proc:none", "-d", "/tmp/out", "A.java"],
                    mounts=src, workdir="/src")
    assert "cannot find symbol" in java.stderr and "A.java:1" in java.stderr
    ts = in_image(engine, images, "tsc", ["tsc", "--noEmit", "--pretty", "false", "a.ts"], mounts=src, workdir="/src")
    assert "a.ts(1,25): error TS2307" in ts.stdout
    cs = in_image(engine, images, "csharp", ["benchsmith-csc", "-target:library", "-out:/tmp/a.dll", "a.cs"],
                  mounts=src, workdir="/src")
    assert "a.cs(1,11): error CS0246" in cs.stdout + cs.stderr


def test_pylint_in_the_container_reports_what_local_pylint_reports(engine, images, tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg.b import present, absent\nimport pkg.nowhere\n\nVALUE = present.real\n")
    (pkg / "b.py").write_text("class present:\n    real = 1\n")
    args = ["--disable=all", "--enable=E0401,E0611,E1101", "--output-format=json", "--score=n", "--recursive=y", "."]
    local = run([sys.executable, "-m", "pylint", *args], cwd=tmp_path, env={"PYTHONPATH": ""}, timeout=120)
    boxed = in_image(engine, images, "pylint", ["pylint", *args], mounts=(Mount(str(tmp_path), "/src"),),
                     workdir="/src")

    def messages(text):
        return sorted((m["path"], m["line"], m["column"], m["symbol"], m["message"]) for m in json.loads(text))

    assert messages(boxed.stdout) == messages(local.stdout)
    assert {m[3] for m in messages(local.stdout)} == {"no-name-in-module", "import-error"}


def test_no_network_in_the_container(engine, images):
    code = (
        "import socket\n"
        "print(sorted(name for _, name in socket.if_nameindex()))\n"
        "for host in ('1.1.1.1', 'deb.debian.org'):\n"
        "    try:\n"
        "        socket.create_connection((host, 80), timeout=5)\n"
        "        print('connected', host)\n"
        "    except OSError as exc:\n"
        "        print('blocked', host, type(exc).__name__)\n"
    )
    res = python_in_sandbox(engine, images, code)
    assert res.ok, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "['lo']"  # a loopback interface and nothing else
    assert [line.split()[:2] for line in lines[1:]] == [["blocked", "1.1.1.1"], ["blocked", "deb.debian.org"]]


def test_mounts_are_read_only_and_so_is_the_root(engine, images, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "kept.py").write_text("original\n")
    code = (
        "import errno\n"
        "for path, mode in (('/repo/kept.py', 'w'), ('/repo/new.py', 'w'), ('/etc/new', 'w'), ('/usr/bin/x', 'w')):\n"
        "    try:\n"
        "        open(path, mode).write('x')\n"
        "        print(path, 'written')\n"
        "    except OSError as exc:\n"
        "        print(path, errno.errorcode[exc.errno])\n"
        "open('/tmp/scratch', 'w').write('tmp is writable')\n"
        "print('/tmp', open('/tmp/scratch').read())\n"
    )
    res = python_in_sandbox(engine, images, code, mounts=(Mount(str(repo), "/repo"),))
    assert res.ok, res.stderr
    assert res.stdout.splitlines() == [
        "/repo/kept.py EROFS", "/repo/new.py EROFS", "/etc/new EROFS", "/usr/bin/x EROFS", "/tmp tmp is writable",
    ]
    assert (repo / "kept.py").read_text() == "original\n"
    assert sorted(p.name for p in repo.iterdir()) == ["kept.py"]


def test_only_the_output_mount_is_writable_and_files_belong_to_the_caller(engine, images, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    res = python_in_sandbox(engine, images, "open('/out/result.txt', 'w').write('done')",
                            mounts=(Mount(str(out), "/out", writable=True),))
    assert res.ok, res.stderr
    written = out / "result.txt"
    assert written.read_text() == "done"
    assert (written.stat().st_uid, written.stat().st_gid) == (os.getuid(), os.getgid())


def test_no_privileges_in_the_container(engine, images):
    code = (
        "import os\n"
        "status = dict(l.split(':', 1) for l in open('/proc/self/status'))\n"
        "print(os.getuid(), os.getgid(), status['CapEff'].strip(), status['CapBnd'].strip(), "
        "status['NoNewPrivs'].strip())\n"
    )
    res = python_in_sandbox(engine, images, code)
    assert res.ok, res.stderr
    uid, gid, cap_eff, cap_bnd, nnp = res.stdout.split()
    # root's tools never run as root, not even inside the engine's namespaces: a throwaway uid instead
    from benchsmith.runner import caller_user

    assert f"{uid}:{gid}" == caller_user()
    assert os.getuid() != 0 or int(uid) != 0
    assert int(cap_eff, 16) == 0 and int(cap_bnd, 16) == 0
    assert nnp == "1"


def test_limits_reach_the_tool_as_ulimits(engine, images):
    code = "import resource as r\nprint(r.getrlimit(r.RLIMIT_NOFILE), r.getrlimit(r.RLIMIT_FSIZE), r.getrlimit(r.RLIMIT_CPU))"
    res = python_in_sandbox(engine, images, code, limits=Limits(open_files=64, file_size=1 << 20, cpu_seconds=7))
    assert res.ok, res.stderr
    assert res.stdout.strip() == f"(64, 64) ({1 << 20}, {1 << 20}) (7, 7)"


def test_memory_limit_kills_a_hog(engine, images):
    res = python_in_sandbox(engine, images, "x = bytearray(768 * 1024 * 1024); print('allocated')", memory="256m")
    assert "allocated" not in res.stdout
    assert res.returncode == 137  # SIGKILL from the cgroup's OOM killer


def test_a_timed_out_container_is_removed(engine, images):
    res = python_in_sandbox(engine, images, "import time; time.sleep(300)", timeout=3)
    assert res.timed_out
    name = container_name(res.argv)
    assert name
    left = run([engine.value, "ps", "-a", "-q", "--filter", f"name=^{name}$"], timeout=60)
    assert left.ok and left.stdout.strip() == ""
