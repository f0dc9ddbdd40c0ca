"""The hardened runner: timeouts kill the whole process group, output is capped, absent tools are named."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchsmith.runner import Limits, ToolMissing, run
from tests.timing import scaled


def test_timeout_kills_grandchildren(tmp_path):
    pidfile = tmp_path / "pid"
    code = (
        "import subprocess, sys, time\n"
        f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(60)\n"
    )
    start = time.monotonic()
    res = run([sys.executable, "-c", code], timeout=1.5)
    assert res.timed_out and res.returncode is None
    assert time.monotonic() - start < scaled(10)
    grandchild = int(pidfile.read_text())
    time.sleep(0.2)
    assert not _alive(grandchild)


def _alive(pid: int) -> bool:
    """Running (a killed process may linger as a zombie until its new parent reaps it)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


def test_tool_dies_with_the_process_that_ran_it(tmp_path):
    """A build killed with SIGKILL must not leave its compiler running: the tool gets the parent-death signal."""
    pidfile = tmp_path / "tool.pid"
    tool_script = tmp_path / "tool.py"
    tool_script.write_text(f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(120)\n")
    driver = (
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})\n"
        "from benchsmith.runner import run\n"
        f"run([sys.executable, {str(tool_script)!r}], timeout=300)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", driver])
    deadline = time.monotonic() + 30
    while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    tool = int(pidfile.read_text())
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 10
    while _alive(tool) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(tool)


def test_output_is_capped_and_drained():
    res = run([sys.executable, "-c", "import sys\nfor _ in range(2000): sys.stdout.write('x' * 10000)"],
              output_cap=100_000, timeout=30)
    assert res.truncated and len(res.stdout) == 100_000


def test_stdin_is_closed_and_limits_apply():
    res = run([sys.executable, "-c", "import sys; print(repr(sys.stdin.read()))"], timeout=10)
    assert res.stdout.strip() == "''"
    res = run([sys.executable, "-c", "open('big', 'w').write('x' * 10_000_000)"], timeout=10,
              limits=Limits(file_size=1_000_000), cwd="/tmp")
    assert res.returncode != 0
    if os.path.exists("/tmp/big"):
        assert os.path.getsize("/tmp/big") <= 1_000_000
        os.unlink("/tmp/big")


def test_missing_tool_says_what_to_do():
    with pytest.raises(ToolMissing, match="make setup"):
        run(["definitely-not-a-tool-xyz"])


@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "polling fallback"])
def test_wait_exit_tells_an_exit_from_a_timeout(monkeypatch, pidfd):
    from benchsmith.runner.capture import wait_exit

    if not pidfd:
        monkeypatch.delattr(os, "pidfd_open", raising=False)  # an older kernel or another OS
    done = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    assert wait_exit(done, 30) is True and done.returncode == 3
    slow = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert wait_exit(slow, 0.2) is False and slow.returncode is None
    finally:
        slow.kill()
        slow.wait()


def test_wait_exit_copes_with_a_pidfd_above_fd_setsize():
    # a long build holds many files open: select() would refuse a descriptor numbered 1024 or more
    import resource

    from benchsmith.runner.capture import wait_exit

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4096)), hard))
    held = []
    try:
        while not held or held[-1] < 1100:
            held.append(os.dup(0))
        done = subprocess.Popen([sys.executable, "-c", "pass"])
        assert wait_exit(done, 30) is True and done.returncode == 0
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
