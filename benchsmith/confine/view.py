"""What a confined tool sees of the host: the system directories and /etc entries shown read-only, our
interpreter's and the executable's own directories, and the permission hand-over of our own data (readable to
the throwaway uid; writable directories given to it for the run and taken back)."""

from __future__ import annotations

import os
import stat
import sys
from typing import Iterable

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# /etc entries toolchains read: the dynamic linker's cache, alternatives (javac/java/node links), the JDK's and
# mono's configuration, time zone and name-service basics.  Not /etc as a whole (host configuration, keys).
ETC_ENTRIES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "java-8-openjdk", "java-11-openjdk",
               "java-17-openjdk", "java-21-openjdk", "mono", "localtime", "timezone", "nsswitch.conf", "host.conf",
               "ssl", "ca-certificates", "os-release", "mime.types", "fonts")
DEV_NODES = ("null", "zero", "full", "random", "urandom")


def python_paths() -> list[str]:
    """Directories our interpreter needs: its prefixes and every absolute entry of sys.path that belongs to an
    installation (stdlib, site-packages), never a source tree the process happens to have on its path."""
    out = []
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    out += sorted(prefixes)
    for p in sys.path:
        if not p or not os.path.isabs(p) or not os.path.exists(p):
            continue
        real = os.path.realpath(p)
        if any(real == q or real.startswith(q + os.sep) for q in prefixes) or \
                os.path.basename(real) in ("site-packages", "dist-packages"):
            out.append(p)
    return dedupe(out)


def executable_paths(exe: str) -> list[str]:
    """The directories along ``exe``'s symlink chain (``/usr/bin/javac`` -> ``/etc/alternatives`` -> the JDK)."""
    out = []
    cur = exe
    for _ in range(16):
        out.append(os.path.dirname(cur))
        try:
            target = os.readlink(cur)
        except OSError:
            break
        cur = os.path.join(os.path.dirname(cur), target)
    real = os.path.realpath(exe)
    out.append(os.path.dirname(real))
    return dedupe(out)


def dedupe(paths: Iterable[str]) -> list[str]:
    seen, out = set(), []
    for p in paths:
        p = os.path.normpath(p)
        if p not in seen:
            seen.add(p)
            out.append(p)
    return out


def grant_read(paths: Iterable[str]) -> None:
    """Make our own data under ``paths`` readable to other uids (files o+r, directories o+rx), without following
    symlinks.  Only the named paths and what is under them change; their parent directories keep their modes, so a
    tree under a private directory stays unreachable for other host users."""
    for top in paths:
        try:
            st = os.lstat(top)
        except OSError:
            continue
        _grant_one(top, st)
        if stat.S_ISDIR(st.st_mode):
            stack = [top]
            while stack:
                d = stack.pop()
                try:
                    entries = list(os.scandir(d))
                except OSError:
                    continue
                for e in entries:
                    try:
                        est = e.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    _grant_one(e.path, est)
                    if stat.S_ISDIR(est.st_mode):
                        stack.append(e.path)


def _grant_one(path: str, st: os.stat_result) -> None:
    if stat.S_ISDIR(st.st_mode):
        want = 0o005
    elif stat.S_ISREG(st.st_mode):
        want = 0o004 | (0o001 if st.st_mode & 0o100 else 0)
    else:
        return
    if st.st_mode & want != want and st.st_uid == os.geteuid():
        try:
            os.chmod(path, stat.S_IMODE(st.st_mode) | want)
        except OSError:
            pass


def chown_tree(paths: Iterable[str], uid: int, gid: int) -> None:
    """lchown everything under ``paths`` (symlinks not followed)."""
    for top in paths:
        if not os.path.lexists(top):
            continue
        try:
            os.lchown(top, uid, gid)
        except OSError:
            pass
        if os.path.isdir(top) and not os.path.islink(top):
            for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
                for name in dirnames + filenames:
                    try:
                        os.lchown(os.path.join(dirpath, name), uid, gid)
                    except OSError:
                        pass
