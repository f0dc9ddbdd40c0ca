"""The isolation pieces the sandbox takes from ``benchsmith.confine`` (cgroups, the probe's facts, uid ranges),
checked once for both users: the sandbox's private cgroup directory on this machine's real cgroup file system,
the toolchain run's cgroups made with the same files, and the pure parts (mount resolution, fact checks)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from benchsmith import confine, uids
from benchsmith.confine import MIB, CgroupLayout, Limits, PrivateCgroups, RunCgroups, confinement_problems
from benchsmith.confine import cgroups as cg
from benchsmith.confine.cgroup_tree import sweep
from benchsmith.evaluate.sandbox import uids as sandbox_uids
from benchsmith.evaluate.sandbox.limits import CGROUP_PREFIX
from tests.timing import scaled

LAYOUT = confine.cgroup_layout()


def _private() -> PrivateCgroups:
    tree, why = PrivateCgroups.create(LAYOUT, "benchsmith-test-")
    if tree is None:
        pytest.skip(f"no memory cgroup here: {why}")
    return tree


def test_our_cgroup_is_found_under_a_mount_of_a_subtree():
    assert cg._resolve("/", "/sys/fs/cgroup/memory", "/a/b") == "/sys/fs/cgroup/memory/a/b"
    # a container without a cgroup namespace mounts only its own subtree: our path is relative to it
    assert cg._resolve("/docker/abc", "/sys/fs/cgroup/memory", "/docker/abc/x") == "/sys/fs/cgroup/memory/x"
    assert cg._resolve("/docker/abc", "/sys/fs/cgroup/memory", "/docker/abc") == "/sys/fs/cgroup/memory/"
    assert cg._resolve("/docker/abc", "/sys/fs/cgroup/memory", "/docker/abcd") is None


def test_the_probe_facts_are_checked_alike():
    good = {"uid": uids.SANDBOX_UIDS.base + 3, "pid": 2, "ifaces": ["lo"]}
    assert confinement_problems(good, uids=uids.SANDBOX_UIDS, pid_namespace=True, network_namespace=True) == []
    bad = {"uid": 0, "pid": 4242, "ifaces": ["eth0", "lo"]}
    problems = confinement_problems(bad, uids=uids.SANDBOX_UIDS, pid_namespace=True, network_namespace=True)
    assert len(problems) == 3 and "uid 0" in problems[0] and "pid 4242" in problems[1] and "eth0" in problems[2]
    # what a mode does not claim is not asked of it
    assert confinement_problems(bad, uids=None, pid_namespace=False, network_namespace=False) == []


def test_the_uid_ranges_are_disjoint_and_each_lease_uses_its_own():
    sbx, tool = uids.SANDBOX_UIDS, uids.TOOLCHAIN_UIDS
    assert sbx.base + sbx.span <= tool.base or tool.base + tool.span <= sbx.base
    assert confine.CONTAINER_UID not in sbx and confine.CONTAINER_UID not in tool
    with sandbox_uids.UidLease() as a, confine.UidLease() as b:
        assert a.uid in sbx and b.uid in tool


def _join_and_allocate(cgroup: Path, megabytes: int) -> subprocess.CompletedProcess:
    prog = textwrap.dedent(f"""
        with open({str(cgroup / 'cgroup.procs')!r}, 'w') as f:
            f.write('0')
        chunks = [bytearray({megabytes} * 1024 * 1024)]
        print('allocated')
    """)
    return subprocess.run([sys.executable, "-I", "-S", "-c", prog], capture_output=True, text=True,
                          timeout=scaled(30))


@pytest.mark.skipif(os.geteuid() != 0, reason="making cgroups needs root")
def test_the_private_cgroup_limits_the_tree_and_is_removed():
    tree = _private()
    try:
        assert tree.root.is_dir() and tree.root.name.startswith(f"benchsmith-test-{os.getpid()}-")
        run = tree.child("run")
        tree.limit(run, 64 * MIB)
        assert int((run / tree.files.limit[0]).read_text()) == 64 * MIB
        small = _join_and_allocate(run, 8)
        assert small.returncode == 0 and tree.oom_kills(run) == 0
        big = _join_and_allocate(run, 256)
        assert big.returncode != 0 and "allocated" not in big.stdout
        assert tree.oom_kills(run) >= 1
        tree.remove(run)
        assert not run.exists()
    finally:
        tree.close()
    assert not tree.root.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="making cgroups needs root")
def test_directories_of_dead_processes_are_swept():
    tree = _private()
    base = tree.root.parent
    tree.close()
    dead = 2 ** 22 + 17  # above the kernel's pid_max: no process has it
    stale = base / f"{CGROUP_PREFIX}{dead}-cafe"
    stale.mkdir()
    (stale / "z1").mkdir()
    alive = base / f"{CGROUP_PREFIX}{os.getpid()}-beef"
    alive.mkdir()
    try:
        sweep(base, CGROUP_PREFIX)
        assert not stale.exists() and alive.exists()
    finally:
        cg.remove(stale)
        cg.remove(alive)


@pytest.mark.skipif(os.geteuid() != 0, reason="making cgroups needs root")
def test_a_toolchain_run_limits_memory_with_the_same_files():
    if LAYOUT.memory_files is None:
        pytest.skip(f"no memory cgroup for toolchains here ({LAYOUT.memory})")
    layout = CgroupLayout(LAYOUT.memory, LAYOUT.memory_parent, None)
    run = RunCgroups(layout, f"benchsmith-test-{os.getpid()}", Limits(memory_bytes=48 * MIB))
    try:
        assert run.memory_dir is not None
        assert int(Path(run.memory_dir, LAYOUT.memory_files.limit[0]).read_text()) == 48 * MIB
        assert not run.oom()
    finally:
        run.close()
    assert not os.path.exists(run.memory_dir)
