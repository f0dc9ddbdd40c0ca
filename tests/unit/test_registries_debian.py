"""Debian source packages without the network: Sources stanzas (in the index's real shape), the changelog's dates,
debian/copyright's licence, and the build-dependency selection of ``collect --from debian``."""

from __future__ import annotations

import hashlib
import tarfile

import pytest

from benchsmith.archives import SourceError
from benchsmith.records import Reason
from benchsmith.registries import cache, debian

ORIG_SHA, DEB_SHA = "f5888bcd3b8de40c2c2ab86896867ad9b18510deb412cba3e5da76fb4c604c29", "fe" * 32
STANZA = f"""Package: thrift
Binary: libthrift-java, python3-thrift
Version: 0.17.0-2
Build-Depends: debhelper-compat (= 13), dh-python, default-jdk | openjdk-17-jdk, golang-go
Format: 3.0 (quilt)
Checksums-Sha256:
 dace31a37d82b119be64ddabe0f84363825fdde61c9345b8896f03c676a05150 2887 thrift_0.17.0-2.dsc
 {ORIG_SHA} 3049651 thrift_0.17.0.orig.tar.gz
 {DEB_SHA} 14696 thrift_0.17.0-2.debian.tar.xz
Homepage: https://thrift.apache.org/
Directory: pool/main/t/thrift

Package: other
Version: 1.0-1
Build-Depends: debhelper-compat (= 13), cmake
Checksums-Sha256:
 {"ab" * 32} 10 other_1.0.orig.tar.gz
Directory: pool/main/o/other
"""

CHANGELOG = """thrift (0.17.0-2) unstable; urgency=medium

  * Fix.

 -- Laszlo Boszormenyi (GCS) <gcs@debian.org>  Wed, 28 Sep 2022 19:05:02 +0200

thrift (0.9.1-1) unstable; urgency=low

  * Initial release.

 -- Someone <s@example.org>  Sat, 21 Mar 2015 17:45:29 +0000
"""
COPYRIGHT = """Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/

Files: debian/*
License: GPL-2+

Files: *
Copyright: The Apache Software Foundation
License: Apache-2.0
"""


@pytest.fixture
def index(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHSMITH_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "Sources"
    path.write_text(STANZA)
    monkeypatch.setattr(debian, "sources_index", lambda: path)
    return path


def _debian_tarball(tmp_path, changelog=CHANGELOG, copyright_text=COPYRIGHT) -> tuple[bytes, str]:
    d = tmp_path / "deb" / "debian"
    d.mkdir(parents=True)
    (d / "changelog").write_text(changelog)
    (d / "copyright").write_text(copyright_text)
    out = tmp_path / "d.tar.gz"
    with tarfile.open(out, "w:gz") as tf:
        tf.add(d, arcname="debian")
    data = out.read_bytes()
    return data, hashlib.sha256(data).hexdigest()


def test_stanzas_parse_and_build_dependencies_select(index):
    paras = list(debian.paragraphs(index))
    assert [p["Package"] for p in paras] == ["thrift", "other"]
    assert "thrift_0.17.0.orig.tar.gz" in debian._files(paras[0])
    assert [p["Package"] for p in debian.candidates("java")] == ["thrift"]  # default-jdk, an alternative too
    assert [p["Package"] for p in debian.candidates("csharp")] == []
    assert [p["Package"] for p in debian.candidates("java", {"other"})] == ["other"]


def test_release_reads_dates_and_licence_from_the_checked_debian_tarball(index, tmp_path, monkeypatch):
    data, sha = _debian_tarball(tmp_path)
    text = index.read_text().replace(f"{DEB_SHA} 14696 thrift_0.17.0-2.debian.tar.xz",
                                     f"{sha} {len(data)} thrift_0.17.0-2.debian.tar.gz")
    index.write_text(text)
    monkeypatch.setattr(debian, "fetch_bytes", lambda url, limit: data)
    rec = debian.release_of(next(debian.paragraphs(index)))
    assert (rec.version, rec.released, rec.first_released) == ("0.17.0-2", "2022-09-28T17:05:02Z",
                                                                "2015-03-21T17:45:29Z")
    assert (rec.license_declared, rec.license_spdx) == ("Apache-2.0", "Apache-2.0")
    assert rec.artifact_name == "thrift_0.17.0.orig.tar.gz" and rec.digest == f"sha256:{ORIG_SHA}"
    assert rec.artifact_url == "http://deb.debian.org/debian/pool/main/t/thrift/thrift_0.17.0.orig.tar.gz"
    # the tarball's bytes are checked too: other bytes under the same name are refused
    monkeypatch.setattr(debian, "fetch_bytes", lambda url, limit: data + b"x")
    for f in (cache.cache_root() / "artifacts").rglob("*"):
        if f.is_file():
            f.unlink()
    with pytest.raises(SourceError) as exc:
        debian.release_of(next(debian.paragraphs(index)))
    assert exc.value.reason is Reason.DIGEST_MISMATCH


def test_a_mirror_without_the_debian_tarball_leaves_dates_unknown(index, monkeypatch):
    def missing(url, limit):
        raise SourceError(Reason.SOURCE_NOT_FOUND, f"{url}: HTTP 404")

    monkeypatch.setattr(debian, "fetch_bytes", missing)
    rec = debian.release_of(next(debian.paragraphs(index)))
    assert (rec.released, rec.first_released, rec.license_spdx) == (None, None, None)


@pytest.mark.parametrize("field,value", [("Directory", "../../etc"), ("Directory", "pool/main/t/../../x"),
                                         ("Package", "Thrift;rm"), ("Version", "../1")])
def test_malformed_stanzas_are_refused(index, field, value):
    para = dict(next(debian.paragraphs(index)), **{field: value})
    with pytest.raises(SourceError) as exc:
        debian.release_of(para)
    assert exc.value.reason is Reason.REGISTRY_RESPONSE_INVALID


def test_file_names_in_the_index_are_checked(index):
    para = next(debian.paragraphs(index))
    para["Checksums-Sha256"] = f"{ORIG_SHA} 10 ../../thrift_0.17.0.orig.tar.gz"
    with pytest.raises(SourceError) as exc:
        debian.release_of(para)
    assert exc.value.reason is Reason.REGISTRY_NO_SOURCE_ARTIFACT


def test_changelog_and_copyright_parsing():
    assert debian._changelog_dates("no trailer") == (None, None)
    assert debian._copyright_licence("Files: *\nLicense: BSD-3-clause\n full text\n") == "BSD-3-clause"
    assert debian._copyright_licence("Files: src/*\nLicense: MIT\n") is None
