"""Toolchain images from ``containers/``: names, engine detection, building.

An image is tagged by a hash of its inputs (the Dockerfile text and the build arguments, the base image among
them), so an unchanged toolchain is never rebuilt and a changed one can never be confused with the old one.
Analyzers and the sandbox find their image with ``image_tag(dockerfile)``, the same tag ``build_all`` builds.

Settings read from the environment (all optional):

- ``BENCHSMITH_CONTAINER_ENGINE``: ``docker`` or ``podman`` (default: the first of the two whose daemon answers).
- ``BENCHSMITH_BASE_IMAGE``: the base every image is built on (default ``debian:bookworm-slim``; CI uses a base
  bootstrapped from Debian packages, see ``scripts/ci_containers.sh``).
- ``BENCHSMITH_BUILD_NETWORK``: network for ``RUN`` steps while building (e.g. ``host`` where the daemon has no
  bridge network).  Never used when running a toolchain: those always run with ``--network none``.
- ``BENCHSMITH_CSHARP_COMPILER``: ``mcs`` (default, Debian's Mono) or ``csc`` (Roslyn; needs a base that has it,
  e.g. ``mono:6.12``).

CLI: ``python -m benchsmith.containers build|tags|engine`` (``build --if-engine`` is what ``make images`` runs).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from benchsmith.registry import Registry
from benchsmith.runner import ToolchainBackend, ToolMissing, repo_root, run, which

CONTAINERS_DIR = repo_root() / "containers"
DEFAULT_BASE_IMAGE = "debian:bookworm-slim"
# Image name -> its Dockerfile in containers/ (a registry entry that is a file, not ``module:attr``: it is never
# imported, only looked up).  Build order matters only for the shared python3 layer: sandbox first, then pylint
# reuses it from the cache.
IMAGES: Registry[str] = Registry("image", {
    "sandbox": "sandbox.Dockerfile",
    "pylint": "pylint.Dockerfile",
    "javac": "javac.Dockerfile",
    "tsc": "tsc.Dockerfile",
    "csharp": "csharp.Dockerfile",
})
CSHARP_COMPILERS = ("mcs", "csc")
BUILD_TIMEOUT = 1800.0
PROBE_TIMEOUT = 20.0


class BuildError(RuntimeError):
    pass


def dockerfile_path(dockerfile: str) -> Path:
    path = CONTAINERS_DIR / dockerfile
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; containers/ holds one Dockerfile per toolchain")
    return path


def image_name(dockerfile: str) -> str:
    """``pylint.Dockerfile`` -> ``pylint``."""
    path = Path(dockerfile)
    return path.name.removesuffix(".Dockerfile").removesuffix("Dockerfile").strip(".-").lower() or path.parent.name


# Any other Dockerfile in containers/ (a new language's toolchain) is an image too, after the ones above.
for _path in sorted(CONTAINERS_DIR.glob("*.Dockerfile")):
    if image_name(_path.name) not in IMAGES:
        IMAGES.register(image_name(_path.name), _path.name)


def image_tag(dockerfile: str, build_args: dict[str, str] | None = None) -> str:
    """``benchsmith-<name>:<hash of the Dockerfile and build_args>``.

    Without ``build_args``: the arguments ``build_all`` passes in this environment (``build_args_for``), i.e. the
    tag of the image analyzers and the sandbox should run."""
    path = dockerfile_path(dockerfile)
    if build_args is None:
        build_args = build_args_for(image_name(dockerfile))
    digest = hashlib.sha256(path.read_bytes())
    for key, value in sorted(build_args.items()):
        digest.update(f"\0{key}={value}".encode())
    return f"benchsmith-{image_name(dockerfile)}:{digest.hexdigest()[:12]}"


def default_base_image() -> str:
    return os.environ.get("BENCHSMITH_BASE_IMAGE") or DEFAULT_BASE_IMAGE


def csharp_compiler() -> str:
    value = os.environ.get("BENCHSMITH_CSHARP_COMPILER") or "mcs"
    if value not in CSHARP_COMPILERS:
        raise ValueError(f"BENCHSMITH_CSHARP_COMPILER={value!r}: choose one of {', '.join(CSHARP_COMPILERS)}")
    return value


def host_pylint_requirements() -> str | None:
    """The exact pylint/astroid/... set installed here, as ``name==version`` words, or None without pylint.

    The pylint image installs this set, so the container backend reports what the local backend reports."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        from packaging.requirements import Requirement
    except ImportError:  # pragma: no cover - packaging comes with pip/setuptools-based environments
        return None
    pins: dict[str, str] = {}
    todo = ["pylint"]
    while todo:
        name = todo.pop()
        try:
            dist = distribution(name)
        except PackageNotFoundError:
            if name == "pylint":
                return None
            continue  # a requirement whose marker held but is absent here: pip check in the image reports it
        key = dist.metadata["Name"].lower().replace("_", "-")
        if key in pins:
            continue
        pins[key] = dist.version
        for spec in dist.requires or ():
            req = Requirement(spec)
            # The image's interpreter is Debian's python3 on Linux, so evaluating markers here (CPython on Linux,
            # no extras) picks the same dependencies as long as the minor versions agree.
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return " ".join(f"{k}=={v}" for k, v in sorted(pins.items()))


def build_args_for(name: str, base_image: str | None = None) -> dict[str, str]:
    """The build arguments ``build_all`` passes for image ``name``; ``image_tag`` hashes the same ones."""
    name = IMAGES.resolve(name)  # UnknownName (a KeyError) names the images containers/ has
    args = {"BASE_IMAGE": base_image or default_base_image()}
    if name == "pylint":
        pins = host_pylint_requirements()
        if pins:
            args["PYLINT_REQUIREMENTS"] = pins
    elif name == "csharp":
        args["CSHARP_COMPILER"] = csharp_compiler()
    return args


def _engine_answers(engine: ToolchainBackend) -> bool:
    exe = which(engine.value)
    if exe is None:
        return False
    try:
        result = run([exe, "info"], timeout=PROBE_TIMEOUT, output_cap=1 << 20)
    except ToolMissing:
        return False
    return result.ok


def detect_engine(preferred: ToolchainBackend | str | None = None) -> ToolchainBackend | None:
    """The first container engine whose daemon/runtime actually answers (``<engine> info`` succeeds), or None.

    ``preferred`` (or ``BENCHSMITH_CONTAINER_ENGINE``) restricts the search to that engine."""
    choice = preferred or os.environ.get("BENCHSMITH_CONTAINER_ENGINE") or None
    if choice:
        engine = ToolchainBackend(str(choice).lower())
        if engine is ToolchainBackend.LOCAL:
            raise ValueError("a container engine is docker or podman, not local")
        candidates = [engine]
    else:
        candidates = [ToolchainBackend.DOCKER, ToolchainBackend.PODMAN]
    for engine in candidates:
        if _engine_answers(engine):
            return engine
    return None


def image_exists(engine: ToolchainBackend, tag: str) -> bool:
    return run([engine.value, "image", "inspect", tag], timeout=PROBE_TIMEOUT, output_cap=1 << 20).ok


def image_size(engine: ToolchainBackend, tag: str) -> int | None:
    result = run([engine.value, "image", "inspect", "--format", "{{.Size}}", tag], timeout=PROBE_TIMEOUT)
    try:
        return int(result.stdout.strip())
    except ValueError:
        return None


@dataclass(frozen=True)
class BuiltImage:
    name: str
    tag: str
    built: bool  # False: the tag already existed, nothing was rebuilt
    seconds: float
    size: int | None


def build_image(
    engine: ToolchainBackend, name: str, base_image: str | None = None, *, network: str | None = None
) -> BuiltImage:
    """Build image ``name`` unless its input-hash tag already exists.  Raises ``BuildError`` with the log tail."""
    dockerfile = IMAGES[name]
    args = build_args_for(name, base_image)
    tag = image_tag(dockerfile, args)
    start = time.monotonic()
    if image_exists(engine, tag):
        return BuiltImage(name, tag, False, time.monotonic() - start, image_size(engine, tag))
    argv = [engine.value, "build", "-f", str(dockerfile_path(dockerfile)), "-t", tag]
    argv += ["--label", f"org.benchsmith.inputs={tag.rsplit(':', 1)[1]}"]
    if network:
        argv += ["--network", network]
    for key, value in sorted(args.items()):
        argv += ["--build-arg", f"{key}={value}"]
    # The Dockerfiles copy nothing in, so the context is just containers/ (a few kilobytes).
    argv.append(str(CONTAINERS_DIR))
    result = run(argv, timeout=BUILD_TIMEOUT, output_cap=8 << 20)
    if not result.ok:
        tail = "\n".join((result.stdout + "\n" + result.stderr).strip().splitlines()[-40:])
        why = "timed out" if result.timed_out else f"exit {result.returncode}"
        raise BuildError(
            f"building {tag} from containers/{dockerfile} on {args['BASE_IMAGE']} failed ({why}):\n{tail}\n"
            f"(if the base image cannot be pulled, set BENCHSMITH_BASE_IMAGE to a local Debian image; "
            f"see docs/containers.md)"
        )
    return BuiltImage(name, tag, True, time.monotonic() - start, image_size(engine, tag))


def build_all(
    engine: ToolchainBackend,
    base_image: str | None = None,
    *,
    names: Sequence[str] | None = None,
    network: str | None = None,
    progress: bool = False,
) -> dict[str, BuiltImage]:
    """Build every image (or ``names``) on ``base_image``; images whose tag exists are not rebuilt."""
    network = network or os.environ.get("BENCHSMITH_BUILD_NETWORK") or None
    for name in sorted(set(names or ())):
        IMAGES.resolve(name)  # UnknownName (a KeyError) names the images containers/ has
    wanted = [n for n in IMAGES if names is None or n in names]
    done: dict[str, BuiltImage] = {}
    if not progress:
        for name in wanted:
            done[name] = build_image(engine, name, base_image, network=network)
        return done
    from rich.console import Console

    console = Console(stderr=True)
    for i, name in enumerate(wanted, 1):
        with console.status(f"[{i}/{len(wanted)}] {name}: building with {engine.value} (minutes on a cold cache)"):
            done[name] = build_image(engine, name, base_image, network=network)
        item = done[name]
        what = f"built in {item.seconds:.0f}s" if item.built else "up to date"
        console.print(f"[{i}/{len(wanted)}] {item.tag}: {what}, {_mib(item.size)}")
    return done


def _mib(size: int | None) -> str:
    return "size unknown" if size is None else f"{size / 2**20:.0f} MiB"


def _print_table(images: dict[str, BuiltImage], engine: ToolchainBackend, base: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"benchsmith images ({engine.value}, base {base})")
    for col in ("image", "tag", "status", "seconds", "size"):
        table.add_column(col)
    for item in images.values():
        status = "built" if item.built else "up to date"
        table.add_row(item.name, item.tag, status, f"{item.seconds:.1f}", _mib(item.size))
    Console(stderr=True).print(table)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchsmith.containers", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="build the toolchain and sandbox images (skips those already built)")
    b.add_argument("--engine", choices=[ToolchainBackend.DOCKER.value, ToolchainBackend.PODMAN.value])
    b.add_argument("--base-image", help=f"base image (default: $BENCHSMITH_BASE_IMAGE or {DEFAULT_BASE_IMAGE})")
    b.add_argument("--network", help="network for RUN steps while building (default: $BENCHSMITH_BUILD_NETWORK)")
    b.add_argument("--only", nargs="+", choices=list(IMAGES), help="build only these images")
    b.add_argument("--if-engine", action="store_true", help="exit 0 with a message when no engine answers")
    t = sub.add_parser("tags", help="print the tag each image has with the current inputs")
    t.add_argument("--base-image")
    e = sub.add_parser("engine", help="print the engine that answers (exit 1 if none)")
    e.add_argument("--engine", choices=[ToolchainBackend.DOCKER.value, ToolchainBackend.PODMAN.value])
    args = parser.parse_args(argv)

    if args.command == "tags":
        for name, dockerfile in IMAGES.items():
            print(f"{name}\t{image_tag(dockerfile, build_args_for(name, args.base_image))}")
        return 0
    engine = detect_engine(args.engine)
    if args.command == "engine":
        print(engine.value if engine else "none")
        return 0 if engine else 1
    if engine is None:
        msg = "no container engine answers (docker info / podman info failed)"
        if args.if_engine:
            print(f"benchsmith images: {msg}; skipping image builds, the container tests will skip", file=sys.stderr)
            return 0
        print(f"benchsmith images: {msg}; install docker or podman (docs/containers.md)", file=sys.stderr)
        return 1
    base = args.base_image or default_base_image()
    try:
        images = build_all(engine, base, names=args.only, network=args.network, progress=True)
    except BuildError as exc:
        print(f"benchsmith images: {exc}", file=sys.stderr)
        return 1
    _print_table(images, engine, base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
