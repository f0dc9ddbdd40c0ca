"""The ``docker``/``podman`` backends: the same argv wrapped in ``<engine> run`` against an image from
``containers/`` (no network, read-only root, every capability dropped, no new privileges, limits, explicit
mounts), the hand-over of mounts to the container's throwaway uid when we are root, and removal of a container
whose client was killed."""

from __future__ import annotations

import os
import subprocess
import uuid
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from benchsmith.runner.records import ToolchainBackend, Limits


@dataclass(frozen=True)
class Mount:
    host: str
    container: str
    writable: bool = False


def caller_user() -> str:
    """``uid:gid`` a container runs as: the caller's own when not root (files it reads or writes have the caller's
    permissions; rootless engines map it), else a throwaway non-root uid (``confine.CONTAINER_UID``): root's
    toolchains never run as root, not even inside the engine's namespaces."""
    if os.getuid() == 0:
        from benchsmith.confine import CONTAINER_UID

        return f"{CONTAINER_UID}:{CONTAINER_UID}"
    return f"{os.getuid()}:{os.getgid()}"


@dataclass(frozen=True)
class ContainerSpec:
    """How to run a command in a toolchain image instead of on the host."""

    engine: ToolchainBackend
    image: str
    mounts: tuple[Mount, ...] = ()
    workdir: str | None = None
    memory: str | None = "4g"
    pids: int | None = 512
    # more `<engine> run` options; they come after the defaults, so a --user/--name here wins and a --tmpfs
    # here replaces the default tmpfs on the same path
    extra_args: tuple[str, ...] = ()
    user: str | None = field(default_factory=caller_user)
    read_only: bool = True
    # /dev/shm: with --ipc none the engine mounts none (POSIX shared memory still works, in the container's own
    # tmpfs; System V IPC is the container's own)
    tmpfs: tuple[str, ...] = ("/tmp:rw,nosuid,nodev,size=512m,mode=1777", "/dev/shm:rw,nosuid,nodev,size=64m,mode=1777")


_ULIMITS = (("cpu", "cpu_seconds"), ("as", "address_space"), ("fsize", "file_size"), ("nofile", "open_files"))


def _option_values(args: Sequence[str], option: str) -> list[str]:
    """Values of ``option`` in ``args`` (both ``--opt value`` and ``--opt=value``)."""
    out = []
    for i, arg in enumerate(args):
        if arg == option and i + 1 < len(args):
            out.append(args[i + 1])
        elif arg.startswith(option + "="):
            out.append(arg.split("=", 1)[1])
    return out


def _mount_arg(m: Mount) -> str:
    for path in (m.host, m.container):
        # ',' and '=' would smuggle extra mount options into --mount; relative paths mean something else to
        # the engine (a named volume, or the daemon's working directory).
        if not os.path.isabs(path) or "," in path or "=" in path or "\n" in path:
            raise ValueError(f"mount path {path!r} must be absolute and free of ',', '=' and newlines")
    if not os.path.exists(m.host):
        # `-v` would silently create a missing host path (as root); fail instead.
        raise FileNotFoundError(f"mount source {m.host} does not exist")
    return f"type=bind,source={m.host},target={m.container}" + ("" if m.writable else ",readonly")


def container_name(argv: Sequence[str]) -> str | None:
    """The ``--name`` a ``container_argv`` result gives its container."""
    names = _option_values(argv, "--name")
    return names[-1] if names else None


def container_argv(
    argv: Sequence[str], spec: ContainerSpec, env: Mapping[str, str] | None, limits: Limits | None = None
) -> list[str]:
    engine = spec.engine.value
    out = [engine, "run", "--rm", "-i", "--network", "none", "--ipc", "none", "--security-opt", "no-new-privileges",
           "--cap-drop", "ALL", "--name", f"benchsmith-{uuid.uuid4().hex[:16]}",
           # output reaches us through the attached streams; a log driver would also copy it to the daemon's
           # disk, unbounded
           "--log-driver", "none"]
    if spec.read_only:
        out.append("--read-only")
    if spec.user:
        out += ["--user", spec.user]
        if spec.engine is ToolchainBackend.PODMAN and os.getuid() != 0:
            # rootless podman maps the caller to root inside; keep-id maps it to the same uid instead, so
            # --user <caller> reads the caller's files
            out.append("--userns=keep-id")
    replaced = {t.split(":", 1)[0] for t in _option_values(spec.extra_args, "--tmpfs")}
    for t in spec.tmpfs:
        if t.split(":", 1)[0] not in replaced:
            out += ["--tmpfs", t]
    if spec.memory:
        # swap equal to memory: the limit is the limit, not memory plus as much swap again
        out += ["--memory", spec.memory, "--memory-swap", spec.memory]
    pids = [p for p in (spec.pids, limits.processes if limits else None) if p]
    if pids:
        out += ["--pids-limit", str(min(pids))]
    for name, attr in _ULIMITS:
        value = getattr(limits, attr, None) if limits else None
        if value is not None:
            out += ["--ulimit", f"{name}={value}:{value}"]
    for m in spec.mounts:
        out += ["--mount", _mount_arg(m)]
    if spec.workdir:
        out += ["-w", spec.workdir]
    out += list(spec.extra_args)
    for k, v in sorted((env or {}).items()):
        out += ["-e", f"{k}={v}"]
    out.append(spec.image)
    out += list(argv)
    return out


def hand_mounts(spec: ContainerSpec) -> list[str]:
    """As root, a container runs as the throwaway ``CONTAINER_UID``: make the read-only mounts (our own data)
    readable to it and give it the writable ones for the run; returns what to take back afterwards."""
    from benchsmith.confine import CONTAINER_UID, chown_tree, grant_read

    if os.geteuid() != 0 or spec.user != f"{CONTAINER_UID}:{CONTAINER_UID}":
        return []
    grant_read([m.host for m in spec.mounts if not m.writable])
    writable = [m.host for m in spec.mounts if m.writable]
    chown_tree(writable, CONTAINER_UID, CONTAINER_UID)
    return writable


def take_back(paths: Sequence[str]) -> None:
    """Undo ``hand_mounts``: the writable mounts belong to us again."""
    from benchsmith.confine import chown_tree

    chown_tree(paths, os.geteuid(), os.getegid())


def remove_container(argv: Sequence[str]) -> None:
    """The client was killed; the container it started may still run.  Remove it by name (best effort)."""
    name = container_name(argv)
    if name is None:
        return
    try:
        subprocess.run([argv[0], "rm", "-f", name], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=60, start_new_session=True)
    except (OSError, subprocess.TimeoutExpired):
        pass
