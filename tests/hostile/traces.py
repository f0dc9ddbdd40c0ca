"""What a hostile program run in the sandbox may leave on the host, and how the sandbox tests look for it: a
process named by the program's token, a System V IPC object under the token's key, a file named by the token in
a shared directory, or the token's "I got through" line in the output.  Also the skips for isolation a machine
cannot give (each says why)."""

from __future__ import annotations

import os
import textwrap
import time

import pytest

from benchsmith.evaluate.sandbox import Sandbox


NAME_ME = "import ctypes\nctypes.CDLL(None).prctl(15, {token!r}.encode(), 0, 0, 0)\n"  # PR_SET_NAME


def new_token() -> str:
    return "bs" + os.urandom(5).hex()


def pids_named(token: str) -> list[str]:
    """Host pids of processes whose name (comm) is ``token`` -- set by the hostile program, so concurrent
    sandboxes of other test sessions do not count."""
    out = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/comm") as f:
                    if f.read().strip() == token:
                        out.append(pid)
            except OSError:
                continue
    return out


SHARED_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/run")


LIBC_IPC = textwrap.dedent("""
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
    libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    libc.shmat.restype = ctypes.c_void_p
    libc.msgget.argtypes = [ctypes.c_int, ctypes.c_int]
    libc.semget.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
    IPC_CREAT = 0o1000
    def err(what):
        e = ctypes.get_errno()
        raise OSError(e, what + ': ' + os.strerror(e))
""")


def ipc_keys() -> set[int]:
    """Keys of every System V IPC object of the host (shm, msg, sem)."""
    keys: set[int] = set()
    for kind in ("shm", "msg", "sem"):
        try:
            with open(f"/proc/sysvipc/{kind}") as f:
                next(f, None)
                keys |= {int(line.split()[0]) for line in f if line.strip()}
        except OSError:
            continue
    return keys


def ipc_key(token: str) -> int:
    return int(token[2:9], 16) | 0x10000000


def written_in_shared_dirs(token: str) -> list[str]:
    out = []
    for d in SHARED_DIRS:
        try:
            out += [f"{d}/{n}" for n in os.listdir(d) if token in n]
        except OSError:
            continue
    return out


def assert_nothing_left(token: str, stdout: str = "", stderr: str = "") -> None:
    """The program's "I got through" token never reached us, and no process, System V IPC object or shared-directory
    file named by it survived the run."""
    time.sleep(0.1)
    assert f"{token}-reached" not in stdout + stderr
    assert pids_named(token) == []
    assert ipc_key(token) not in ipc_keys()
    assert written_in_shared_dirs(token) == []


def try_writes(token: str) -> str:
    """Program text: try to leave files named by the token in every shared directory (errors ignored)."""
    return textwrap.dedent(f"""
        for d in {SHARED_DIRS!r}:
            try:
                open(d + '/{token}-file', 'w').write('x')
            except OSError:
                pass
    """)


def needs_uid(sandbox: Sandbox) -> None:
    if not sandbox.isolation.separate_uid:
        pytest.skip("sandbox runs as our own uid (not root): it cannot protect our files/processes; "
                    "use --backend container for that")


def needs_netns(sandbox: Sandbox) -> None:
    if not sandbox.isolation.network_namespace:
        pytest.skip("the kernel refused a network namespace here: " + sandbox.isolation.describe())


def needs(sandbox: Sandbox, what: str) -> None:
    iso = sandbox.isolation
    if what == "ipc" and not iso.ipc_namespace:
        pytest.skip("no IPC namespace here: " + iso.describe())
    if what == "root" and not iso.private_root:
        pytest.skip("no private root (needs root and the fork server): " + iso.describe())
    if what == "cgroup" and not iso.memory_cgroup:
        pytest.skip("no memory cgroup here (whole-tree memory limit): " + iso.describe())
