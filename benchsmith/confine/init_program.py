"""The init program of a confined toolchain run (see launch.py).  Run as ``python -I -S -B -c <this> PLAN -- ARGV``
by root; never imported.  Standard library only, nothing from site-packages.

P0 (this process, root): joins the run's cgroups, unshares mount/pid/net/ipc/uts, builds the new root, forks P1.
P1 (PID 1 of the new pid namespace): mounts /proc, pivots into the new root, becomes the throwaway uid, forks P2
and reaps until P2 exits; its exit ends the namespace and so every process the tool left behind.
P2: a user namespace when the kernel allows one, rlimits, no new privileges, then exec of the tool.
Exit status: the tool's (128 + signal when it was killed); 125 and one line on stderr when setup failed.
"""

import ctypes
import json
import os
import resource
import signal
import socket
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_DUMPABLE = 1, 38, 4
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "ppc64le": 203, "s390x": 217, "riscv64": 41}
SETUP_FAILED = 125

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
libc.unshare.argtypes = [ctypes.c_int]


class SetupError(Exception):
    pass


def check(rc, what):
    if rc != 0:
        err = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(err)}")


def b(s):
    return None if s is None else os.fsencode(s)


def mount(src, dst, fstype, flags, data=None):
    check(libc.mount(b(src), b(dst), b(fstype), flags, b(data)), f"mount {src or fstype} on {dst}")


def prctl(option, arg):
    check(libc.prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)),
          f"prctl {option}")


def inside(root, path):
    return os.path.join(root, path.lstrip("/"))


def makedirs(path):
    os.makedirs(path, mode=0o755, exist_ok=True)


def bind(root, path, writable=False, device=False):
    """Show host ``path`` at the same path under ``root``, read-only unless ``writable``; ``device``: a device node
    (/dev/null ...), which a nodev mount would make unopenable."""
    if not os.path.lexists(path):
        return
    target = inside(root, path)
    if os.path.islink(path) and os.path.dirname(path) == "/":
        # /bin -> usr/bin on merged-/usr systems: the same link, not a second copy
        if not os.path.lexists(target):
            os.symlink(os.readlink(path), target)
        return
    real = os.path.realpath(path)
    if os.path.isdir(real):
        if not os.path.isdir(target):
            makedirs(target)
    else:
        makedirs(os.path.dirname(target))
        if not os.path.exists(target):
            os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o644))
    mount(real, target, None, MS_BIND)
    flags = MS_REMOUNT | MS_BIND | MS_NOSUID | (0 if device else MS_NODEV) | (0 if writable else MS_RDONLY)
    if libc.mount(None, b(target), None, flags, None) != 0:
        # keep the flags the source mount is locked to (noexec ...), add ours
        st = os.statvfs(real)
        extra = (MS_NOEXEC if st.f_flag & os.ST_NOEXEC else 0)
        mount(None, target, None, flags | extra)


def covered(path, done):
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in done)


def build_root(plan):
    root = plan["root"]
    uid = plan["uid"]
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=0755")
    # Every mount in one order, parents first: a scratch tmpfs on /tmp comes before the tree bound under it.
    # A read path under one already shown read-only is shown with it.
    entries = [(p, "read") for p in plan["read"]] + [(p, "scratch") for p in plan["scratch"]] + \
        [(p, "write") for p in plan["write"]]
    done = []
    for path, kind in sorted(entries, key=lambda e: (e[0].rstrip("/").count("/"), e[0], e[1])):
        if kind == "read":
            if covered(path, done) and covered(os.path.realpath(path), done):
                continue
            if os.path.lexists(path):
                bind(root, path)
                done += [path, os.path.realpath(path)]
        elif kind == "scratch":
            target = inside(root, path)
            makedirs(target)
            shared = path in ("/tmp", "/dev/shm")
            opts = f"size={int(plan['scratch_bytes'])}," + ("mode=1777" if shared else f"mode=0700,uid={uid},gid={uid}")
            mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, opts)
        elif os.path.isdir(path):
            bind(root, path, writable=True)
    etc = inside(root, "/etc")
    makedirs(etc)
    with open(os.path.join(etc, "passwd"), "w") as fh:
        fh.write(f"root:x:0:0:root:/nonexistent:/usr/sbin/nologin\ntool:x:{uid}:{uid}:tool:/tmp:/usr/sbin/nologin\n")
    with open(os.path.join(etc, "group"), "w") as fh:
        fh.write(f"root:x:0:\ntool:x:{uid}:\n")
    with open(os.path.join(etc, "hosts"), "w") as fh:
        fh.write("127.0.0.1 localhost benchsmith\n")
    for name in plan["etc"]:
        bind(root, "/etc/" + name)
    dev = inside(root, "/dev")
    makedirs(dev)
    for name in plan["dev"]:
        if os.path.exists("/dev/" + name):
            bind(root, "/dev/" + name, writable=True, device=True)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        if not os.path.lexists(os.path.join(dev, name)):
            os.symlink(target, os.path.join(dev, name))
    makedirs(inside(root, "/proc"))
    # where the tool starts, when it is none of the above (an empty directory is all it gets)
    if not os.path.exists(inside(root, plan["cwd"])):
        makedirs(inside(root, plan["cwd"]))


def set_rlimits(plan):
    r = plan["rlimits"]
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    for res, key in ((resource.RLIMIT_FSIZE, "fsize"), (resource.RLIMIT_NOFILE, "nofile"),
                     (resource.RLIMIT_NPROC, "nproc"), (resource.RLIMIT_AS, "as")):
        if r.get(key):
            resource.setrlimit(res, (int(r[key]), int(r[key])))
    if r.get("cpu"):
        # soft < hard: SIGXCPU first, then SIGKILL
        resource.setrlimit(resource.RLIMIT_CPU, (int(r["cpu"]), int(r["cpu"]) + 5))


def user_namespace(uid):
    """A user namespace of our own, mapping only the throwaway uid to itself (best effort: kernels may refuse an
    unprivileged one).  Its only effect is that no capability the tool could ever get applies outside it."""
    if libc.unshare(CLONE_NEWUSER) != 0:
        return
    # a process that changed uid is not dumpable, and then its /proc files (uid_map ...) belong to root
    prctl(PR_SET_DUMPABLE, 1)
    with open("/proc/self/uid_map", "w") as fh:
        fh.write(f"{uid} {uid} 1\n")
    with open("/proc/self/setgroups", "w") as fh:
        fh.write("deny")
    with open("/proc/self/gid_map", "w") as fh:
        fh.write(f"{uid} {uid} 1\n")


def status_code(status):
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return 1


def pid1(plan, argv, env):
    """PID 1 of the namespace."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    root = plan["root"]
    mount("proc", inside(root, "/proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    # the root itself read-only: the tool writes only into its tmpfs directories and the named write paths
    mount(None, root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "size=16m,mode=0755")
    os.chdir(root)
    machine = os.uname().machine
    check(libc.syscall(ctypes.c_long(SYS_PIVOT_ROOT.get(machine, 155)), b".", b"."), "pivot_root")
    check(libc.umount2(b".", MNT_DETACH), "detach the old root")
    os.chdir("/")
    uid = plan["uid"]
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    try:
        os.chdir(plan["cwd"])
    except OSError as exc:
        raise SetupError(f"cannot enter {plan['cwd']}: {exc}")
    child = os.fork()
    if child == 0:
        try:
            if plan.get("userns", True):
                user_namespace(uid)
            prctl(PR_SET_NO_NEW_PRIVS, 1)
            set_rlimits(plan)
            os.umask(0o077)
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            os.execve(argv[0], argv, env)
        except Exception as exc:  # noqa: BLE001
            os.write(2, f"benchsmith confine: cannot start {argv[0]}: {exc}\n".encode())
            os._exit(127)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: os._exit(128 + signal.SIGTERM))
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            os._exit(1)
        except InterruptedError:
            continue
        if pid == child:
            os._exit(status_code(status))


def main():
    plan = json.loads(sys.argv[1])
    assert sys.argv[2] == "--"
    argv = sys.argv[3:]
    env = dict(os.environ)
    try:
        pid = str(os.getpid())
        for procs in plan["cgroup_procs"]:
            with open(procs, "w") as fh:
                fh.write(pid)
        check(libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS), "unshare")
        mount(None, "/", None, MS_REC | MS_PRIVATE)
        socket.sethostname(plan["hostname"])
        build_root(plan)
    except (SetupError, OSError) as exc:
        os.write(2, f"benchsmith confine: setup failed: {exc}\n".encode())
        os._exit(SETUP_FAILED)
    child = os.fork()
    if child == 0:
        try:
            pid1(plan, argv, env)
        except BaseException as exc:  # noqa: BLE001
            os.write(2, f"benchsmith confine: setup failed: {exc}\n".encode())
            os._exit(SETUP_FAILED)
        os._exit(1)
    # P0 only waits; it keeps the tool's exit status and stops when the namespace's PID 1 stops
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: (os.kill(child, signal.SIGKILL), os._exit(128 + signal.SIGTERM)))
    while True:
        try:
            _pid, status = os.waitpid(child, 0)
            break
        except InterruptedError:
            continue
    os._exit(status_code(status))


if __name__ == "__main__":
    main()
