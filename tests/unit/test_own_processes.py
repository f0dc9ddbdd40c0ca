"""The survivor checks of the toolchain tests (tests/hostile/processes.py) count what this test process started,
escaped ones included, and never a toolchain process of another build on the same machine."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from benchsmith import confine
from tests.hostile import adopting_orphans, descendants, new_processes, toolchain_processes

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="only root can run a process as a toolchain uid")

# Forks a grandchild that takes a toolchain uid, leaves the session and sleeps; the child exits at once, so the
# grandchild is an orphan: re-parented to the nearest subreaper, or to init when there is none.
ESCAPE = textwrap.dedent("""
    import os, sys, time
    if os.fork() == 0:
        os.setsid()
        open({pidfile!r}, "w").write(str(os.getpid()))
        os.setgid({uid}); os.setuid({uid})
        time.sleep(120)
        os._exit(0)
    os._exit(0)
""")


def _uid(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None


def _escape(tmp_path, uid: int) -> int:
    """The pid of a toolchain-uid process that escaped the process that started it."""
    pidfile = tmp_path / f"escaped-{len(list(tmp_path.iterdir()))}"
    subprocess.run([sys.executable, "-c", ESCAPE.format(uid=uid, pidfile=str(pidfile))], check=True, timeout=60)
    deadline = time.monotonic() + 60
    while not (pidfile.exists() and pidfile.read_text() and _uid(int(pidfile.read_text())) == uid):
        assert time.monotonic() < deadline, "the escaping process never started"
        time.sleep(0.05)
    return int(pidfile.read_text())


@needs_root
def test_an_escaped_process_of_ours_is_counted_and_another_builds_is_not(tmp_path):
    uid = confine.UID_BASE + confine.UID_SPAN - 7
    # escaped before we adopt orphans: re-parented to init (or a subreaper above us), as another build's would be
    foreign = _escape(tmp_path, uid)
    ours = None
    try:
        with adopting_orphans():
            ours = _escape(tmp_path, uid)
            assert ours in toolchain_processes()
            assert ours in {e.pid for e in descendants()}  # re-parented to us, not to init
            assert foreign not in toolchain_processes()  # same uid, someone else's
            assert foreign not in {e.pid for e in descendants()}
            os.kill(ours, 9)
            deadline = time.monotonic() + 60
            while ours in toolchain_processes():  # killed and reaped: no survivor
                assert time.monotonic() < deadline
                time.sleep(0.05)
    finally:
        for pid in (foreign, ours):
            try:
                os.kill(pid, 9)
            except (OSError, TypeError):
                pass


def test_new_processes_are_those_started_since(tmp_path):
    before = {e.pid for e in descendants()}
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        assert [e.pid for e in new_processes(before)] == [child.pid]
    finally:
        child.kill()
        child.wait()
    assert new_processes(before) == []
