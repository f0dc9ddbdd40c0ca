from __future__ import annotations

import datetime as dt

from benchsmith.files import RepoSnapshot, SourceFile
from benchsmith.records import Checkout, Reason, RepoSpec
from benchsmith.repo_filters import License, check_repository, classify_license, detect_license
from benchsmith.sources import RepoFilterConfig

MIT = "Permission is hereby granted, free of charge, to any person obtaining a copy of this software"
BSD3 = ("Redistribution and use in source and binary forms ... 2. Redistributions in binary form must reproduce the "
        "above copyright notice ... 3. Neither the name of the copyright holder nor the names of its contributors")
GPL = "GNU GENERAL PUBLIC LICENSE Version 3, 29 June 2007"


def test_classify():
    assert classify_license(MIT) is License.MIT
    assert classify_license(BSD3) is License.BSD_3
    assert classify_license(BSD3.replace("3. Neither the name of the copyright holder nor", "")) is License.BSD_2
    assert classify_license("Apache License\n  Version 2.0, January 2004") is License.APACHE_2
    assert classify_license(GPL) is License.GPL
    # The project's own licence comes first in files that bundle third-party licences.
    assert classify_license(MIT + "\n\nThird party: " + GPL) is License.MIT
    assert classify_license("all rights reserved") is License.UNKNOWN


def _snap(n: int, size: int = 10) -> RepoSnapshot:
    return RepoSnapshot("r", root=None, files=[SourceFile(f"f{i}.py", "x" * size) for i in range(n)])


def test_filters(tmp_path):
    co = Checkout(RepoSpec(str(tmp_path)), "r", str(tmp_path), created="2020-01-02T00:00:00+00:00")
    assert check_repository(co, _snap(3), RepoFilterConfig(permissive_license=True))[0] is Reason.LICENSE_MISSING
    (tmp_path / "COPYING").write_text(GPL)
    assert check_repository(co, _snap(3), RepoFilterConfig(permissive_license=True))[0] is Reason.LICENSE_NOT_PERMISSIVE
    (tmp_path / "COPYING").unlink()
    (tmp_path / "LICENSE.txt").write_text(MIT)
    assert detect_license(tmp_path) is License.MIT
    assert check_repository(co, _snap(3), RepoFilterConfig(permissive_license=True)) is None
    assert check_repository(co, _snap(3), RepoFilterConfig(created_after=dt.date(2021, 1, 1)))[0] is Reason.CREATED_BEFORE
    assert check_repository(co, _snap(3), RepoFilterConfig(created_after=dt.date(2019, 1, 1))) is None
    assert check_repository(co, _snap(3), RepoFilterConfig(min_files=10))[0] is Reason.TOO_FEW_FILES
    assert check_repository(co, _snap(60), RepoFilterConfig(max_files=50))[0] is Reason.TOO_MANY_FILES
    assert check_repository(co, _snap(3, 600), RepoFilterConfig(max_bytes=1000))[0] is Reason.REPO_TOO_LARGE
    co.created = None
    assert check_repository(co, _snap(3), RepoFilterConfig(created_after=dt.date(2019, 1, 1)))[0] is Reason.CREATED_DATE_UNKNOWN


def test_license_symlink_not_followed(tmp_path):
    (tmp_path / "LICENSE").symlink_to("/etc/passwd")
    assert detect_license(tmp_path) is None
