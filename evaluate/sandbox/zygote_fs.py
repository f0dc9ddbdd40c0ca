"""The fork server's private file system: the minimal read-only root it builds and pivots into.

Not a module of its own: part of the fork server's program, which is this file, ``zygote_cgroup.py`` and
``zygote.py`` in that order (``forkserver.ZYGOTE_PARTS``), run with ``python -c``; it uses that file's ``libc``,
``check`` and ``MS_*``.
"""

import ctypes
import os
import sys


MOUNT_FLAGS = {"nosuid": 2, "nodev": 4, "noexec": 8, "noatime": 1024, "nodiratime": 2048,
               "relatime": 1 << 21, "strictatime": 1 << 24}
MS_RDONLY, MS_REMOUNT, MS_BIND = 1, 32, 4096
MNT_DETACH = 2
PRIVATE_FS = [False]
SYSTEM_TOPS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc")
DEVICES = ("null", "zero", "full", "random", "urandom")
NEW_ROOT = "/tmp"  # staging mount point: any existing directory; covered by our tmpfs, in our namespace only
# top-level entries of the scratch directories that hold a bound interpreter tree (root's, read-only): never cleared
KEEP_IN_SCRATCH = set()
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "ppc64le": 203, "s390x": 217, "riscv64": 41}


def mount(source, target, fstype, flags, data, what):
    enc = lambda x: None if x is None else (x if isinstance(x, bytes) else x.encode())  # noqa: E731
    check(libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)), what)


def under(path, tops):
    return any(path == t or path.startswith(t.rstrip("/") + "/") for t in tops)


def interpreter_dirs():
    """What this interpreter needs to run: its prefixes and the directory of its binary (and of the link)."""
    out = []
    for d in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
              os.path.dirname(sys.executable), os.path.dirname(os.path.realpath(sys.executable))):
        d = os.path.realpath(d) if d else ""
        if d and d != "/" and os.path.isdir(d) and d not in out:
            out.append(d)
    return out


def bind_tree(src, fd, root):
    """Bind ``src`` (held open as ``fd``: the staging tmpfs may cover it by now) at the same path in root."""
    dst = root + src
    os.makedirs(dst, exist_ok=True)
    try:
        mount("/proc/self/fd/%d" % fd, dst, None, MS_BIND | MS_REC, None, "bind " + src)
    finally:
        os.close(fd)


def private_filesystem(cfg):
    """In our own mount namespace, pivot into a minimal read-only root (see the module docstring); returns the
    mounts that could not be made read-only."""
    scratch_mb = int(cfg.get("scratch_mb", 64))
    check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "make / private")
    root = NEW_ROOT
    # everything to show is opened (O_PATH) before the staging tmpfs goes over /tmp: an interpreter or a venv
    # under /tmp stays reachable as /proc/self/fd/N
    links, trees, devices = {}, [], {}
    for top in SYSTEM_TOPS:
        src = "/" + top
        if os.path.islink(src):
            links[src] = os.readlink(src)
        elif os.path.isdir(src):
            trees.append(src)
    for d in interpreter_dirs():
        # a top that is a symlink (/lib -> usr/lib) resolves into a bound tree already
        if not under(d, trees):
            trees.append(d)
    held = {src: os.open(src, os.O_PATH | os.O_DIRECTORY) for src in trees}
    for name in DEVICES:
        devices[name] = os.open("/dev/" + name, os.O_PATH)
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=4m,mode=0755", "mount the new root")
    for src, target in links.items():
        os.symlink(target, root + src)
    # the private scratch goes up before the trees: an interpreter or a venv under /tmp or /var/tmp (a checkout
    # cloned there) is then bound on top of it instead of being covered by it
    for top in ("/tmp", "/var/tmp"):
        os.makedirs(root + top, exist_ok=True)
        mount("tmpfs", root + top, "tmpfs", MS_NOSUID | MS_NODEV, "size=%dm,mode=1777" % scratch_mb, "tmpfs on " + top)
        for src in trees:
            if under(src, [top]):
                KEEP_IN_SCRATCH.add(top + "/" + src[len(top) + 1:].split("/")[0])
    bound = []
    for src in trees:
        bind_tree(src, held.pop(src), root)
        bound.append(src)
    # hidden paths that a bound tree would still show: covered by an empty read-only tmpfs (a file: by an empty
    # file); a hidden path that *contains* a bound tree (a venv inside the project) shows only that tree
    empty_file = root + "/.empty"
    open(empty_file, "w").close()
    for path in sorted(set(cfg.get("hide", ()))):
        path = os.path.realpath(path)
        if not under(path, bound) or not os.path.lexists(root + path):
            continue
        if os.path.isdir(root + path):
            mount("tmpfs", root + path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY, "size=4k,mode=0555",
                  "hide " + path)
        else:
            mount(empty_file, root + path, None, MS_BIND, None, "hide " + path)
    dev = root + "/dev"
    os.mkdir(dev)
    mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755", "mount /dev")
    for name in DEVICES:
        open(dev + "/" + name, "w").close()
        mount("/proc/self/fd/%d" % devices[name], dev + "/" + name, None, MS_BIND, None, "bind /dev/" + name)
        os.close(devices[name])
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, dev + "/" + name)
    os.mkdir(dev + "/shm")
    os.mkdir(root + "/proc")
    mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible", "mount /proc")
    for d in ("/tmp", "/var/tmp", "/run"):
        os.makedirs(root + d, exist_ok=True)
    for top, size in (("/dev/shm", 16),):
        mount("tmpfs", root + top, "tmpfs", MS_NOSUID | MS_NODEV, "size=%dm,mode=1777" % size, "tmpfs on " + top)
    writable = {root + d for d in ("/tmp", "/var/tmp", "/dev/shm")} | {root + "/proc"}
    failures = []
    with open("/proc/self/mountinfo", "rb") as f:
        entries = [line.split() for line in f]
    for fields in entries:
        target = fields[4].decode("unicode_escape").encode("latin-1").decode("utf-8", "surrogateescape")
        if not under(target, [root]) or target in writable or under(target, [root + "/proc"]):
            continue
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID
        for opt in fields[5].decode().split(","):
            flags |= MOUNT_FLAGS.get(opt, 0)
        if target.startswith(dev + "/") and target[len(dev) + 1:] in DEVICES:
            flags &= ~MOUNT_FLAGS["nodev"]
        if target == root:
            flags = MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV
        if libc.mount(None, target.encode("utf-8", "surrogateescape"), None, flags, None) != 0:
            failures.append("%s: %s" % (target[len(root):] or "/", os.strerror(ctypes.get_errno())))
    pivot(root)
    PRIVATE_FS[0] = True
    return failures


def pivot(root):
    """pivot_root(2) into ``root`` and detach the old root: nothing of the host's tree stays reachable."""
    import platform

    number = SYS_PIVOT_ROOT.get(platform.machine())
    os.chdir(root)
    if number is None or libc.syscall(number, b".", b".") != 0:
        err = ctypes.get_errno()
        raise OSError(err, "pivot_root: %s" % os.strerror(err))
    check(libc.umount2(b".", MNT_DETACH), "detach the old root")
    os.chdir("/")
