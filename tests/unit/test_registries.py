"""Registry sources without the network: parsing, SPDX normalisation, the digest cache, the URL and response checks,
and the repository filters on a registry release.  Hostile answers are registry responses in their real shapes
with one field made hostile (the real registries are exercised in tests/integration/test_registries_real.py)."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import tarfile

import pytest

from benchsmith.archives import SourceError
from benchsmith.files import RepoSnapshot, SourceFile
from benchsmith.records import Checkout, Reason, RepoSpec
from benchsmith.registries import cache, npm, pypi
from benchsmith.registries.http import check_url
from benchsmith.registries.licenses import is_permissive, normalise, spdx_expression
from benchsmith.registries.metadata import RegistryKind, RegistryRelease, RegistrySpec
from benchsmith.repo_filters import check_repository
from benchsmith.sources import RepoFilterConfig, is_remote, materialise, repo_name, source_identity

MIT_TEXT = "Permission is hereby granted, free of charge, to any person obtaining a copy of this software"


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHSMITH_CACHE", str(tmp_path / "cache"))


def test_specs_parse_pin_and_subdir():
    s = RegistrySpec.parse("npm:@scope/pkg@1.2.3-rc.1#src/lib")
    assert (s.kind, s.name, s.version, s.subdir) == (RegistryKind.NPM, "@scope/pkg", "1.2.3-rc.1", "src/lib")
    assert s.text() == "npm:@scope/pkg@1.2.3-rc.1#src/lib" and s.repo_id() == "npm-scope__pkg-1.2.3-rc.1-src_lib"
    assert RegistrySpec.parse("npm:@scope/pkg").version is None
    p = RegistrySpec.parse("pypi:attrs==25.4.0")
    assert (p.name, p.version, p.subdir) == ("attrs", "25.4.0", None)
    d = RegistrySpec.parse("debian:thrift=0.17.0-2#lib/netstd/Thrift")
    assert (d.name, d.version, d.subdir) == ("thrift", "0.17.0-2", "lib/netstd/Thrift")
    assert RegistrySpec.parse("/home/me/repo") is None and RegistrySpec.parse("https://x/y.git") is None


@pytest.mark.parametrize("text", ["pypi:../../etc", "pypi:a b", "npm:pkg@--upload-pack=x", "pypi:x==1;rm",
                                  "npm:pkg#../../outside", "npm:pkg#/abs", "pypi:x#a/./b", "debian:-x",
                                  "npm:" + "a" * 300])
def test_malformed_specs_are_refused_before_any_request(text, monkeypatch):
    monkeypatch.setattr(pypi, "fetch_json", lambda *a, **k: pytest.fail("no request for a malformed source"))
    with pytest.raises(SourceError) as exc:
        RegistrySpec.parse(text)
    assert exc.value.reason is Reason.SOURCE_NOT_FOUND
    # the build records it as that source's reason, and never takes it for a local path
    assert is_remote(text)
    with pytest.raises(SourceError):
        materialise(RepoSpec.parse(text), __import__("pathlib").Path("/nonexistent"))


def test_repo_names_and_identity_of_unresolvable_sources():
    assert repo_name(RepoSpec.parse("pypi:attrs==25.4.0")) == "pypi-attrs-25.4.0"
    assert source_identity(RepoSpec.parse("pypi:a b")) is None


@pytest.mark.parametrize("declared,classifiers,expected", [
    ("MIT", None, "MIT"), ("mit or apache-2.0", None, "MIT OR Apache-2.0"), ("(MIT AND BSD-3-Clause)", None,
                                                                              "(MIT AND BSD-3-Clause)"),
    ("Apache License 2.0", None, "Apache-2.0"), ("The MIT License", None, "MIT"), ("BSD", None, None),
    (MIT_TEXT, None, None), ("MIT OR", None, None), ("(MIT", None, None), ("Foo-1.0", None, None),
    (None, ["License :: OSI Approved :: MIT License"], "MIT"),
    (None, ["License :: OSI Approved :: Apache Software License"], None),  # no version: not one licence
    (None, ["License :: OSI Approved :: MIT License", "License :: OSI Approved :: ISC License (ISCL)"], None),
])
def test_licences_normalise_to_spdx_only_without_doubt(declared, classifiers, expected):
    assert normalise(declared, classifiers) == expected


def test_permissive_judges_or_and_with():
    assert is_permissive("MIT OR GPL-3.0-only") is True
    assert is_permissive("MIT AND GPL-3.0-only") is False
    assert is_permissive("(MIT OR GPL-2.0-only) AND Apache-2.0") is True
    assert is_permissive("Apache-2.0 WITH LLVM-exception") is False
    assert is_permissive(None) is None
    assert spdx_expression("MIT <script>") is None


def test_digest_cache_refuses_mismatch_and_rechecks_on_read(tmp_path):
    data = b"artifact bytes"
    good = f"sha256:{hashlib.sha256(data).hexdigest()}"
    with pytest.raises(SourceError) as exc:
        cache.store_artifact(data + b"!", good, "p-1.tar.gz", "pypi:p==1")
    assert exc.value.reason is Reason.DIGEST_MISMATCH
    assert cache.cached_artifact(good, "p-1.tar.gz") is None  # nothing kept
    path = cache.store_artifact(data, good, "p-1.tar.gz", "pypi:p==1")
    assert path.name.endswith(".tar.gz") and cache.cached_artifact(good, "p-1.tar.gz") == path
    path.write_bytes(b"altered on disk")
    assert cache.cached_artifact(good, "p-1.tar.gz") is None and not path.exists()
    for bad in ("md5:abcd", "sha256:xyz", "sha256:" + "a" * 63, "sha256:../../etc/passwd"):
        with pytest.raises(SourceError):
            cache.artifact_path(bad, "x.tgz")
    sri = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    assert cache.sri_to_digest(sri) == f"sha512:{hashlib.sha512(data).hexdigest()}"
    assert cache.sri_to_digest("sha512-" + "A" * 88) is None and cache.sri_to_digest("sha1-abc") is None


@pytest.mark.parametrize("url", ["http://files.pythonhosted.org/x.tar.gz", "https://evil.example/x.tgz",
                                 "file:///etc/passwd", "https://user@registry.npmjs.org/x.tgz",
                                 "https://registry.npmjs.org:8443/x.tgz"])
def test_only_registry_hosts_are_requested(url):
    with pytest.raises(SourceError) as exc:
        check_url(url)
    assert exc.value.reason is Reason.REGISTRY_RESPONSE_INVALID


def _pypi_answer(**sdist):
    f = {"packagetype": "sdist", "filename": "p-1.0.tar.gz", "url": "https://files.pythonhosted.org/p-1.0.tar.gz",
         "digests": {"sha256": "a" * 64}, "upload_time_iso_8601": "2025-07-01T10:00:00.000000Z", **sdist}
    return {"info": {"name": "p", "version": "1.0", "license_expression": "MIT"},
            "releases": {"0.1": [{**f, "upload_time_iso_8601": "2019-01-01T00:00:00Z"}], "1.0": [f]}}


def test_pypi_answer_becomes_a_release(monkeypatch):
    monkeypatch.setattr(pypi, "fetch_json", lambda url, *a: _pypi_answer())
    rec = pypi.resolve(RegistrySpec(RegistryKind.PYPI, "p"))
    assert (rec.version, rec.released, rec.first_released, rec.license_spdx, rec.digest) == (
        "1.0", "2025-07-01T10:00:00Z", "2019-01-01T00:00:00Z", "MIT", "sha256:" + "a" * 64)
    # a mirror's relative URL is resolved against the API, then checked like any other
    monkeypatch.setattr(pypi, "fetch_json", lambda url, *a: _pypi_answer(url="../../packages/p-1.0.tar.gz"))
    assert pypi.resolve(RegistrySpec(RegistryKind.PYPI, "p")).artifact_url == "https://pypi.org/packages/p-1.0.tar.gz"


@pytest.mark.parametrize("field,value,reason", [
    ("url", "https://evil.example/p-1.0.tar.gz", Reason.REGISTRY_RESPONSE_INVALID),
    ("url", "//evil.example/p.tar.gz", Reason.REGISTRY_RESPONSE_INVALID),  # relative, but to another host
    ("digests", {"sha256": "not-hex"}, Reason.REGISTRY_RESPONSE_INVALID),
    ("filename", "../../p-1.0.tar.gz", Reason.REGISTRY_NO_SOURCE_ARTIFACT),
    ("packagetype", "bdist_wheel", Reason.REGISTRY_NO_SOURCE_ARTIFACT),
])
def test_hostile_pypi_answers_are_refused_with_their_reason(monkeypatch, field, value, reason):
    monkeypatch.setattr(pypi, "fetch_json", lambda url, *a: _pypi_answer(**{field: value}))
    with pytest.raises(SourceError) as exc:
        pypi.resolve(RegistrySpec(RegistryKind.PYPI, "p"))
    assert exc.value.reason is reason


def test_hostile_npm_answers_are_refused(monkeypatch):
    base = {"name": "pkg", "dist-tags": {"latest": "1.0.0"}, "time": {"1.0.0": "2025-08-01T00:00:00.000Z"},
            "versions": {"1.0.0": {"license": "ISC", "dist": {
                "tarball": "https://registry.npmjs.org/pkg/-/pkg-1.0.0.tgz", "shasum": "b" * 40}}}}
    monkeypatch.setattr(npm, "fetch_json", lambda url, *a: base)
    rec = npm.resolve(RegistrySpec(RegistryKind.NPM, "pkg"))
    assert (rec.digest, rec.license_spdx, rec.released) == ("sha1:" + "b" * 40, "ISC", "2025-08-01T00:00:00Z")
    hostile = [{**base, "name": "other"}, {**base, "dist-tags": {"latest": "../1"}},
               {**base, "versions": {"1.0.0": {"dist": {"tarball": "https://evil.example/pkg.tgz",
                                                         "shasum": "b" * 40}}}},
               {**base, "versions": {"1.0.0": {"dist": {"tarball": "https://registry.npmjs.org/pkg/-/pkg.tgz"}}}}]
    for answer in hostile:
        monkeypatch.setattr(npm, "fetch_json", lambda url, *a, answer=answer: answer)
        with pytest.raises(SourceError) as exc:
            npm.resolve(RegistrySpec(RegistryKind.NPM, "pkg"))
        assert exc.value.reason is Reason.REGISTRY_RESPONSE_INVALID


def _release(**kw) -> RegistryRelease:
    base = dict(registry="pypi", name="p", version="1.0", released="2025-07-01T10:00:00Z",
                first_released="2019-01-01T00:00:00Z", license_declared="MIT", license_spdx="MIT", homepage=None,
                repository=None, artifact_url="https://files.pythonhosted.org/p-1.0.tar.gz",
                artifact_name="p-1.0.tar.gz", digest="sha256:" + "a" * 64)
    return RegistryRelease(**{**base, **kw})


def _checkout(tmp_path, rec):
    return Checkout(RepoSpec("pypi:p==1.0"), "pypi-p-1.0", str(tmp_path), kind="registry",
                    created=rec.first_released, license=rec.license_spdx, release=rec)


def test_filters_read_the_registry_dates_and_licence(tmp_path):
    snap = RepoSnapshot("r", root=None, files=[SourceFile("a.py", "x")])
    rec = _release()
    co = _checkout(tmp_path, rec)
    after = RepoFilterConfig(released_after=dt.date(2025, 7, 1))
    assert check_repository(co, snap, after) is None  # the cut-off day itself is kept
    verdict = check_repository(co, snap, RepoFilterConfig(released_after=dt.date(2025, 7, 2)))
    assert verdict[0] is Reason.RELEASED_BEFORE and "2025-07-01" in verdict[1]
    verdict = check_repository(co, snap, RepoFilterConfig(created_after=dt.date(2020, 1, 1)))
    assert verdict[0] is Reason.CREATED_BEFORE and "first release 2019-01-01" in verdict[1]
    assert check_repository(co, snap, RepoFilterConfig(permissive_license=True)) is None  # no licence file needed
    gpl = _checkout(tmp_path, _release(license_spdx="GPL-3.0-only"))
    (tmp_path / "LICENSE").write_text(MIT_TEXT)  # the registry's declaration wins over the file
    assert check_repository(gpl, snap, RepoFilterConfig(permissive_license=True))[0] is Reason.LICENSE_NOT_PERMISSIVE
    unknown = _checkout(tmp_path, _release(license_spdx=None, license_declared="see LICENSE"))
    assert check_repository(unknown, snap, RepoFilterConfig(permissive_license=True)) is None  # the file decides
    undated = _checkout(tmp_path, _release(released=None))
    assert check_repository(undated, snap, after)[0] is Reason.RELEASE_DATE_UNKNOWN
    plain = Checkout(RepoSpec(str(tmp_path)), "r", str(tmp_path))
    assert check_repository(plain, snap, after)[0] is Reason.RELEASE_DATE_UNKNOWN


def test_a_cached_release_builds_offline_and_a_tampered_artifact_is_refused(tmp_path, monkeypatch):
    """A pinned release resolved once needs no request again; an artifact whose bytes differ from the digest is
    refused with artifact_digest_mismatch (served here by a patched download, as a compromised mirror would)."""
    from benchsmith import registries
    from benchsmith.registries import http

    src = tmp_path / "p-1.0"
    (src / "p").mkdir(parents=True)
    (src / "p" / "__init__.py").write_text("X = 1\n")
    tgz = tmp_path / "p-1.0.tar.gz"
    with tarfile.open(tgz, "w:gz") as tf:
        tf.add(src, arcname="p-1.0")
    data = tgz.read_bytes()
    rec = _release(digest=f"sha256:{hashlib.sha256(data).hexdigest()}")
    monkeypatch.setattr(pypi, "resolve", lambda spec: rec)
    served = {"bytes": data + b"tampered", "requests": 0}

    def fake_fetch(url, limit):
        served["requests"] += 1
        return served["bytes"]

    monkeypatch.setattr(registries, "fetch_bytes", fake_fetch)
    with pytest.raises(SourceError) as exc:
        materialise(RepoSpec("pypi:p==1.0"), tmp_path / "w1")
    assert exc.value.reason is Reason.DIGEST_MISMATCH
    served["bytes"] = data
    co = materialise(RepoSpec("pypi:p==1.0"), tmp_path / "w2")
    assert co.kind == "registry" and co.release == rec and (tmp_path / "w2" / "extract" / "p-1.0" / "p").is_dir()
    assert co.created == rec.first_released and co.license == "MIT"
    # the rerun: release from the cache, artifact from the cache, identity keyed by the digest
    monkeypatch.setattr(pypi, "resolve", lambda spec: pytest.fail("no registry request on a rerun"))
    monkeypatch.setattr(http, "fetch_bytes", lambda *a: pytest.fail("no download on a rerun"))
    before = served["requests"]
    co2 = materialise(RepoSpec("pypi:p==1.0#p"), tmp_path / "w3")
    assert served["requests"] == before and co2.path.endswith("/p")
    assert source_identity(RepoSpec("pypi:p==1.0")) == f"registry:pypi:p==1.0:{rec.digest}"
    with pytest.raises(SourceError) as exc:
        materialise(RepoSpec("pypi:p==1.0#missing"), tmp_path / "w4")
    assert exc.value.reason is Reason.SOURCE_NOT_FOUND
