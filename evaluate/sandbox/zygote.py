"""Fork server ("zygote") for the sandbox: a pristine interpreter that forks one confined child per program.

Pure standard library, run as its own process (``python -s -B -c <program> FD CONFIG_JSON``, the program being
``zygote_fs.py``, ``zygote_cgroup.py`` and this file, in that order) by :mod:`benchsmith.evaluate.sandbox`; never
imported by benchsmith itself.  It never executes untrusted code.

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
    isolate_keyrings()  # zygote_keys.py: keys are no namespace's, the filter is inherited by all it starts
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
CGROUP = {"fd": None, "files": None}


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
            if path in KEEP_IN_SCRATCH:
                continue  # the bound interpreter tree (a venv under /tmp), read-only
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except OSError:
                    pass


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
