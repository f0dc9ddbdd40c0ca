"""A local work tree's git metadata, read as data.

A directory handed to ``--repo`` is untrusted, ``.git`` included: its ``config`` can name include files
(``/dev/zero``), its ``HEAD`` can be a FIFO, and a ``.git`` *file* (``gitdir: /elsewhere``) or an alternates file
points git at another repository.  So git never opens the repository's own git directory:

* ``.git`` must be a real directory (not a link, not a file naming another one); ``HEAD`` and the ref it names are
  read here, each path component opened with ``O_NOFOLLOW`` relative to the one before, only when ``lstat`` says
  it is a regular file, and never more than a small bound;
* the object store must hold only regular files and directories (no link, FIFO, device or socket, no
  ``info/alternates``, no ``commondir``), a bounded number of them;
* git then runs against an empty git directory of our own (fresh, private), reading the repository's objects
  through ``GIT_OBJECT_DIRECTORY``: the repository's ``config`` (and so every include) is never read, nor its
  hooks, grafts, replace refs or info files.  Each git process runs under ``git_environment`` and a timeout.

Whatever is refused is said in ``GitInfo.refused`` (recorded as ``git_metadata_refused``); the repository is then
built as a plain directory, without commit or creation date.
"""

from __future__ import annotations

import errno
import functools
import os
import re
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass

MAX_SMALL_FILE = 64 * 1024  # HEAD, a loose ref, a .git file
MAX_PACKED_REFS = 64 * 1024 * 1024
MAX_OBJECT_ENTRIES = 1_000_000  # entries of .git/objects looked at before the store is refused as too large
MAX_SYMREF_DEPTH = 5
GIT_TIMEOUT = 120.0  # seconds for one git process (rev-parse, log over the whole history)
MAX_GIT_OUTPUT = 16 * 1024 * 1024
GIT_MEMORY_KIB = 4 * 1024 * 1024  # address space of one git process
# Oldest git whose GIT_CONFIG_GLOBAL / GIT_CONFIG_COUNT we rely on to neutralise configuration.
MIN_GIT = (2, 32)

_HEX_RE = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
# A ref name as a loose file path: components of printable characters, none empty, none starting with '.', no
# '..' anywhere (git's own rules are stricter; this is what keeps the name a path below refs/).
_REF_COMPONENT_RE = re.compile(r"[^\x00-\x20\x7f/\\:?*\[~^]+")

_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
_KIND_NAMES = {stat.S_IFLNK: "a symbolic link", stat.S_IFIFO: "a FIFO", stat.S_IFCHR: "a character device",
               stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket", stat.S_IFDIR: "a directory",
               stat.S_IFREG: "a regular file"}


def git_environment(allow_protocols: tuple[str, ...] = ()) -> dict[str, str]:
    """The environment of every git process we start.

    Configuration is data an attacker can write (a local work tree's ``.git/config``, and through includes any
    file it names), so git reads no system or user configuration, and command-scope settings (which win over
    every file) switch off whatever can run a program or rewrite content: hooks, fsmonitor, signature checks
    and signing programs, pagers, credential helpers, ssh commands, attribute files (filters, textconv), replace
    refs, automatic gc/maintenance, submodule recursion.  Only the transports in ``allow_protocols`` (the one
    the user's URL names) are allowed: a redirect or a submodule cannot switch to ``file://`` or ``ext::``."""
    config = [
        ("core.hooksPath", os.devnull), ("core.fsmonitor", "false"), ("core.pager", "cat"),
        ("core.sshCommand", "ssh"), ("core.attributesFile", os.devnull),
        ("core.symlinks", "false"),  # a checkout writes symlinks as plain files holding the target path
        ("credential.helper", ""),  # the empty value clears every helper configured before it
        ("log.showSignature", "false"), ("gpg.program", "false"), ("gpg.openpgp.program", "false"),
        ("gpg.x509.program", "false"), ("gpg.ssh.program", "false"),
        ("submodule.recurse", "false"), ("fetch.recurseSubmodules", "false"),
        ("gc.auto", "0"), ("maintenance.auto", "false"), ("protocol.allow", "never"),
        # the programs run for a remote and for alternates: the defaults, whatever a config file says
        ("remote.origin.uploadpack", "git-upload-pack"), ("remote.origin.receivepack", "git-receive-pack"),
        ("core.alternateRefsCommand", "true"),
    ]
    config += [(f"protocol.{p}.allow", "always") for p in allow_protocols]
    env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_ATTR_NOSYSTEM": "1",
           "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "SSH_ASKPASS": "true", "GIT_LFS_SKIP_SMUDGE": "1",
           "GIT_NO_REPLACE_OBJECTS": "1", "GIT_OPTIONAL_LOCKS": "0", "GIT_CONFIG_COUNT": str(len(config))}
    for i, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


@dataclass(frozen=True)
class GitInfo:
    """What a work tree's git metadata says: HEAD's commit and the first commit's date (None when unknown), or
    why the metadata was not read (``refused``; then both are None)."""

    commit: str | None = None
    created: str | None = None
    refused: str | None = None


class _Refused(Exception):
    pass


def _kind(mode: int) -> str:
    return _KIND_NAMES.get(stat.S_IFMT(mode), "a special file")


def _shown(text: str, limit: int = 200) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _examine(dir_fd: int | None, name: str, what: str) -> os.stat_result | None:
    """``lstat`` of ``name`` in ``dir_fd`` (never through a link); None when missing, ``_Refused`` when it cannot be
    examined."""
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _Refused(f"{what} cannot be examined: {exc.strerror}") from None


def read_regular_at(dir_fd: int, name: str, max_bytes: int, what: str) -> bytes | None:
    """The content of ``name`` in ``dir_fd`` when it is a regular file of at most ``max_bytes``; None when it does
    not exist.  Anything else (a link, a FIFO, a device, a larger file) raises ``_Refused``: it is never opened
    (``lstat`` first; ``O_NONBLOCK`` and a second ``fstat`` cover a swap in between)."""
    st = _examine(dir_fd, name, what)
    if st is None:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise _Refused(f"{what} is {_kind(st.st_mode)}, not a regular file; not opened")
    if st.st_size > max_bytes:
        raise _Refused(f"{what} holds {st.st_size} bytes, more than the {max_bytes} read")
    try:
        fd = os.open(name, _NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError as exc:
        raise _Refused(f"{what} cannot be opened: {exc.strerror}") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _Refused(f"{what} changed into a special file while being read")
        data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise _Refused(f"{what} grew past the {max_bytes} bytes read")
    return data


def _open_dir_at(dir_fd: int | None, name: str, what: str) -> int | None:
    """A directory fd for ``name`` (never through a link); None when missing; ``_Refused`` when not a directory."""
    st = _examine(dir_fd, name, what)
    if st is None:
        return None
    if not stat.S_ISDIR(st.st_mode):
        raise _Refused(f"{what} is {_kind(st.st_mode)}, not a directory")
    try:
        return os.open(name, _NOFOLLOW | os.O_DIRECTORY, dir_fd=dir_fd)
    except OSError as exc:
        raise _Refused(f"{what} cannot be opened: {exc.strerror}") from None


def _check_object_store(objects_fd: int) -> None:
    """Every entry of the object store is a regular file or a directory (d_type: no stat per entry), at most
    ``MAX_OBJECT_ENTRIES`` of them, and no alternates file names a store elsewhere."""
    info = _open_dir_at(objects_fd, "info", ".git/objects/info")
    if info is not None:
        try:
            for name in ("alternates", "http-alternates"):
                if _exists_at(info, name):
                    raise _Refused(f".git/objects/info/{name} names object stores outside the repository")
        finally:
            os.close(info)
    seen = 0
    stack = [(os.dup(objects_fd), ".git/objects")]
    try:
        while stack:
            fd, where = stack.pop()
            try:
                with os.scandir(fd) as it:
                    for entry in it:
                        seen += 1
                        if seen > MAX_OBJECT_ENTRIES:
                            raise _Refused(f".git/objects holds more than {MAX_OBJECT_ENTRIES} entries")
                        sub = f"{where}/{entry.name}"
                        if entry.is_dir(follow_symlinks=False):
                            sub_fd = _open_dir_at(fd, entry.name, sub)
                            if sub_fd is not None:
                                stack.append((sub_fd, sub))
                        elif not entry.is_file(follow_symlinks=False):
                            mode = entry.stat(follow_symlinks=False).st_mode
                            raise _Refused(f"{sub} is {_kind(mode)}; the object store is not read")
            finally:
                os.close(fd)
    finally:
        for fd, _ in stack:
            os.close(fd)


def _exists_at(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        return True
    except FileNotFoundError:
        return False


def _read_ref(git_fd: int, ref: str) -> str | None:
    """The object name a ref holds (following symbolic refs a few levels); None when it does not exist (an unborn
    branch)."""
    for _ in range(MAX_SYMREF_DEPTH):
        parts = ref.split("/")
        if len(ref) > 1024 or parts[0] != "refs" or len(parts) < 2 or \
                any(p.startswith(".") or p.endswith(".lock") or not _REF_COMPONENT_RE.fullmatch(p) for p in parts):
            raise _Refused(f".git/HEAD names {_shown(ref)}, which is not a ref below refs/")
        value = _loose_ref(git_fd, parts) or _packed_ref(git_fd, ref)
        if value is None:
            return None
        if value.startswith("ref:"):
            ref = value[4:].strip()
            continue
        return value
    raise _Refused(f"more than {MAX_SYMREF_DEPTH} levels of symbolic refs")


def _loose_ref(git_fd: int, parts: list[str]) -> str | None:
    fds: list[int] = []
    try:
        cur = git_fd
        for i, part in enumerate(parts[:-1]):
            nxt = _open_dir_at(cur, part, ".git/" + "/".join(parts[: i + 1]))
            if nxt is None:
                return None
            fds.append(nxt)
            cur = nxt
        data = read_regular_at(cur, parts[-1], MAX_SMALL_FILE, ".git/" + "/".join(parts))
    finally:
        for fd in fds:
            os.close(fd)
    return None if data is None else data.decode("utf-8", "replace").strip()


def _packed_ref(git_fd: int, ref: str) -> str | None:
    data = read_regular_at(git_fd, "packed-refs", MAX_PACKED_REFS, ".git/packed-refs")
    if data is None:
        return None
    want = (" " + ref).encode("utf-8", "surrogateescape")
    for line in data.split(b"\n"):
        if line.endswith(want) and not line.startswith((b"#", b"^")):
            return line[: -len(want)].decode("ascii", "replace").strip()
    return None


def _head_commit(git_fd: int) -> str | None:
    data = read_regular_at(git_fd, "HEAD", MAX_SMALL_FILE, ".git/HEAD")
    if data is None:
        raise _Refused(".git has no HEAD")
    head = data.decode("utf-8", "replace").strip()
    value = _read_ref(git_fd, head[4:].strip()) if head.startswith("ref:") else head
    if value is None:
        return None
    if not _HEX_RE.fullmatch(value):
        raise _Refused(f"HEAD resolves to {_shown(value)}, which is not an object name")
    return value


@functools.cache
def _git_version() -> tuple[int, int]:
    """The version of the git on PATH, once per process; (0, 0) when unreadable."""
    m = re.search(r"(\d+)\.(\d+)", _git(["--version"], _clean_environment(), "--version"))
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def _clean_environment() -> dict[str, str]:
    """Our environment without any GIT_* variable of the caller's (GIT_DIR, GIT_INDEX_FILE ...), plus
    ``git_environment``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(git_environment())
    return env


def _git(args: list[str], env: dict[str, str], what: str) -> str:
    """One git process on the repository's objects: a timeout, an address-space limit (a commit object that
    inflates to gigabytes fails instead of growing), pack windows held well inside it."""
    limits = ["-c", "core.packedGitLimit=1g", "-c", "core.packedGitWindowSize=128m", "-c",
              "core.deltaBaseCacheLimit=128m"]
    # ulimit fails only above the hard limit, which then bounds git already
    argv = ["/bin/sh", "-c", f'ulimit -v {GIT_MEMORY_KIB} 2>/dev/null; exec git "$@"', "git", *limits, *args]
    try:
        res = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=GIT_TIMEOUT,
                             cwd="/")
    except subprocess.TimeoutExpired:
        raise _Refused(f"git {what} took longer than {GIT_TIMEOUT:g} s") from None
    except OSError as exc:
        raise _Refused(f"git could not be run: {exc.strerror}") from None
    if res.returncode != 0:
        err = res.stderr.decode("utf-8", "replace").strip().splitlines()
        raise _Refused(f"git {what} failed: {err[-1][:300] if err else res.returncode}")
    return res.stdout[:MAX_GIT_OUTPUT].decode("utf-8", "replace")


def _history(objects: str, commit: str, shallow: bool) -> tuple[str, str | None]:
    """HEAD's commit as git sees it in the object store, and the first commit's date (None for a shallow
    history, whose oldest commit is not the repository's first)."""
    env = _clean_environment()
    if _git_version() < MIN_GIT:
        raise _Refused(f"git is older than {'.'.join(map(str, MIN_GIT))}")
    scratch = tempfile.mkdtemp(prefix="benchsmith-git-")
    try:
        fmt = ["--object-format=sha256"] if len(commit) == 64 else []
        # init before naming the object store: git init creates its object directories there
        _git(["--git-dir", scratch, "init", "--bare", "--quiet", "--template=", *fmt], env, "init")
        env["GIT_OBJECT_DIRECTORY"] = objects
        base = ["--git-dir", scratch]
        head = _git([*base, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"], env, "rev-parse").strip()
        if shallow:
            return head, None
        roots = _git([*base, "log", "--no-show-signature", "--no-notes", "--format=%cI", "--max-parents=0",
                      head, "--"], env, "log").split()
        return head, (min(roots) if roots else None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def read_git_info(path: str | os.PathLike) -> GitInfo:
    """HEAD's commit and the first commit's date of the work tree at ``path``; an empty ``GitInfo`` when it has
    no ``.git``; ``GitInfo(refused=...)`` when its metadata is not read (see the module's docstring)."""
    try:
        root = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        return GitInfo(refused=f"the directory cannot be opened: {exc.strerror}")
    try:
        try:
            st = os.stat(".git", dir_fd=root, follow_symlinks=False)
        except FileNotFoundError:
            return GitInfo()
        except OSError as exc:
            return GitInfo(refused=f".git cannot be examined: {exc.strerror}")
        if stat.S_ISREG(st.st_mode):
            return GitInfo(refused=_git_file(root))
        if not stat.S_ISDIR(st.st_mode):
            return GitInfo(refused=f".git is {_kind(st.st_mode)}, not a directory; not followed or opened")
        git_fd = _open_dir_at(root, ".git", ".git")
        if git_fd is None:
            return GitInfo()
        try:
            for name, why in (("commondir", "names another git directory"),
                              ("gitdir", "names another work tree's git directory"),
                              ("reftable", "holds refs in the reftable format, which is not read here")):
                if _exists_at(git_fd, name):
                    return GitInfo(refused=f".git/{name} {why}; not followed")
            commit = _head_commit(git_fd)
            objects_fd = _open_dir_at(git_fd, "objects", ".git/objects")
            if objects_fd is None:
                return GitInfo(refused=".git has no objects directory")
            try:
                _check_object_store(objects_fd)
            finally:
                os.close(objects_fd)
            if commit is None:
                return GitInfo()  # an unborn branch: a repository without commits
            shallow = _exists_at(git_fd, "shallow")
        finally:
            os.close(git_fd)
        objects = os.path.join(os.path.realpath(path), ".git", "objects")
        head, created = _history(objects, commit, shallow)
        return GitInfo(commit=head, created=created)
    except _Refused as exc:
        return GitInfo(refused=str(exc))
    except OSError as exc:
        return GitInfo(refused=f"git metadata cannot be read: {os.strerror(exc.errno or errno.EIO)}")
    except ValueError as exc:  # a name with a NUL byte, say: nothing git could be pointed at either
        return GitInfo(refused=f"git metadata cannot be read: {exc}")
    finally:
        os.close(root)


def _git_file(root: int) -> str:
    """Why a ``.git`` file is refused, naming where it points."""
    try:
        data = read_regular_at(root, ".git", MAX_SMALL_FILE, ".git")
    except _Refused as exc:
        return str(exc)
    text = (data or b"").decode("utf-8", "replace").strip()
    target = text[len("gitdir:"):].strip() if text.startswith("gitdir:") else text
    return f".git is a file naming another git directory ({_shown(target)}); not followed"

