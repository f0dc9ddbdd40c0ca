"""Kernel keyrings (issue 22): keys belong to no pid, mount or IPC namespace, so a key one sandboxed program adds
to the session keyring it inherited, or to its uid's keyring, must not outlive the run.  Each run joins a session
keyring of its own and the key syscalls are refused (ENOSYS); the next run, and the caller, find nothing."""

from __future__ import annotations

import errno
import json
import os
import struct
import subprocess
import sys
import textwrap

import pytest

from benchsmith.evaluate.sandbox import Verdict
from benchsmith.evaluate.sandbox.zygote_keys import (KEY_SYSCALLS, SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO,
                                                      X32_SYSCALL_BIT, key_filter)
from tests.hostile.traces import needs

RINGS = {"thread": -1, "process": -2, "session": -3, "user": -4, "user_session": -5}

# the candidate's side: add_key(2) straight through syscall(2), as a C program would
ADD = textwrap.dedent("""
    import ctypes, json
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    out = {{}}
    for name, ring in {rings!r}.items():
        r = libc.syscall(ctypes.c_long({add_key}), b"user", ("{token}-" + name).encode(), b"secret", 6,
                         ctypes.c_long(ring))
        out[name] = [r, ctypes.get_errno()]
    print(json.dumps(out))
""")
FIND = textwrap.dedent("""
    import ctypes, json
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    out = {{}}
    for name in {rings!r}:
        r = libc.syscall(ctypes.c_long({request_key}), b"user", ("{token}-" + name).encode(), None, 0)
        out[name] = [r, ctypes.get_errno()]
    print(json.dumps(out))
""")

# the caller's side, in a process of its own: a login session keyring (what pam_keyinit gives an ssh session),
# then two sandboxed runs, then a look for the keys from the caller itself
CALLER = textwrap.dedent("""
    import ctypes, json, sys
    from benchsmith.evaluate.sandbox import Sandbox
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    nr = json.loads(sys.argv[1])
    joined = libc.syscall(ctypes.c_long(nr[2]), ctypes.c_long(1), b"bs-test-login")  # KEYCTL_JOIN_SESSION_KEYRING
    with Sandbox(timeout=10, workers=1, forkserver=sys.argv[2] == "fork") as sb:
        add, find, control = (sb.run(p) for p in json.loads(sys.argv[3]))
        mode = sb.isolation.mode.value
    ours = {name: libc.syscall(ctypes.c_long(nr[1]), b"user", (sys.argv[4] + "-" + name).encode(), None, 0) > 0
            for name in json.loads(sys.argv[5])}
    print(json.dumps({"joined": joined > 0, "mode": mode, "caller_found": ours,
                      "runs": [[r.verdict.value, r.stdout, r.stderr[-500:]] for r in (add, find, control)]}))
""")


def _machine_numbers() -> tuple[int, int, int]:
    machine = os.uname().machine
    if machine not in KEY_SYSCALLS:
        pytest.skip(f"key syscall numbers of {machine} are not known here")
    return KEY_SYSCALLS[machine][1]


@pytest.mark.parametrize("launch", ["fork", "exec"])
def test_a_key_added_by_one_run_is_found_by_no_later_run_nor_the_caller(strict, launch):
    needs(strict, "root")
    add_key, request_key, keyctl = _machine_numbers()
    token = "bs" + os.urandom(5).hex()
    programs = [ADD.format(rings=RINGS, add_key=add_key, token=token),
                FIND.format(rings=RINGS, request_key=request_key, token=token),
                "print('control ran')\n"]
    out = subprocess.run(
        [sys.executable, "-c", CALLER, json.dumps([add_key, request_key, keyctl]), launch, json.dumps(programs),
         token, json.dumps(list(RINGS))],
        capture_output=True, text=True, timeout=300, cwd=os.getcwd())
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    if not report["joined"]:
        pytest.skip("this kernel gives no session keyring to join (no keys to leak)")
    (added, add_out, add_err), (found, find_out, find_err), (control, control_out, _) = report["runs"]
    assert added == found == control == Verdict.PASSED.value, (add_err, find_err)
    # refused in the run, as by a kernel without keys: nothing was added anywhere
    assert json.loads(add_out) == {name: [-1, errno.ENOSYS] for name in RINGS}
    assert json.loads(find_out) == {name: [-1, errno.ENOSYS] for name in RINGS}
    assert report["caller_found"] == {name: False for name in RINGS}
    assert control_out == "control ran\n"


def _run_bpf(code: bytes, arch: int, nr: int) -> int:
    """A classic-BPF interpreter for the few instructions the key filter uses, over ``struct seccomp_data``."""
    prog = [struct.unpack("=HBBI", code[i:i + 8]) for i in range(0, len(code), 8)]
    data = {0: nr, 4: arch}
    acc, pc = 0, 0
    while True:
        op, jt, jf, k = prog[pc]
        if op == 0x20:
            acc = data[k]
        elif op in (0x15, 0x35):
            pc += jt if (acc == k if op == 0x15 else acc >= k) else jf
        elif op == 0x06:
            return k
        else:
            raise AssertionError(f"unexpected BPF op {op:#x}")
        pc += 1


@pytest.mark.parametrize("machine", sorted(KEY_SYSCALLS))
def test_the_filter_refuses_exactly_the_key_syscalls_of_its_machine(machine):
    arch, numbers = KEY_SYSCALLS[machine]
    code = key_filter(machine)
    deny = SECCOMP_RET_ERRNO | errno.ENOSYS
    for nr in numbers:
        assert _run_bpf(code, arch, nr) == deny
    for nr in (0, 1, 2, 59, 60, min(numbers) - 1, max(numbers) + 1, 435):
        assert _run_bpf(code, arch, nr) == SECCOMP_RET_ALLOW, nr
    assert _run_bpf(code, 0x40000003, 0) == deny  # i386 on x86_64: another table, refused altogether
    if machine == "x86_64":
        assert _run_bpf(code, arch, X32_SYSCALL_BIT | numbers[0]) == deny
        assert _run_bpf(code, arch, X32_SYSCALL_BIT) == deny
    assert key_filter("pdp11") is None


@pytest.mark.parametrize("outer", [errno.EPERM, errno.ENOSYS])
def test_key_syscalls_refused_by_an_outer_filter_are_no_setup_failure(outer):
    """Inside a container engine's default seccomp profile the key syscalls already answer EPERM: a run must
    still start (nothing can be added there) and add its own filter on top."""
    _machine_numbers()
    code = key_filter(os.uname().machine)
    outer_code = code.replace(struct.pack("=I", SECCOMP_RET_ERRNO | errno.ENOSYS),
                              struct.pack("=I", SECCOMP_RET_ERRNO | outer))
    child = textwrap.dedent(f"""
        import ctypes, sys
        from benchsmith.evaluate.sandbox.zygote_keys import SockFprog, isolate_keyrings
        libc = ctypes.CDLL(None, use_errno=True)
        assert libc.prctl(38, 1, 0, 0, 0) == 0  # no_new_privs, as the sandbox sets it
        code = {outer_code!r}
        buf = ctypes.create_string_buffer(code, len(code))
        prog = SockFprog(len(code) // 8, ctypes.cast(buf, ctypes.c_char_p))
        assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0
        print(isolate_keyrings())
    """)
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout == "seccomp\n", out.stderr[-1000:]
