"""Fork server ("zygote") for the sandbox: a pristine interpreter that forks one confined child per program.

Pure standard library, run as its own process (``python -s -B -c <this file> FD CONFIG_JSON``) by
:mod:`benchsmith.evaluate.sandbox`; never imported by benchsmith itself.  It never executes untrusted code.

At start it unshares new pid, network, UTS (hostname "sandbox") and mount namespaces and forks ``Z``, PID 1 of the new pid namespace,
which builds a **minimal root** and pivots into it: a read-only tmpfs holding read-only binds of the system
directories (/usr, /bin, /lib*, /sbin, /etc) and of the interpreter's own installation, nothing else -- no host
/tmp, /var/tmp, /run, /home, /root, /srv, /work, /sys: no host path sockets, no project tree, no data --, empty
read-only tmpfs over every configured hidden path that would still be visible (benchsmith's package and data
directories, the caller's inputs and outputs), a /dev with only null/zero/full/random/urandom, a /proc of the
namespace (``hidepid=invisible``: programs see only their own processes) and private size-limited tmpfs on /tmp,
/var/tmp and /dev/shm.  The network namespace has nothing but a loopback device that is down.

Each request is served strictly one at a time: ``Z`` writes the program (received as a memfd) to a fresh
``/tmp/run-N`` owned by the run's uid, sets the memory limit of the run cgroup it sits in (when the caller gave
one: the limit then holds for the program's whole process tree, shared memory and tmpfs files included) and
forks the program ``H``, which unshares a fresh **IPC namespace** (System V objects and POSIX queues die with the run;
shared memory is capped by the namespace's ``shmall``/``shmmax`` at the memory limit), takes its own session,
stdin from /dev/null, stdout/stderr to the caller's pipes, every other descriptor closed (the control socket
included), cwd = that directory, rlimits, no-new-privileges, a throwaway uid/gid with no supplementary groups, a
minimal environment; then the program runs as ``__main__`` with the exit semantics of ``python program.py``.
When ``H`` ends (or the caller asks for a kill) ``Z`` kills every other process of the namespace (``kill(-1)``:
daemons that left the session included), reaps them all, empties the scratch file systems and removes the run's
cgroup before it reports, so no run leaves anything behind for the next one.

Forking a small idle interpreter costs about a millisecond; starting a new one costs tens, creating namespaces
per run about ten.  That is the whole speed-up -- the uid, rlimits, session and directory are per program.

Protocol on the inherited ``SOCK_SEQPACKET`` socket: first ``{"ready": 1, "readonly_failures": [...]}``
(or ``{"error": ...}``); then request = JSON + SCM_RIGHTS [stdout_w, stderr_w, source memfd]; replies
``{"pid": H}`` right after the fork and ``{"status": waitpid status, "oom": kills, "peak": bytes}`` once the
run's processes are all gone.  ``{"kill": 1}`` kills the current run (ignored when idle).  An empty message or
EOF ends the server.
"""

import array
import ctypes
import json
import os
import resource
import select
import signal
import socket
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]


def check(rc, what):
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, what + ": " + os.strerror(err))


def recv_request(sock):
    fds = array.array("i")
    msg, anc, _flags, _addr = sock.recvmsg(1 << 20, socket.CMSG_SPACE(8 * fds.itemsize))
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    return msg, list(fds)


def enter_run_namespaces(req):
    """In H, still root: join the run's memory cgroup, get a fresh IPC namespace capped at the memory limit."""
    procs = req.get("cgroup")
    if procs:
        # forked inside the run's cgroup already (Z lives there): when the tree is over its limit, the OOM
        # killer must pick the program's processes (they inherit this), never Z
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
    check(libc.unshare(CLONE_NEWIPC), "unshare(CLONE_NEWIPC)")
    memory = req.get("memory")
    if memory:
        # per-IPC-namespace sysctls: System V shared memory in this run can never exceed the memory limit
        for name, value in (("shmmax", memory), ("shmall", max(1, memory // 4096)), ("shmmni", 64)):
            try:
                with open("/proc/sys/kernel/" + name, "w") as f:
                    f.write(str(value))
            except OSError:
                if not procs:
                    raise


def run_program(req, out_fd, err_fd):
    """In H: confine ourselves, then run the program like ``python program.py`` would."""
    enter_run_namespaces(req)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(out_fd, 1)
    os.dup2(err_fd, 2)
    os.closerange(3, 1 << 16)
    os.chdir(req["dir"])
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    cpu = req.get("cpu")
    if cpu:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    for name, key in (("RLIMIT_AS", "as"), ("RLIMIT_FSIZE", "fsize"), ("RLIMIT_NOFILE", "nofile"),
                      ("RLIMIT_NPROC", "nproc")):
        value = req.get(key)
        if value:
            resource.setrlimit(getattr(resource, name), (value, value))
    os.umask(0o077)
    check(libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    uid = req.get("uid")
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    os.environ.clear()
    os.environ.update(req["env"])
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.argv = [req["script"]]
    sys.path[0] = req["dir"]

    import types

    main = types.ModuleType("__main__")
    main.__file__ = os.path.join(req["dir"], req["script"])
    main.__builtins__ = __builtins__
    sys.modules["__main__"] = main
    code = 0
    try:
        with open(req["script"], "rb") as f:
            source = f.read()
        exec(compile(source, req["script"], "exec"), main.__dict__)
    except SystemExit as exc:
        code = exit_code(exc)
    except BaseException:  # the interpreter's own behaviour: traceback to stderr, status 1
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        code = shutdown(code)
    os._exit(code)


def exit_code(exc):
    arg = exc.code
    if arg is None:
        return 0
    if isinstance(arg, int):
        return arg & 0xFF
    try:
        print(arg, file=sys.stderr)
    except Exception:
        pass
    return 1


def shutdown(code):
    """What the interpreter does at exit: join threads, run atexit handlers, flush the standard streams."""
    try:
        if "threading" in sys.modules:
            sys.modules["threading"]._shutdown()
    except BaseException:
        pass
    try:
        import atexit

        atexit._run_exitfuncs()
    except SystemExit as exc:
        code = exit_code(exc)
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            if stream is sys.stdout and code == 0:
                code = 120  # the interpreter's status when stdout cannot be flushed at exit
    return code


SCRATCH_DIRS = ("/tmp", "/var/tmp", "/dev/shm")
RUNS = [0]
CGROUP = {"fd": None, "version": None}


def prepare_workdir(req, src_fd):
    RUNS[0] += 1
    workdir = "/tmp/run-%d" % RUNS[0]
    os.mkdir(workdir, 0o700)
    with os.fdopen(src_fd, "rb") as src, open(os.path.join(workdir, req["script"]), "wb") as dst:
        dst.write(src.read())
    uid = req.get("uid")
    if uid is not None:
        os.chown(workdir, uid, uid)
        os.chown(os.path.join(workdir, req["script"]), uid, uid)
    req["dir"] = workdir
    req["env"] = dict(req["env"], HOME=workdir, TMPDIR=workdir)


def clear_scratch():
    """Remove everything the run left in the writable scratch file systems."""
    import shutil

    for top in SCRATCH_DIRS if PRIVATE_FS[0] else ():
        for name in os.listdir(top):
            path = os.path.join(top, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except OSError:
                    pass


CGROUP_FILES = {
    1: {"limit": ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes"), "events": "memory.oom_control",
        "peak": "memory.max_usage_in_bytes"},
    2: {"limit": ("memory.max",), "swap": "memory.swap.max", "events": "memory.events", "peak": "memory.peak"},
}


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
    for line in cgroup_read(name + "/" + CGROUP_FILES[CGROUP["version"]]["events"]).splitlines():
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
    files = CGROUP_FILES[CGROUP["version"]]
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
        if "swap" in files:
            try:
                cgroup_write(name + "/" + files["swap"], 0)
            except OSError:
                pass
    name = RUN_CGROUP["name"]
    if RUN_CGROUP["memory"] != req["memory"]:
        limits = files["limit"]
        # v1 wants memory <= memory+swap at every step: lower the memory limit first, raise memory+swap first
        # (the first write goes against an unlimited memory+swap)
        previous = RUN_CGROUP["memory"]
        order = limits if previous is None or previous > req["memory"] else tuple(reversed(limits))
        for limit in order:
            try:
                cgroup_write(name + "/" + limit, req["memory"])
            except OSError:
                if limit == limits[0]:  # the memory limit itself is required; memory+swap where it exists
                    raise
        RUN_CGROUP["memory"] = req["memory"]
    if CGROUP["version"] == 1:
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
    peak = cgroup_read(name + "/" + CGROUP_FILES[CGROUP["version"]]["peak"]).strip()
    return oom_kills(name) - RUN_CGROUP["oom"], int(peak) if peak.isdigit() else None


def run_request(sock, req, out_fd, err_fd):
    """In Z: fork H, wait for it (or a kill request), clear the namespace, report."""
    try:
        cgroup = make_run_cgroup(req)
    except OSError as exc:
        os.write(err_fd, ("sandbox setup failed: run cgroup: %s\n" % exc).encode())
        os.close(out_fd)
        os.close(err_fd)
        sock.send(json.dumps({"pid": 0}).encode())
        sock.send(json.dumps({"status": 125 << 8, "oom": 0, "peak": None}).encode())
        return
    h = os.fork()
    if h == 0:
        try:
            sock.close()
            os.setsid()
            run_program(req, out_fd, err_fd)
        except BaseException as exc:
            try:
                os.write(err_fd, ("sandbox setup failed: %r\n" % (exc,)).encode())
            finally:
                os._exit(125)
        os._exit(125)
    os.close(out_fd)
    os.close(err_fd)
    sock.send(json.dumps({"pid": h}).encode())
    status = wait_or_kill(sock, h)
    kill_everything()
    clear_scratch()
    oom, peak = finish_run_cgroup(cgroup)
    sock.send(json.dumps({"status": status, "oom": oom, "peak": peak}).encode())


def wait_or_kill(sock, h):
    try:
        pidfd = os.pidfd_open(h)
    except (AttributeError, OSError):
        pidfd = None
    watch = [sock] + ([pidfd] if pidfd is not None else [])
    try:
        while True:
            ready, _, _ = select.select(watch, [], [], None if pidfd is not None else 0.005)
            if sock in ready:
                msg, fds = recv_request(sock)
                for fd in fds:
                    os.close(fd)
                if not msg:
                    kill_everything()
                    os._exit(0)
                if json.loads(msg).get("kill"):
                    kill_all()  # H is reaped below, its status being the run's
            pid, status = os.waitpid(h, os.WNOHANG)
            if pid == h:
                return status
    finally:
        if pidfd is not None:
            os.close(pidfd)


def kill_all():
    """As PID 1 of the namespace: SIGKILL every other process in it."""
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass


def kill_everything():
    """kill_all, then reap them all (orphans are ours)."""
    kill_all()
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def serve(sock):
    while True:
        try:
            msg, fds = recv_request(sock)
        except (OSError, ValueError):
            return
        if not msg:
            return
        req = json.loads(msg)
        if "script" not in req:  # a late kill for a run that already ended
            for fd in fds:
                os.close(fd)
            continue
        if len(fds) != 3:
            for fd in fds:
                os.close(fd)
            sock.send(json.dumps({"error": "expected 3 descriptors, got %d" % len(fds)}).encode())
            continue
        try:
            prepare_workdir(req, fds[2])
        except OSError as exc:
            os.close(fds[0])
            os.close(fds[1])
            sock.send(json.dumps({"error": "cannot prepare the run's directory: %s" % exc}).encode())
            continue
        run_request(sock, req, fds[0], fds[1])


MOUNT_FLAGS = {"nosuid": 2, "nodev": 4, "noexec": 8, "noatime": 1024, "nodiratime": 2048,
               "relatime": 1 << 21, "strictatime": 1 << 24}
MS_RDONLY, MS_REMOUNT, MS_BIND = 1, 32, 4096
MNT_DETACH = 2
PRIVATE_FS = [False]
SYSTEM_TOPS = ("usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc")
DEVICES = ("null", "zero", "full", "random", "urandom")
NEW_ROOT = "/tmp"  # staging mount point: any existing directory; covered by our tmpfs, in our namespace only
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
    for top, size in (("/tmp", scratch_mb), ("/var/tmp", scratch_mb), ("/dev/shm", 16)):
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


def open_cgroup(cfg):
    """The caller's cgroup directory for this server, opened before the pivot hides /sys."""
    path = cfg.get("cgroup")
    if path:
        CGROUP["fd"] = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        CGROUP["version"] = int(cfg.get("cgroup_version", 1))


def preload(modules):
    """Compile and run our own trusted modules once (never the program's), for every run to import."""
    import types

    for name, source in sorted(modules.items()):
        mod = types.ModuleType(name)
        exec(compile(source, name, "exec"), mod.__dict__)
        sys.modules[name] = mod


def main():
    control = socket.socket(fileno=int(sys.argv[1]))
    cfg = json.loads(sys.argv[2])
    preload(cfg.get("preload", {}))
    netns, private_fs = bool(cfg.get("netns")), bool(cfg.get("private_fs"))
    check(libc.unshare(CLONE_NEWPID | CLONE_NEWUTS | (CLONE_NEWNET if netns else 0)
                       | (CLONE_NEWNS if private_fs else 0)), "unshare")
    socket.sethostname("sandbox")  # the host's name is not the program's business
    z = os.fork()
    if z == 0:
        check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "pdeathsig")
        ready = {"ready": 1, "readonly_failures": []}
        try:
            open_cgroup(cfg)
        except OSError as exc:
            control.send(json.dumps({"error": "cgroup %s: %s" % (cfg.get("cgroup"), exc)}).encode())
            os._exit(1)
        if private_fs:
            try:
                ready["readonly_failures"] = private_filesystem(cfg)
            except OSError as exc:
                control.send(json.dumps({"error": "private file system: %s" % exc}).encode())
                os._exit(1)
        control.send(json.dumps(ready).encode())
        serve(control)
        kill_everything()
        os._exit(0)
    control.close()
    while True:
        try:
            _, status = os.waitpid(z, 0)
            break
        except InterruptedError:
            continue
    os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


if __name__ == "__main__":
    main()
