"""Processes that outlive a confined toolchain run."""

from __future__ import annotations

import os

def toolchain_processes(*, with_container_uid: bool = False) -> list[int]:
    """pids of processes that run as a toolchain uid (confinement's private range; with ``with_container_uid``, the
    uid containers run as too): any of them after a run is a survivor."""
    from benchsmith import confine

    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                uid = os.stat(f"/proc/{d}").st_uid
            except OSError:
                continue
            if (confine.UID_BASE <= uid < confine.UID_BASE + confine.UID_SPAN
                    or (with_container_uid and uid == confine.CONTAINER_UID)):
                out.append(int(d))
    return out
