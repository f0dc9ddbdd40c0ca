"""The fork server's memory cgroups: one per run under the caller's cgroup, its limit, its OOM kills.

Not a module of its own: part of the fork server's program (``forkserver.ZYGOTE_PARTS``), run with ``python -c``;
it uses that file's ``CGROUP`` state.  The directory and the names of its memory files come from the caller
(``benchsmith.confine.cgroups.CgroupFiles`` in the config), so v1/v2 are told apart in one place, not here.
"""

import os


def cgroup_write(name, value):
    fd = os.open(name, os.O_WRONLY, dir_fd=CGROUP["fd"])
    try:
        os.write(fd, str(value).encode())
    finally:
        os.close(fd)


def cgroup_read(name):
    try:
        fd = os.open(name, os.O_RDONLY, dir_fd=CGROUP["fd"])
    except OSError:
        return ""
    try:
        return os.read(fd, 1 << 16).decode(errors="replace")
    finally:
        os.close(fd)


RUN_CGROUP = {"name": None, "memory": None, "oom": 0}


def oom_kills(name):
    for line in cgroup_read(name + "/" + CGROUP["files"]["events"]).splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill" and value.strip().isdigit():
            return int(value)
    return 0


def make_run_cgroup(req):
    """The memory cgroup for this run (its whole process tree); its name, or None without cgroups.

    Runs are strictly sequential and every process of a run is gone before the next one starts, so one cgroup
    serves them all (making and removing a memory cgroup per run costs more than a small program): only the
    limit is rewritten when it changes, and OOM kills are counted as the difference across the run."""
    if CGROUP["fd"] is None or not req.get("memory"):
        return None
    files = CGROUP["files"]
    if RUN_CGROUP["name"] is None:
        name = "run"
        try:
            os.mkdir(name, dir_fd=CGROUP["fd"])
        except FileExistsError:
            pass
        # Z moves into the run cgroup itself, once: every H is then forked inside it, and no run pays for a
        # migration (writing cgroup.procs waits for an RCU grace period: milliseconds on a busy machine).
        # Z's pages stay charged where they were first touched, and each H raises its own OOM score, so the
        # kernel kills the program's processes, not Z (if it ever did, the caller replaces the server).
        try:
            cgroup_write(name + "/cgroup.procs", 0)
        except OSError as exc:
            raise OSError(exc.errno, "joining the run cgroup: %s" % exc.strerror) from None
        RUN_CGROUP["name"] = name
        if files["swap_zero"]:
            try:
                cgroup_write(name + "/" + files["swap_zero"], 0)
            except OSError:
                pass
    name = RUN_CGROUP["name"]
    if RUN_CGROUP["memory"] != req["memory"]:
        limits = files["limit"]
        # v1 wants memory <= memory+swap at every step: lower the memory limit first, raise memory+swap first
        # (the first write goes against an unlimited memory+swap); confine.cgroups.set_memory_limit's rule, written
        # out here because this program runs alone, through a directory descriptor, after the pivot
        previous = RUN_CGROUP["memory"]
        order = limits if previous is None or previous > req["memory"] else tuple(reversed(limits))
        for limit in order:
            try:
                cgroup_write(name + "/" + limit, req["memory"])
            except OSError:
                if limit == limits[0]:  # the memory limit itself is required; memory+swap where it exists
                    raise
        RUN_CGROUP["memory"] = req["memory"]
    if files["peak_resettable"]:
        try:
            cgroup_write(name + "/" + files["peak"], 0)  # reset the high-water mark
        except OSError:
            pass
    RUN_CGROUP["oom"] = oom_kills(name)
    req["cgroup"] = name
    return name


def finish_run_cgroup(name):
    """(OOM kills during the run, peak bytes)."""
    if name is None:
        return 0, None
    peak = cgroup_read(name + "/" + CGROUP["files"]["peak"]).strip()
    return oom_kills(name) - RUN_CGROUP["oom"], int(peak) if peak.isdigit() else None


def open_cgroup(cfg):
    """The caller's cgroup directory for this server, opened before the pivot hides /sys."""
    path = cfg.get("cgroup")
    if path:
        CGROUP["fd"] = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        CGROUP["files"] = cfg["cgroup_files"]
