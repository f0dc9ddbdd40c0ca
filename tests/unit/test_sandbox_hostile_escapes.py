"""Hostile programs that reach outside their run must find nothing: files outside its directory, the user's home,
our environment, the network, the host's sockets and System V IPC objects, benchsmith's own files and data.

What is checked against what the isolation can assure here (see ``Sandbox.isolation``):
* as root, each run has a throwaway uid, so the program cannot read/delete our 0700 files;
  as non-root these guarantees do not exist and those tests skip, saying why;
* without a network namespace (kernel refuses) the network tests skip, saying why;
* a private root (hidden trees, read-only file systems) needs root and the fork server, and skips without.
"""

from __future__ import annotations

import os
import socket
import textwrap
from pathlib import Path

import pytest

from benchsmith.evaluate.sandbox import Sandbox, Verdict
from tests.hostile.traces import (LIBC_IPC, NAME_ME, assert_nothing_left, ipc_key, ipc_keys, needs, needs_netns,
                                  needs_uid, new_token, try_writes)
from tests.timing import scaled


def test_deleting_files_outside_its_directory_fails(sandbox, tmp_path):
    needs_uid(sandbox)
    canary = tmp_path / "canary.txt"
    canary.write_text("still here")
    prog = textwrap.dedent(f"""
        import os, shutil
        errors = 0
        for attempt in (lambda: os.remove({str(canary)!r}), lambda: shutil.rmtree({str(tmp_path)!r})):
            try:
                attempt()
            except OSError:
                errors += 1
        raise SystemExit(1 if errors else 0)
    """)
    res = sandbox.run(prog)
    assert res.verdict is Verdict.FAILED
    assert canary.read_text() == "still here"


def test_own_directory_is_writable_and_nothing_carries_over(sandbox):
    write = textwrap.dedent("""
        import os, tempfile
        with open('scratch.txt', 'w') as f:
            f.write('ok')
        assert os.path.expanduser('~') == os.getcwd() == tempfile.gettempdir()
        print(os.getcwd())
    """)
    first = sandbox.run(write)
    assert first.verdict is Verdict.PASSED, first.stderr
    workdir = first.stdout.strip()
    check = f"import os\nprint(os.getcwd())\nassert not os.path.exists({workdir!r}), 'left over'\n"
    second = sandbox.run(check)
    assert second.verdict is Verdict.PASSED, second.stderr
    assert second.stdout.strip() != workdir


def test_file_systems_outside_the_scratch_space_are_read_only(sandbox, tmp_path):
    from benchsmith.evaluate.sandbox import LaunchMode

    if sandbox.isolation.mode is not LaunchMode.ROOT_FORKSERVER:
        pytest.skip(f"read-only file systems need the fork server (root); mode here: {sandbox.isolation.mode}")
    import shutil
    import tempfile

    # a world-writable directory on a disk file system: not even visible inside (the sandbox's /var/tmp is its
    # own tmpfs); the system directories it does see are read-only
    base = "/var/tmp" if os.access("/var/tmp", os.W_OK) else str(tmp_path)
    target = Path(tempfile.mkdtemp(prefix="bs-sbx-rw-test-", dir=base))
    target.chmod(0o777)
    prog = textwrap.dedent(f"""
        import errno, os
        assert not os.path.exists({str(target)!r})
        for path in ('/etc/benchsmith-test', '/usr/benchsmith-test', '/benchsmith-test', '/run/x'):
            try:
                open(path, 'w').write('x')
            except OSError as exc:
                assert exc.errno in (errno.EROFS, errno.EACCES), exc
            else:
                raise SystemExit('wrote ' + path)
    """)
    try:
        res = sandbox.run(prog)
        assert res.verdict is Verdict.PASSED, res.stderr
        assert list(target.iterdir()) == []
    finally:
        shutil.rmtree(target, ignore_errors=True)


def test_reading_the_users_home_fails(sandbox, tmp_path, monkeypatch):
    needs_uid(sandbox)
    fake_home = tmp_path / "home"
    fake_home.mkdir()
    secret = "TOPSECRET-" + os.urandom(8).hex()
    (fake_home / ".secret").write_text(secret)
    monkeypatch.setenv("HOME", str(fake_home))  # the sandbox must not hand our HOME to the program
    prog = textwrap.dedent(f"""
        import os
        found = []
        for path in (os.path.expanduser('~/.secret'), {str(fake_home / '.secret')!r}, '/root/.bashrc'):
            try:
                with open(path) as f:
                    found.append(f.read())
            except OSError as exc:
                print('denied', path, type(exc).__name__)
        print(''.join(found))
        raise SystemExit(0 if found else 3)
    """)
    res = sandbox.run(prog)
    assert secret not in res.stdout + res.stderr
    assert res.returncode == 3
    assert os.environ["HOME"] not in res.stdout.replace("denied " + str(fake_home / ".secret"), "")


def test_environment_is_minimal(sandbox, monkeypatch):
    monkeypatch.setenv("BENCHSMITH_TEST_TOKEN", "should-not-leak")
    res = sandbox.run("import os, json\nprint(json.dumps(dict(os.environ)))\n")
    assert res.verdict is Verdict.PASSED
    assert "should-not-leak" not in res.stdout


# No TCP to the host or the outside: test_sandbox_conformance.test_no_network, for every backend.


def test_abstract_unix_socket_of_the_host_is_unreachable(sandbox):
    needs_netns(sandbox)
    name = b"\0benchsmith-test-" + os.urandom(6).hex().encode()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(name)
    server.listen(1)
    try:
        res = sandbox.run(f"import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({name!r})\n")
    finally:
        server.close()
    assert res.verdict is Verdict.FAILED
    assert "ConnectionRefused" in res.stderr or "FileNotFound" in res.stderr


def test_sysv_shared_memory_dies_with_the_run_and_is_not_shared_between_runs(strict):
    needs(strict, "ipc")
    token = new_token()
    key = ipc_key(token)
    create = NAME_ME.format(token=token) + LIBC_IPC + try_writes(token) + textwrap.dedent(f"""
        sid = libc.shmget({key}, 1 << 20, IPC_CREAT | 0o666)
        if sid < 0: err('shmget')
        if libc.msgget({key}, IPC_CREAT | 0o666) < 0: err('msgget')
        if libc.semget({key}, 1, IPC_CREAT | 0o666) < 0: err('semget')
        print('created', sid)
    """)
    first = strict.run(create)
    assert first.verdict is Verdict.PASSED, first.stderr
    assert key not in ipc_keys()  # not the host's IPC
    look = LIBC_IPC + textwrap.dedent(f"""
        found = [libc.shmget({key}, 0, 0) >= 0, libc.msgget({key}, 0) >= 0, libc.semget({key}, 0, 0) >= 0]
        print('{token}-reached' if any(found) else 'gone')
        raise SystemExit(3 if any(found) else 0)
    """)
    second = strict.run(look)
    assert second.verdict is Verdict.PASSED, second.stderr
    assert second.stdout.strip() == "gone"
    assert_nothing_left(token, first.stdout + second.stdout)


def test_host_sysv_objects_are_invisible(strict):
    needs(strict, "ipc")
    import ctypes

    token = new_token()
    key = ipc_key(token)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmget.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_int]
    sid = libc.shmget(key, 4096, 0o1000 | 0o666)
    assert sid >= 0
    try:
        res = strict.run(LIBC_IPC + textwrap.dedent(f"""
            if libc.shmget({key}, 0, 0) >= 0:
                print('{token}-reached')
            raise SystemExit(0 if libc.shmget({key}, 0, 0) < 0 else 4)
        """))
    finally:
        libc.shmctl(sid, 0, None)  # IPC_RMID
    assert res.verdict is Verdict.PASSED, res.stderr
    assert_nothing_left(token, res.stdout)


@pytest.mark.parametrize("where", ["/tmp", "/var/tmp", "/run"])
def test_host_path_sockets_are_unreachable(strict, where):
    needs(strict, "root")
    if not os.access(where, os.W_OK):
        pytest.skip(f"{where} is not writable here")
    token = new_token()
    path = f"{where}/{token}.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    server.settimeout(0.1)
    try:
        res = strict.run(textwrap.dedent(f"""
            import socket
            s = socket.socket(socket.AF_UNIX)
            s.connect({path!r})
            print('{token}-reached')
        """))
        with pytest.raises(socket.timeout):
            server.accept()
    finally:
        server.close()
        os.unlink(path)
    assert res.verdict is Verdict.FAILED
    assert "FileNotFoundError" in res.stderr
    assert_nothing_left(token, res.stdout)


def test_benchsmith_files_and_the_project_tree_are_invisible(strict):
    needs(strict, "root")
    import benchsmith
    from benchsmith.runner import repo_root

    token = new_token()
    pkg = Path(benchsmith.__file__).resolve().parent
    probes = [str(pkg / "__init__.py"), str(pkg / "data"), str(repo_root() / "pyproject.toml"),
              str(repo_root() / "tests"), str(Path(__file__).resolve())]
    prog = textwrap.dedent(f"""
        import os
        seen = [p for p in {probes!r} if os.path.exists(p)]
        try:
            import benchsmith
            seen.append('import benchsmith')
        except ImportError:
            pass
        print('{token}-reached' if seen else 'nothing', seen)
        raise SystemExit(0 if not seen else 5)
    """)
    res = strict.run(prog)
    assert res.verdict is Verdict.PASSED, res.stdout + res.stderr
    assert_nothing_left(token, res.stdout)


def test_shared_reference_data_is_invisible(strict):
    needs(strict, "root")
    from tests.shared_data import shared_data

    data = shared_data("humanextension/data.json")
    if not data.is_file():
        pytest.skip(f"no shared HumanExtension data at {data}")
    token = new_token()
    res = strict.run(f"import os\nprint('{token}-reached' if os.path.exists({str(data)!r}) else 'hidden')\n")
    assert res.verdict is Verdict.PASSED and res.stdout.strip() == "hidden"
    assert_nothing_left(token, res.stdout)


def test_paths_the_caller_hides_are_empty_inside_a_visible_tree(tmp_path):
    """A hidden directory under a tree the sandbox must show (/usr) is covered; without hiding it shows."""
    if os.geteuid() != 0 or not os.access("/usr/local/share", os.W_OK):
        pytest.skip("needs root to place a directory under /usr/local/share")
    import shutil

    token = new_token()
    secret_dir = Path("/usr/local/share") / f"{token}-data"
    secret_dir.mkdir()
    (secret_dir / "answers.json").write_text('{"expected": 5040}')
    prog = f"import os\nprint(sorted(os.listdir({str(secret_dir)!r})))\n"
    try:
        with Sandbox(timeout=scaled(5), workers=1, hide=[secret_dir]) as hidden, \
                Sandbox(timeout=scaled(5), workers=1) as shown:
            needs(hidden, "root")
            inside, control = hidden.run(prog), shown.run(prog)
    finally:
        shutil.rmtree(secret_dir)
    assert inside.verdict is Verdict.PASSED and inside.stdout.strip() == "[]", inside.stderr
    assert control.stdout.strip() == "['answers.json']"  # the mechanism, not the path, is what hides it


def test_home_root_and_run_are_empty(strict):
    needs(strict, "root")
    token = new_token()
    res = strict.run(textwrap.dedent(f"""
        import os
        found = []
        for d in ('/home', '/run', '/srv', '/mnt', '/media', '/opt', '/sys'):
            if os.path.isdir(d) and os.listdir(d):
                found.append(d)
        if os.path.exists('/root/.bashrc') or os.path.exists('/root/.ssh'):
            found.append('/root')
        print('{token}-reached' if found else 'empty', found)
    """))
    assert res.verdict is Verdict.PASSED and res.stdout.startswith("empty"), res.stdout
    assert_nothing_left(token, res.stdout)
