"""Kernel keyrings kept out of sandboxed runs.

Keys are not namespaced by the pid, mount, network or IPC namespaces: a key a program adds to the session keyring
it inherited (the caller's login session, shared by every run and by the caller) or to its uid's user keyring (the
throwaway uids are reused) outlives the run, and a later run -- or the caller -- could read it.  So every run
first joins a fresh anonymous session keyring of its own, then installs a seccomp filter that refuses the three
key syscalls (``add_key``, ``request_key``, ``keyctl``) with ENOSYS, as a kernel without keys would; syscalls of
another ABI (i386, x32), which the filter could not tell apart by number, are refused altogether.  Where no filter
can be installed (an unknown machine, a kernel without seccomp) the uid's own keyrings are cleared instead.

Both a module (the exec launch modes import it) and a part of the fork server's program
(``forkserver.ZYGOTE_PARTS``): standard library only, self-contained, no ``from __future__``.
"""

import ctypes
import errno
import os
import struct

# machine -> (AUDIT_ARCH_*, (add_key, request_key, keyctl))
KEY_SYSCALLS = {
    "x86_64": (0xC000003E, (248, 249, 250)),
    "aarch64": (0xC00000B7, (217, 218, 219)),
    "riscv64": (0xC00000F3, (217, 218, 219)),
    "ppc64le": (0xC0000015, (269, 270, 271)),
    "s390x": (0x80000016, (278, 279, 280)),
}
X32_SYSCALL_BIT = 0x40000000  # x86_64 only: x32 syscalls carry the native arch with this bit set
KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_CLEAR = 1, 7
# a kernel without keys, or key syscalls already refused by an outer filter (a container engine's default
# seccomp profile answers EPERM): nothing a run could add, nothing to isolate
NO_KEYS = (errno.ENOSYS, errno.EOPNOTSUPP, errno.EPERM, errno.EACCES)
KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING = -4, -5
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000
BPF_LD_ABS_W, BPF_JEQ_K, BPF_JGE_K, BPF_RET_K = 0x20, 0x15, 0x35, 0x06


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]


def key_filter(machine):
    """The classic-BPF program (bytes of ``struct sock_filter``) refusing the key syscalls, or None when the
    machine's numbers are not known here."""
    if machine not in KEY_SYSCALLS:
        return None
    arch, numbers = KEY_SYSCALLS[machine]
    deny = SECCOMP_RET_ERRNO | errno.ENOSYS
    # ld arch; foreign arch -> deny; ld nr; (x86_64: x32 -> deny); key syscalls -> deny; else allow
    prog = [(BPF_LD_ABS_W, 0, 0, 4), (BPF_JEQ_K, 1, 0, arch), (BPF_RET_K, 0, 0, deny), (BPF_LD_ABS_W, 0, 0, 0)]
    if machine == "x86_64":
        prog.append((BPF_JGE_K, len(numbers) + 1, 0, X32_SYSCALL_BIT))
    for k, nr in enumerate(numbers):
        prog.append((BPF_JEQ_K, len(numbers) - k, 0, nr))
    prog += [(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW), (BPF_RET_K, 0, 0, deny)]
    return b"".join(struct.pack("=HBBI", *ins) for ins in prog)


def isolate_keyrings():
    """In the run's first process, after its uid is set and before the program: a private session keyring,
    then no key syscalls.  Returns how ("seccomp" or "cleared"); raises only when neither could be done."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    numbers = KEY_SYSCALLS.get(os.uname().machine, (0, (None, None, None)))[1]
    keyctl = numbers[2]
    if keyctl is not None and libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING),
                                       None) < 0:
        if ctypes.get_errno() not in NO_KEYS:
            raise OSError(ctypes.get_errno(), "keyctl(JOIN_SESSION_KEYRING)")
    code = key_filter(os.uname().machine)
    if code is not None:
        buf = ctypes.create_string_buffer(code, len(code))
        prog = SockFprog(len(code) // 8, ctypes.cast(buf, ctypes.c_char_p))
        if libc.prctl(ctypes.c_int(PR_SET_SECCOMP), ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(prog),
                      ctypes.c_ulong(0), ctypes.c_ulong(0)) == 0:
            return "seccomp"
        if ctypes.get_errno() not in (errno.EINVAL, errno.ENOSYS):
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP)")
    if keyctl is None:
        raise OSError(errno.ENOSYS, "key syscalls of machine %r unknown: cannot isolate keyrings"
                      % os.uname().machine)
    for ring in (KEY_SPEC_USER_KEYRING, KEY_SPEC_USER_SESSION_KEYRING):
        cleared = libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(KEYCTL_CLEAR), ctypes.c_long(ring))
        if cleared < 0 and ctypes.get_errno() not in NO_KEYS + (errno.ENOKEY,):
            raise OSError(ctypes.get_errno(), "keyctl(CLEAR)")
    return "cleared"
