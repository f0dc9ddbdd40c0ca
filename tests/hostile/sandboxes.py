"""The sandboxes the hostile-program tests share (pytest fixtures, a plugin of ``tests/conftest.py``): ``sandbox``
for short runs, ``strict`` for the resource and escape checks that need a little more time and output."""

from __future__ import annotations

import pytest

from benchsmith.evaluate.sandbox import Sandbox
from tests.timing import scaled


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(timeout=scaled(2.0), memory_mb=256, max_processes=32, output_cap=16 * 1024, workers=4)


@pytest.fixture(scope="module")
def strict() -> Sandbox:
    with Sandbox(timeout=scaled(5.0), memory_mb=256, max_processes=32, output_cap=64 * 1024, workers=2) as sb:
        yield sb
