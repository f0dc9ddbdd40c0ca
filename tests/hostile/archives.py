"""Hostile archives: members that climb out of the extraction directory, members over the size budget, a
decompression bomb, links, devices and duplicate paths."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from pathlib import Path

from benchsmith.records import Reason
from tests.hostile.cases import PKG_A, PKG_B, HostileCase, HygieneCase

def make_zip_slip(root: Path) -> list[HostileCase]:
    """A zip and a tarball whose members climb out with ``../`` (and an absolute path, and a link to follow)."""
    target = root / "slipped.py"
    zpath = root / "zipslip.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("proj/ok.py", "X = 1\n")
        zf.writestr("proj/../../slipped.py", "PWNED = 1\n")
    tpath = root / "tarslip.tar.gz"
    with tarfile.open(tpath, "w:gz") as tf:
        def add(name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = "") -> None:
            info = tarfile.TarInfo(name)
            info.type = kind
            info.linkname = link
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data) if data else None)

        add("proj/ok.py", b"X = 1\n")
        add("proj/escape", kind=tarfile.SYMTYPE, link=str(root))  # a link out, then a file written through it
        add("proj/escape/through_link.py", b"PWNED = 2\n")
        add(f"{root}/absolute.py", b"PWNED = 3\n")
        add("proj/../../slipped.py", b"PWNED = 4\n")
    markers = [target, root / "through_link.py", root / "absolute.py", root.parent / "slipped.py"]
    return [HostileCase("zipslip", str(zpath), {Reason.ARCHIVE_UNSAFE}, markers),
            HostileCase("tarslip", str(tpath), {Reason.ARCHIVE_UNSAFE}, markers)]


class _Zeros:
    """A file-like source of ``n`` zero bytes (big archive members without holding them in memory)."""

    def __init__(self, n: int) -> None:
        self.left = n

    def read(self, size: int = -1) -> bytes:
        size = self.left if size is None or size < 0 else min(size, self.left)
        self.left -= size
        return bytes(size)


def _tar_add(tf: tarfile.TarFile, name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE, link: str = "",
             size: int | None = None) -> None:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.size = len(data) if size is None else size
    info.mode = 0o644
    if kind in (tarfile.CHRTYPE, tarfile.BLKTYPE):
        info.devmajor, info.devminor = 1, 3
    src = io.BytesIO(data) if size is None else _Zeros(size)
    tf.addfile(info, src if info.size else None)


def _pkg_members(tf: tarfile.TarFile, top: str, which=("__init__.py", "a.py", "b.py")) -> None:
    texts = {"__init__.py": "", "a.py": PKG_A, "b.py": PKG_B.format(pkg="pkg")}
    for name in which:
        _tar_add(tf, f"{top}/pkg/{name}", texts[name].encode())


def make_tar_big_member(root: Path, size: int = 100 * 1024 * 1024) -> HygieneCase:
    """A member over the per-member budget in the middle of a .tar.gz: recorded, not counted towards the total,
    and every member after it still extracted."""
    path = root / "tar_big-1.0.tar.gz"
    with tarfile.open(path, "w:gz", compresslevel=1) as tf:
        _pkg_members(tf, "tar_big-1.0", ("__init__.py", "a.py"))
        _tar_add(tf, "tar_big-1.0/pkg/huge.py", size=size)
        _pkg_members(tf, "tar_big-1.0", ("b.py",))
    return HygieneCase("tar_big-1.0", str(path),
                       items={"tar_big-1.0/tar_big-1.0/pkg/huge.py": Reason.ARCHIVE_MEMBER_TOO_LARGE},
                       examples_from={"pkg/b.py": 2})


def make_tar_bz2_bomb(root: Path, size: int = 320 * 1024 * 1024) -> HygieneCase:
    """A few hundred bytes of .tar.bz2 holding a 320 MiB member: reaching what follows it means decompressing it
    all, past the skip budget, so extraction ends there with the reason; what came before is analysed."""
    path = root / "tar_bomb-1.0.tar.bz2"
    with tarfile.open(path, "w:bz2") as tf:
        _pkg_members(tf, "tar_bomb-1.0")
        _tar_add(tf, "tar_bomb-1.0/pkg/bomb.py", size=size)
        _tar_add(tf, "tar_bomb-1.0/pkg/late.py", b"LATE = 1\n")
    return HygieneCase("tar_bomb-1.0", str(path),
                       items={"tar_bomb-1.0/tar_bomb-1.0/pkg/bomb.py": Reason.ARCHIVE_MEMBER_TOO_LARGE,
                              "tar_bomb-1.0": Reason.ARCHIVE_BUDGET_EXCEEDED},
                       examples_from={"pkg/b.py": 2})


def make_tar_links_and_devices(root: Path) -> HygieneCase:
    """Symbolic and hard links, character and block devices, a FIFO and a duplicate path, all recorded."""
    path = root / "tar_special-1.0.tar.gz"
    top = "tar_special-1.0"
    with tarfile.open(path, "w:gz") as tf:
        _pkg_members(tf, top)
        _tar_add(tf, f"{top}/pkg/sym.py", kind=tarfile.SYMTYPE, link="a.py")
        _tar_add(tf, f"{top}/pkg/hard.py", kind=tarfile.LNKTYPE, link=f"{top}/pkg/a.py")
        _tar_add(tf, f"{top}/pkg/null.py", kind=tarfile.CHRTYPE)
        _tar_add(tf, f"{top}/pkg/disk.py", kind=tarfile.BLKTYPE)
        _tar_add(tf, f"{top}/pkg/pipe.py", kind=tarfile.FIFOTYPE)
        _tar_add(tf, f"{top}/pkg/a.py", b"PWNED = 1\n")  # a second a.py: the first one is kept
    items = {f"{top}/{top}/pkg/sym.py": Reason.ARCHIVE_LINK, f"{top}/{top}/pkg/hard.py": Reason.ARCHIVE_LINK,
             f"{top}/{top}/pkg/null.py": Reason.ARCHIVE_SPECIAL_MEMBER,
             f"{top}/{top}/pkg/disk.py": Reason.ARCHIVE_SPECIAL_MEMBER,
             f"{top}/{top}/pkg/pipe.py": Reason.ARCHIVE_SPECIAL_MEMBER,
             f"{top}/{top}/pkg/a.py": Reason.ARCHIVE_DUPLICATE_MEMBER}
    return HygieneCase(top, str(path), items=items, examples_from={"pkg/b.py": 2})


def make_zip_links_and_budget(root: Path, size: int = 80 * 1024 * 1024) -> HygieneCase:
    """A zip with a symlink entry, a duplicate name, a member that declares more than the member budget and a
    file where an earlier member made a directory: each recorded, the package still analysed."""
    path = root / "zip_special-1.0.zip"
    top = "zip_special-1.0"
    import warnings

    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the duplicate name is the point
        zf.writestr(f"{top}/pkg/__init__.py", "")
        zf.writestr(f"{top}/pkg/a.py", PKG_A)
        zf.writestr(f"{top}/pkg/b.py", PKG_B.format(pkg="pkg"))
        link = zipfile.ZipInfo(f"{top}/pkg/link.py")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")
        zf.writestr(f"{top}/pkg/a.py", "PWNED = 1\n")
        with zf.open(zipfile.ZipInfo(f"{top}/pkg/huge.py"), "w", force_zip64=True) as fh:
            block = bytes(1024 * 1024)
            for _ in range(size // len(block)):
                fh.write(block)
        zf.writestr(f"{top}/pkg/__init__.py/x.py", "X = 1\n")  # under a path that is a file
    items = {f"{top}/{top}/pkg/link.py": Reason.ARCHIVE_LINK, f"{top}/{top}/pkg/a.py": Reason.ARCHIVE_DUPLICATE_MEMBER,
             f"{top}/{top}/pkg/huge.py": Reason.ARCHIVE_MEMBER_TOO_LARGE,
             f"{top}/{top}/pkg/__init__.py/x.py": Reason.ARCHIVE_DUPLICATE_MEMBER}
    return HygieneCase(top, str(path), items=items, examples_from={"pkg/b.py": 2})
