"""Repository sources: a local directory (git or not), a git URL (``URL@COMMIT`` pins a commit), a
``.tar.gz``/``.tgz``/``.tar.bz2``/``.tar.xz``/``.tar``/``.zip`` archive such as a PyPI sdist or an npm tarball, or a
registry source ``pypi:NAME[==V]``, ``npm:NAME[@V]``, ``debian:SOURCE[=V]`` (optionally ``#SUBDIR``), pinned and
digest-checked by ``benchsmith.registries``.

Everything a source holds is untrusted (SECURITY.md):
- git runs under ``git_environment()``: no system or user configuration, command-scope settings that switch off
  hooks, fsmonitor, signature programs, pagers, credential helpers, filters and submodule recursion, and only the
  transport the user's URL names; a pinned commit must be hex (``commit_invalid``);
- a local work tree's ``.git`` is read as data (``benchsmith.gitmeta``): bounded, no link followed, no FIFO or
  device opened, its configuration never read; what is refused is recorded (``git_metadata_refused``);
- archives are extracted member by member with every path checked (no ``..``, no absolute paths), so a zip-slip
  archive is refused with a recorded reason instead of writing outside the work directory; links, devices,
  duplicates and members over the ``ArchiveBudget`` are recorded on the ``Checkout`` and never materialised;
- ``source_identity`` says what a repository's results depend on (commit, archive hash, directory digest), which
  the build keys its resumable shards by.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from benchsmith.archives import (_MIB, MAX_ARCHIVE_MEMBER, MAX_ARCHIVE_TOTAL, ArchiveBudget,  # noqa: F401
                                 ArchiveSkip, SourceError, _archive_date, extract_archive, lzma_error)
from benchsmith.files import printable_name, read_regular_file
from benchsmith.gitmeta import MIN_GIT, git_environment, read_git_info  # noqa: F401 - git_environment re-exported
from benchsmith.records import Checkout, Exclusion, Reason, RepoSpec, Stage

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip")




def repo_name(spec: RepoSpec) -> str:
    """A stable, filesystem-safe repository id (used in task ids and shard names)."""
    if spec.name:
        return spec.name
    reg = _registry_spec(spec.source)
    if reg is not None:
        return reg.repo_id()
    src = spec.source.rstrip("/")
    for suffix in ARCHIVE_SUFFIXES + (".git",):
        if src.endswith(suffix):
            src = src[: -len(suffix)]
            break
    if is_remote(spec.source):
        parts = [p for p in re.split(r"[/:]", src) if p]
        base = "_".join(parts[-2:])
    else:
        base = Path(src).expanduser().resolve().name if Path(src).is_dir() else Path(src).name
    base = re.sub(r"[^A-Za-z0-9._-]+", "_", base).strip("._") or "repo"
    return f"{base}@{spec.commit[:12]}" if spec.commit else base


def _registry_spec(source: str):
    """The ``RegistrySpec`` of ``pypi:``/``npm:``/``debian:`` sources (benchsmith.registries); None for others and
    for a malformed one (``materialise`` records why)."""
    from benchsmith.registries import parse_source

    try:
        return parse_source(source)
    except SourceError:
        return None


def is_remote(source: str) -> bool:
    """A source that is fetched, not a local path (a git URL, or a registry source however well formed)."""
    from benchsmith.registries.metadata import RegistryKind

    prefix, colon, _ = source.partition(":")
    return "://" in source or source.startswith("git@") or (bool(colon) and prefix.lower() in set(RegistryKind))


# A pinned commit is an object name and nothing else: hex, 4 to 64 digits (SHA-1 or SHA-256).  Anything else
# (``--upload-pack=...``, a ref name, a revision expression) is refused before git sees it.
_COMMIT_RE = re.compile(r"[0-9a-fA-F]{4,64}")
def _git_scheme(url: str) -> str:
    """The transport git will use for ``url``: ``https``, ``ssh`` (scp-like ``git@host:path`` too), ``file`` ..."""
    if "://" in url:
        return url.split("://", 1)[0].lower()
    return "ssh"


def _checked_git(allow_protocols: tuple[str, ...] = ()):
    """A gitpython ``Git`` runner carrying ``git_environment``; refuses a git too old to honour it."""
    import git

    g = git.Git()
    g.update_environment(**git_environment(allow_protocols))
    if tuple(g.version_info[:2]) < MIN_GIT:
        raise SourceError(Reason.CLONE_FAILED, f"git {'.'.join(map(str, g.version_info))} is too old: benchsmith "
                          f"needs git >= {'.'.join(map(str, MIN_GIT))} to keep repository configuration from "
                          "running programs")
    return g


def _open_repo(path: Path, allow_protocols: tuple[str, ...] = ()):
    """A gitpython ``Repo`` whose every git call (including gitpython's own cat-file processes) carries
    ``git_environment``."""
    import git

    _checked_git(allow_protocols)
    repo = git.Repo(path)
    repo.git.update_environment(**git_environment(allow_protocols))
    return repo


def check_commit(spec: RepoSpec) -> None:
    """Refuse a pinned commit that is not an object name, and a source that looks like an option."""
    if spec.commit is not None and not _COMMIT_RE.fullmatch(spec.commit):
        raise SourceError(Reason.COMMIT_INVALID, f"{spec.source}: pinned commit {spec.commit!r} is not a hex "
                          "commit id (4-64 hex digits); refs and options are not accepted")
    if spec.source.startswith("-"):
        raise SourceError(Reason.SOURCE_NOT_FOUND, f"{spec.source!r}: a source may not start with '-'")


def materialise(spec: RepoSpec, workdir: Path, full_history: bool = False) -> Checkout:
    """Bring ``spec`` onto disk under ``workdir`` (only for archives and clones; local dirs are used in place,
    read-only from our side)."""
    check_commit(spec)
    name = repo_name(spec)
    src = spec.source
    from benchsmith.registries import parse_source

    reg = parse_source(src)  # a malformed registry source raises its SourceError here
    if reg is not None:
        from benchsmith.registries.checkout import materialise_registry

        return materialise_registry(spec, reg, name, workdir)
    if is_remote(src) and not src.endswith(ARCHIVE_SUFFIXES):
        return _clone(spec, name, workdir, full_history)
    path = Path(src).expanduser()
    if not path.exists():
        raise SourceError(Reason.SOURCE_NOT_FOUND, f"{src}: no such file or directory")
    if path.is_file():
        if not src.endswith(ARCHIVE_SUFFIXES):
            raise SourceError(Reason.ARCHIVE_INVALID, f"{src}: not a directory or a supported archive "
                              f"({', '.join(ARCHIVE_SUFFIXES)})")
        dest = workdir / "extract"
        skipped: list[ArchiveSkip] = []
        root = extract_archive(path, dest, skipped=skipped)
        exclusions = [Exclusion(f"{name}/{printable_name(s.member)}" if s.member else name, Stage.SOURCE, s.reason,
                                s.detail, name) for s in skipped]
        return Checkout(spec=spec, name=name, path=str(root), kind="archive",
                        created=_archive_date(path), exclusions=exclusions)
    if not path.is_dir():
        raise SourceError(Reason.SOURCE_NOT_FOUND, f"{src}: not a directory or a regular archive file")
    info = read_git_info(path.resolve())
    exclusions = [] if info.refused is None else [
        Exclusion(f"{name}/.git", Stage.SOURCE, Reason.GIT_METADATA_REFUSED,
                  f"{info.refused}; built as a plain directory (no commit, no creation date)", name)]
    return Checkout(spec=spec, name=name, path=str(path.resolve()), commit=info.commit, created=info.created,
                    kind="git" if info.commit else "directory", exclusions=exclusions)


# $GIT_DIR/info/attributes wins over the tree's .gitattributes: no end-of-line, encoding, ident or filter
# rewriting of what we check out, whatever the repository asks for.
_NEUTRAL_ATTRIBUTES = "* -text -eol -crlf -ident -filter -working-tree-encoding -export-subst\n"


def _clone(spec: RepoSpec, name: str, workdir: Path, full_history: bool = False) -> Checkout:
    """Shallow where possible; ``full_history`` when the first commit's date is needed (--created-after).
    The only transport allowed is the one the user's URL names (``file://`` only when the user wrote it), and
    the repository is initialised by us (no template hooks), so no configuration of the remote's comes along."""
    import git

    dest = workdir / "clone"
    allow = (_git_scheme(spec.source),)
    try:
        g = _checked_git(allow)
        dest.mkdir(parents=True, exist_ok=True)
        g.execute(["git", "init", "-q", "--template=", str(dest)])
        info = dest / ".git" / "info"
        info.mkdir(parents=True, exist_ok=True)
        (info / "attributes").write_text(_NEUTRAL_ATTRIBUTES, encoding="utf-8")
        repo = _open_repo(dest, allow)
        repo.create_remote("origin", spec.source)
        fetch = ["--quiet", "--no-recurse-submodules", "--no-tags", *([] if full_history else ["--depth=1"]),
                 "origin"]
        if spec.commit:
            # A pinned commit (hex, checked above): just that commit when the server allows it, else everything.
            try:
                repo.git.fetch(*fetch, spec.commit)
            except git.GitCommandError:
                repo.git.fetch("--quiet", "--no-recurse-submodules", "origin")
            target = spec.commit
        else:
            repo.git.fetch(*fetch, "HEAD")
            target = "FETCH_HEAD"
        repo.git.checkout("-q", "--detach", target, "--")
    except SourceError:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    except Exception as exc:  # noqa: BLE001 - every clone failure is recorded, none aborts the run
        shutil.rmtree(dest, ignore_errors=True)
        raise SourceError(Reason.CLONE_FAILED, f"{spec.source}: {_git_failure(exc)}") from None
    head = repo.git.rev_parse("--verify", "HEAD^{commit}").strip()
    created = None
    try:
        roots = repo.git.log("--no-show-signature", "--reverse", "--format=%cI", "--max-parents=0",
                             "HEAD").splitlines()
        created = min(roots) if roots else None
    except Exception:  # shallow clones may not reach the root commit
        created = None
    if created is None or repo.git.rev_parse("--is-shallow-repository") == "true":
        created = None  # a shallow history's oldest commit is not the repository's first commit
    return Checkout(spec=spec, name=name, path=str(dest), commit=head, created=created, kind="git")


def source_identity(spec: RepoSpec, max_file_bytes: int = 1_000_000) -> str | None:
    """What a repository's results depend on, from the source's side: ``git:URL@COMMIT`` for a git URL (an
    unpinned one resolved with ``ls-remote``), the archive's SHA-256, or a digest of a directory's files (plus
    HEAD and the first commit's date for a work tree).  Two sources with the same basename never share an
    identity; None when the source cannot be resolved now (it is then rebuilt, never resumed)."""
    try:
        check_commit(spec)
    except SourceError:
        return None
    src = spec.source
    if _registry_spec(src) is not None:
        from benchsmith.registries import identity

        return identity(src)  # the pin and the artifact's digest, from the cache when resolved before
    if is_remote(src) and not src.endswith(ARCHIVE_SUFFIXES):
        if spec.commit:
            return f"git:{src}@{spec.commit.lower()}"
        try:
            out = _checked_git((_git_scheme(src),)).execute(["git", "ls-remote", "--", src, "HEAD"])
        except Exception:  # noqa: BLE001 - unreachable now: not resumable, the build records why
            return None
        sha = out.split()[0] if out.split() else ""
        return f"git:{src}@{sha}" if _COMMIT_RE.fullmatch(sha) else None
    path = Path(src).expanduser()
    try:
        if path.is_file():
            digest = hashlib.sha256()
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(_MIB), b""):
                    digest.update(block)
            return f"archive:{digest.hexdigest()}"
        if path.is_dir():
            info = read_git_info(path.resolve())
            git_part = f"+git:{info.commit}:{info.created}" if info.commit else ""
            return f"dir:{tree_identity(path, max_file_bytes)}{git_part}"
    except OSError:
        return None
    return None


@dataclass
class ResolvedSource:
    """A repository's source, resolved once: the spec and what its results depend on (``source_identity``).
    ``materialise`` brings it onto disk; for a git URL the identity then names the commit actually cloned (an
    unpinned URL's HEAD may have moved since ``ls-remote``)."""

    spec: RepoSpec
    identity: str | None

    def materialise(self, name: str, workdir: Path, full_history: bool = False) -> Checkout:
        checkout = materialise(dataclasses.replace(self.spec, name=name), workdir, full_history=full_history)
        if checkout.kind == "git" and is_remote(self.spec.source) and checkout.commit:
            self.identity = f"git:{self.spec.source}@{checkout.commit}"
        return checkout


def resolve(spec: RepoSpec, max_file_bytes: int = 1_000_000) -> ResolvedSource:
    """The one call that resolves a source: its identity now (None when it cannot be resolved), its checkout
    later."""
    return ResolvedSource(spec, source_identity(spec, max_file_bytes))


def tree_identity(root: Path, max_file_bytes: int) -> str:
    """SHA-256 over every entry a snapshot could observe under ``root`` (directories it skips are skipped here):
    path, kind, size, and the content of regular files up to ``max_file_bytes`` (a larger file is excluded by its
    size alone, so its size is all its identity needs).  Symlinks are hashed by target, never followed; FIFOs and
    devices are never opened; an entry that cannot be listed or read (a path past PATH_MAX, no permission) is
    hashed by its error, as the snapshot records it."""
    from benchsmith.files import SKIP_DIRS

    digest = hashlib.sha256()
    stack = [Path(root)]
    while stack:
        d = stack.pop()
        try:
            with os.scandir(d) as it:
                entries = sorted(it, key=lambda e: os.fsencode(e.name))
        except OSError as exc:
            digest.update(b"E\0" + os.fsencode(os.path.relpath(d, root)) + b"\0" + str(exc.errno).encode() + b"\0")
            continue
        subdirs = []
        for e in entries:
            rel = os.fsencode(os.path.relpath(e.path, root))
            try:
                st = e.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    if e.name not in SKIP_DIRS:
                        digest.update(b"D\0" + rel + b"\0")
                        subdirs.append(Path(e.path))
                elif stat.S_ISLNK(st.st_mode):
                    digest.update(b"L\0" + rel + b"\0" + os.fsencode(os.readlink(e.path)) + b"\0")
                elif stat.S_ISREG(st.st_mode):
                    digest.update(b"F\0" + rel + b"\0" + str(st.st_size).encode() + b"\0")
                    if st.st_size <= max_file_bytes:
                        digest.update(hashlib.sha256(read_regular_file(Path(e.path), max_file_bytes)).digest())
                else:
                    digest.update(b"S\0" + rel + b"\0" + str(stat.S_IFMT(st.st_mode)).encode() + b"\0")
            except OSError as exc:
                digest.update(b"E\0" + rel + b"\0" + str(exc.errno).encode() + b"\0")
        stack.extend(reversed(subdirs))
    return digest.hexdigest()


def _git_failure(exc: Exception) -> str:
    """The line of git's stderr that says what went wrong (``fatal: unable to access ...: Could not resolve
    host``), not the quoting gitpython wraps around it."""
    lines = [ln.strip().strip("'").strip() for ln in str(getattr(exc, "stderr", "") or exc).splitlines()]
    lines = [ln.removeprefix("stderr:").strip().strip("'") for ln in lines]
    errors = [ln for ln in lines if ln.startswith(("fatal:", "error:"))]
    if errors:
        return " / ".join(errors)
    meaningful = [ln for ln in lines if ln and not ln.startswith(("Cloning into", "cmdline:"))]
    return meaningful[-1] if meaningful else type(exc).__name__


@dataclass(frozen=True)
class RepoFilterConfig:
    """Repository filters; all off by default (the paper used permissive licences, 10-50 files, < 1 MB)."""

    permissive_license: bool = False
    created_after: _dt.date | None = None
    min_files: int | None = None
    max_files: int | None = None
    max_bytes: int | None = None
    released_after: _dt.date | None = None  # a registry source's version published on or after this date


def read_specs(repos: list[str], repos_file: str | None) -> list[RepoSpec]:
    specs = [RepoSpec.parse(r) for r in repos]
    if repos_file:
        with open(repos_file, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if line and not line.startswith("#"):
                    specs.append(RepoSpec.parse(line))
    return specs

