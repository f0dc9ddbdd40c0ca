"""Image names for the toolchain containers in ``containers/``.

An image is tagged by a hash of its inputs (the Dockerfile text and the build arguments), so an unchanged
toolchain is never rebuilt and a changed one can never be confused with the old one."""

from __future__ import annotations

import hashlib
from pathlib import Path

from benchsmith.runner import repo_root

CONTAINERS_DIR = repo_root() / "containers"


def dockerfile_path(dockerfile: str) -> Path:
    path = CONTAINERS_DIR / dockerfile
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; containers/ holds one Dockerfile per toolchain")
    return path


def image_tag(dockerfile: str, build_args: dict[str, str] | None = None) -> str:
    path = dockerfile_path(dockerfile)
    digest = hashlib.sha256(path.read_bytes())
    for key, value in sorted((build_args or {}).items()):
        digest.update(f"\0{key}={value}".encode())
    name = path.name.removesuffix(".Dockerfile").removesuffix("Dockerfile").strip(".-") or path.parent.name
    return f"benchsmith-{name.lower()}:{digest.hexdigest()[:12]}"
