"""Our end of the fork servers (``zygote.py``, run as its own program): one request at a time, a pool per
sandbox."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Sequence

from benchsmith import runner
from benchsmith.confine import cgroups
from benchsmith.confine.cgroup_tree import PrivateCgroups
from benchsmith.confine.cgroups import CgroupFiles
from benchsmith.runner import Limits


class ZygoteDied(RuntimeError):
    pass


# the fork server's program: its parts in this order (zygote.py last: it ends by calling main())
ZYGOTE_PARTS = ("zygote_fs.py", "zygote_cgroup.py", "zygote_keys.py", "zygote.py")
_ZYGOTE_SOURCE = "\n".join(Path(__file__).with_name(part).read_text(encoding="utf-8") for part in ZYGOTE_PARTS)
# trusted standard-library modules the fork server compiles once, so that programs importing them (the judge's
# harness) do not compile them on every run
HARNESS_MODULE = "_benchsmith_judge_harness"
_PRELOAD = {HARNESS_MODULE: (Path(__file__).parents[1] / "humanext" / "judge_harness.py").read_text(encoding="utf-8")}


def zygote_request(uid: int | None, limits: Limits, cpu: int | None, memory: int | None = None) -> dict:
    return {
        "script": "program.py", "uid": uid, "env": child_env("/nonexistent"),  # HOME/TMPDIR set by the server
        "cpu": cpu,
        "as": limits.address_space, "fsize": limits.file_size, "nofile": limits.open_files,
        "nproc": limits.processes,
        "memory": memory,  # the run's cgroup limit and System V shared memory cap
    }


class Zygote:
    """Our end of one fork server (``zygote.py``): one request at a time."""

    def __init__(self, interpreter: str, netns: bool = True, private_fs: bool = True, scratch_mb: int = 64,
                 hide: Sequence[str] = (), cgroup: Path | None = None, cgroup_files: CgroupFiles | None = None
                 ) -> None:
        import json
        import socket

        self.cgroup = cgroup
        config = {"netns": netns, "private_fs": private_fs, "scratch_mb": int(scratch_mb), "hide": list(hide),
                  "cgroup": str(cgroup) if cgroup is not None else None,
                  "cgroup_files": dataclasses.asdict(cgroup_files) if cgroup_files is not None else None,
                  "preload": _PRELOAD}
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            env = child_env("/")
            self.proc = subprocess.Popen(
                [interpreter, "-s", "-B", "-c", _ZYGOTE_SOURCE, str(theirs.fileno()), json.dumps(config)],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, env=env, cwd="/", start_new_session=True,
            )
        finally:
            theirs.close()
        self.sock = ours
        try:
            hello = self._recv(30)
        except (OSError, ValueError, ZygoteDied) as exc:
            self.close()
            raise ZygoteDied(f"fork server did not start: {exc}") from exc
        if not hello.get("ready"):
            self.close()
            raise ZygoteDied(f"fork server did not start: {hello.get('error', hello)}")
        self.readonly_failures: list[str] = list(hello.get("readonly_failures", []))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _recv(self, timeout: float | None) -> dict:
        import json

        self.sock.settimeout(timeout)
        data = self.sock.recv(1 << 16)
        if not data:
            raise ZygoteDied(f"fork server exited (status {self.proc.poll()})")
        return json.loads(data)

    def run(self, request: dict, program: str, timeout: float, output_cap: int,
            stderr_keep: int | None = None) -> runner.RunResult:
        """One program; output pipes and the control socket are multiplexed in the calling thread.  Of stderr
        only the last ``stderr_keep`` bytes are held (all of it counts towards ``output_cap``)."""
        import array
        import json
        import selectors
        import socket

        src = os.memfd_create("program.py", os.MFD_CLOEXEC)
        try:
            data = program.encode("utf-8", errors="surrogatepass")
            view = memoryview(data)
            while view:
                view = view[os.write(src, view):]
            os.lseek(src, 0, os.SEEK_SET)
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
            try:
                self.sock.settimeout(30)
                self.sock.sendmsg([json.dumps(request).encode()],
                                  [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [out_w, err_w, src]))])
            except OSError as exc:
                os.close(out_r)
                os.close(err_r)
                raise ZygoteDied(f"fork server unreachable: {exc}") from exc
            finally:
                os.close(out_w)
                os.close(err_w)
        finally:
            os.close(src)
        start = time.monotonic()
        sel = selectors.DefaultSelector()
        try:
            reply = self._recv(30)
            if "pid" not in reply:
                raise ZygoteDied(f"fork server refused the request: {reply}")
            chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
            sizes = {out_r: 0, err_r: 0}
            truncated = killed = timed_out = False
            status: int | None = None
            report: dict = {}

            def kill() -> None:
                nonlocal killed
                if not killed:
                    killed = True
                    try:  # the server kills the program's session and everything else in its pid namespace
                        self.sock.send(b'{"kill": 1}')
                    except OSError:
                        pass

            self.sock.setblocking(False)
            sel.register(out_r, selectors.EVENT_READ)
            sel.register(err_r, selectors.EVENT_READ)
            sel.register(self.sock, selectors.EVENT_READ)
            deadline = start + timeout
            open_pipes = 2
            while open_pipes or status is None:
                if status is None and not timed_out:
                    wait = deadline - time.monotonic()
                    if wait <= 0:
                        timed_out = True
                        kill()
                        deadline = time.monotonic() + 30  # grace for the server to reap and report
                        continue
                else:
                    wait = deadline - time.monotonic()
                    if wait <= 0:
                        raise ZygoteDied("fork server did not report a killed program's status")
                for key, _ in sel.select(wait):
                    fd = key.fd
                    if key.fileobj is self.sock:
                        data = self.sock.recv(1 << 16)
                        if not data:
                            raise ZygoteDied(f"fork server exited (status {self.proc.poll()})")
                        report = json.loads(data)
                        status = int(report["status"])
                        sel.unregister(self.sock)
                        continue
                    data = os.read(fd, 65536)
                    if not data:
                        sel.unregister(fd)
                        open_pipes -= 1
                        continue
                    room = output_cap - sizes[fd]
                    if room > 0:
                        chunks[fd].append(data[:room])
                        sizes[fd] += min(room, len(data))
                        if fd == err_r and stderr_keep is not None:
                            chunks[fd] = [_tail(chunks[fd], stderr_keep)]
                    if len(data) > room:
                        truncated = True
                        kill()  # keep draining until the pipes close
        finally:
            sel.close()
            self.sock.setblocking(True)
            os.close(out_r)
            os.close(err_r)
        rc = os.waitstatus_to_exitcode(status)
        return runner.RunResult(
            argv=["<fork server>", request["script"]],
            returncode=None if timed_out else rc,
            stdout=b"".join(chunks[out_r]).decode("utf-8", errors="replace"),
            stderr=b"".join(chunks[err_r]).decode("utf-8", errors="replace"),
            timed_out=timed_out,
            truncated=truncated,
            duration=time.monotonic() - start,
            extra={"killed": killed, "oom": report.get("oom", 0), "peak": report.get("peak")},
        )

    def close(self) -> None:
        try:
            self.sock.close()  # EOF ends the server
        finally:
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            if self.cgroup is not None:
                cgroups.remove(self.cgroup)
                self.cgroup = None


def _tail(chunks: list[bytes], keep: int) -> bytes:
    if sum(map(len, chunks)) <= keep:
        return b"".join(chunks)
    return b"".join(chunks)[-keep:] if keep else b""


class ZygotePool:
    def __init__(self, interpreter: str, netns: bool, scratch_mb: int, hide: Sequence[str] = (),
                 cgroups: PrivateCgroups | None = None) -> None:
        self.interpreter = interpreter
        self.netns = netns
        self.scratch_mb = scratch_mb
        self.hide = list(hide)
        self.cgroups = cgroups
        self._idle: list[Zygote] = []
        self._lock = threading.Lock()

    def acquire(self) -> Zygote:
        with self._lock:
            while self._idle:
                z = self._idle.pop()
                if z.alive():
                    return z
                z.close()
        cgroup = self.cgroups.child("z") if self.cgroups is not None else None
        try:
            return Zygote(self.interpreter, self.netns, scratch_mb=self.scratch_mb, hide=self.hide, cgroup=cgroup,
                          cgroup_files=self.cgroups.files if self.cgroups is not None else None)
        except BaseException:
            if cgroup is not None:
                self.cgroups.remove(cgroup)
            raise

    def release(self, zygote: Zygote, healthy: bool) -> None:
        if not healthy or not zygote.alive():
            zygote.close()
            return
        with self._lock:
            self._idle.append(zygote)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for z in idle:
            z.close()


def child_env(home: str) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": home,
        "TMPDIR": home,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
