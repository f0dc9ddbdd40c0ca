"""Hostile programs that exhaust a resource (processes, CPU time, output, memory, disk, System V shared memory) or
outlive their run must be contained by the local sandbox, each with the expected verdict, and leave nothing.

What is checked against what the isolation can assure here (see ``Sandbox.isolation``): as root, each run has a
throwaway uid, so the program cannot signal pytest; as non-root that guarantee does not exist and those tests
skip, saying why.  Whole-tree memory limits need a memory cgroup, and skip without one.
"""

from __future__ import annotations

import textwrap
import time


from benchsmith.evaluate.sandbox import Sandbox, Verdict
from tests.hostile.traces import (LIBC_IPC, NAME_ME, assert_nothing_left, ipc_key, needs, needs_uid, new_token,
                                  pids_named, try_writes)
from tests.timing import scaled


def test_fork_bomb_is_contained_and_leaves_nothing(sandbox):
    token = new_token()
    prog = NAME_ME.format(token=token) + textwrap.dedent("""
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """)
    start = time.monotonic()
    res = sandbox.run(prog, timeout=2)
    assert time.monotonic() - start < scaled(8)
    assert res.verdict in (Verdict.TIMEOUT, Verdict.FAILED)
    assert not res.passed
    time.sleep(0.2)
    assert pids_named(token) == []


def test_infinite_loop_times_out(sandbox):
    start = time.monotonic()
    res = sandbox.run("while True:\n    pass\n", timeout=1)
    assert res.verdict is Verdict.TIMEOUT
    assert res.returncode is None
    assert time.monotonic() - start < scaled(4)


def test_sleep_forever_times_out(sandbox):
    start = time.monotonic()
    res = sandbox.run("import time\ntime.sleep(10**6)\n", timeout=1)
    assert res.verdict is Verdict.TIMEOUT
    assert time.monotonic() - start < scaled(4)


def test_unbounded_output_is_capped_and_killed(sandbox):
    start = time.monotonic()
    res = sandbox.run("while True:\n    print('x' * 4096)\n", timeout=scaled(15))
    assert res.verdict is Verdict.OUTPUT_LIMIT
    assert len(res.stdout) <= 16 * 1024
    assert time.monotonic() - start < scaled(2.5)  # killed at the cap, not at the timeout


def test_unbounded_stderr_is_capped(sandbox):
    res = sandbox.run("import sys\nwhile True:\n    sys.stderr.write('y' * 4096)\n", timeout=scaled(3))
    assert res.verdict is Verdict.OUTPUT_LIMIT
    assert len(res.stderr) <= 16 * 1024


def test_memory_hog_hits_the_memory_limit(sandbox):
    res = sandbox.run("chunks = []\nwhile True:\n    chunks.append(bytearray(50 * 2**20))\n", timeout=scaled(3))
    assert res.verdict is Verdict.MEMORY
    assert "MemoryError" in res.stderr


def test_huge_file_hits_the_file_size_limit(sandbox):
    res = sandbox.run("with open('big.bin', 'wb') as f:\n    f.write(b'x' * (64 * 2**20))\n", timeout=scaled(3))
    assert res.verdict is Verdict.OUTPUT_LIMIT


def test_closing_its_own_stdout_is_handled(sandbox):
    start = time.monotonic()
    res = sandbox.run("import os\nos.close(1)\nos.close(2)\nwhile True:\n    pass\n", timeout=1)
    assert res.verdict is Verdict.TIMEOUT
    assert time.monotonic() - start < scaled(4)
    res = sandbox.run("import os\nos.close(0)\nos.close(1)\nos.close(2)\nraise SystemExit(0)\n")
    assert res.verdict is Verdict.PASSED


def test_killing_its_parent_does_not_kill_us(sandbox):
    needs_uid(sandbox)
    res = sandbox.run("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\nprint('sent')\n")
    assert res.verdict is Verdict.FAILED
    assert "PermissionError" in res.stderr
    # and kill(-1) (every process it may signal) must not reach us either
    res = sandbox.run("import os, signal\nos.kill(-1, signal.SIGKILL)\n")
    assert res.verdict in (Verdict.FAILED, Verdict.PASSED)  # it may only kill itself


def test_daemon_that_escapes_the_process_group_is_killed(sandbox):
    needs_uid(sandbox)
    token = new_token()
    prog = NAME_ME.format(token=token) + textwrap.dedent("""
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                time.sleep(300)
            os._exit(0)
        print('parent done')
    """)
    start = time.monotonic()
    res = sandbox.run(prog, timeout=scaled(5))
    assert res.verdict is Verdict.PASSED
    assert time.monotonic() - start < scaled(3)  # the daemon holding the pipes did not stall us
    time.sleep(0.2)
    assert pids_named(token) == []


def test_hostile_batch_keeps_order_and_verdicts(sandbox):
    programs = ["print(1)", "raise SystemExit(2)", "while True: pass", "print(2)"]
    res = sandbox.run_many(programs, timeout=scaled(1))
    assert [r.verdict for r in res] == [Verdict.PASSED, Verdict.FAILED, Verdict.TIMEOUT, Verdict.PASSED]
    assert res[0].stdout.strip() == "1" and res[3].stdout.strip() == "2"


def test_sysv_shared_memory_cannot_be_pinned_beyond_the_memory_limit(strict):
    needs(strict, "ipc")
    token = new_token()
    prog = NAME_ME.format(token=token) + LIBC_IPC + textwrap.dedent(f"""
        total = 0
        for i in range(8):  # 8 x 100 MB with --memory-mb 256
            sid = libc.shmget({ipc_key(token)} + i, 100 << 20, IPC_CREAT | 0o600)
            if sid < 0: err('shmget')
            addr = libc.shmat(sid, None, 0)
            if addr in (None, ctypes.c_void_p(-1).value): err('shmat')
            ctypes.memset(addr, 1, 100 << 20)
            total += 100
        print('{token}-reached', total)
    """)
    res = strict.run(prog)
    assert res.verdict in (Verdict.FAILED, Verdict.MEMORY) and res.verdict is not Verdict.PASSED
    assert "No space left on device" in res.stderr or "Invalid argument" in res.stderr \
        or res.verdict is Verdict.MEMORY, res.stderr
    assert_nothing_left(token, res.stdout)


def _six_children_of_200_mb(token: str) -> str:
    """A program whose six forked children hold 200 MB each for two seconds; it prints ``<token>-reached`` when
    all of them lived."""
    return NAME_ME.format(token=token) + textwrap.dedent(f"""
        import os, time
        kids = []
        for _ in range(6):
            pid = os.fork()
            if pid == 0:
                block = b'\\x01' * (200 << 20)
                time.sleep(2)
                os._exit(0)
            kids.append(pid)
        ok = all(os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) == 0 for p in kids)
        print('{token}-reached' if ok else 'killed')
        raise SystemExit(0 if ok else 3)
    """)


def test_forked_children_share_one_memory_limit(strict):
    """Six children of 200 MB each under --memory-mb 256: the tree, not each process, is limited."""
    needs(strict, "cgroup")
    token = new_token()
    res = strict.run(_six_children_of_200_mb(token), timeout=scaled(20))
    assert res.verdict is Verdict.MEMORY, (res.verdict, res.detail, res.stderr[-500:])
    assert_nothing_left(token, res.stdout)


def test_forked_children_share_one_memory_limit_without_the_fork_server():
    """The exec launch path (no fork server) joins a memory cgroup before exec: the same whole-tree limit."""
    with Sandbox(timeout=scaled(20), memory_mb=256, forkserver=False, workers=1) as sb:
        needs(sb, "cgroup")
        token = new_token()
        res = sb.run(_six_children_of_200_mb(token))
    assert res.verdict is Verdict.MEMORY, (res.verdict, res.detail, res.stderr[-500:])
    assert_nothing_left(token, res.stdout)


def test_shared_memory_counts_against_the_tree_limit(strict):
    """150 MB of System V shared memory, touched and detached (in no process's address space any more), plus
    150 MB of ordinary memory, under --memory-mb 256: each is under every per-process limit, together over."""
    needs(strict, "cgroup")
    token = new_token()
    prog = NAME_ME.format(token=token) + LIBC_IPC + textwrap.dedent(f"""
        sid = libc.shmget({ipc_key(token)}, 150 << 20, IPC_CREAT | 0o600)
        if sid < 0: err('shmget')
        addr = libc.shmat(sid, None, 0)
        ctypes.memset(addr, 1, 150 << 20)
        libc.shmdt.argtypes = [ctypes.c_void_p]
        libc.shmdt(addr)
        block = b'\\x01' * (150 << 20)
        print('{token}-reached')
    """)
    res = strict.run(prog, timeout=scaled(20))
    assert res.verdict is Verdict.MEMORY, (res.verdict, res.detail, res.stderr[-300:])
    assert_nothing_left(token, res.stdout)


def test_nothing_survives_a_run_that_leaves_daemons_files_and_ipc(strict):
    needs(strict, "ipc")
    token = new_token()
    prog = NAME_ME.format(token=token) + LIBC_IPC + try_writes(token) + textwrap.dedent(f"""
        import time
        libc.shmget({ipc_key(token)}, 4096, IPC_CREAT | 0o666)
        for _ in range(3):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    time.sleep(300)
                os._exit(0)
        open('/tmp/{token}-left', 'w').write('x')
    """)
    res = strict.run(prog)
    assert res.verdict is Verdict.PASSED, res.stderr
    assert_nothing_left(token, res.stdout)
    after = strict.run(f"import os\nprint(sorted(n for n in os.listdir('/tmp') if '{token}' in n))\n")
    assert after.stdout.strip() == "[]"
