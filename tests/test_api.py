"""The public Python API (``kstp``'s top-level namespace) and the README's Python session."""

from __future__ import annotations

import doctest
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import kstp

README = Path(__file__).resolve().parent.parent / "README.md"


def test_api_every_public_name_resolves_to_its_documented_object():
    assert len(kstp.__all__) == len(set(kstp.__all__)) > 60
    for name in kstp.__all__:
        value = getattr(kstp, name)
        assert value is not None and (name == "__version__" or value.__doc__), name
    assert kstp.evaluate_psr.__name__ == "evaluate_dataset" and kstp.evaluate_psr.__module__ == "kstp.evaluators.psr"
    assert kstp.KnowledgeSpace.__module__ == "kstp.kst.spaces"
    assert sorted(dir(kstp)) == sorted(kstp.__all__)


def test_api_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="module 'kstp' has no attribute 'evaluate_psrr'"):
        kstp.evaluate_psrr  # noqa: B018


def test_api_import_loads_nothing_heavy():
    heavy = ("pandas", "numpy", "neo4j", "ladybug", "matplotlib", "scipy", "click")
    probe = f"import kstp, sys; print([m for m in {heavy!r} if m in sys.modules])"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout == "[]\n"


def _readme_session() -> str:
    section = README.read_text().split("## Python API", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.mark.slow
def test_api_readme_session_runs_on_the_demo_graph(data_root, tmp_path, monkeypatch):
    from kstp.cli.main import cli

    data = data_root.resolve()  # make test sets KSTP_DATA=../shared/data, relative to the checkout
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["--graph", "ladybug:.kstp/graph", "demo", "--data", str(data),
                                      "--out", "results"])
    assert result.exit_code == 0, result.output
    test = doctest.DocTestParser().get_doctest(_readme_session(), {}, "README Python API", str(README), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=print)
    assert (runner.failures, runner.tries) == (0, len(test.examples)) and runner.tries >= 8


def test_api_unknown_name_suggests_close_ones():
    with pytest.raises(AttributeError, match="did you mean: evaluate_psr"):
        kstp.evaluate_pst  # noqa: B018


def test_api_open_store_takes_a_path_object(tmp_path):
    with kstp.open_store(tmp_path / "graph") as graph:
        assert graph.engine == "ladybug"
        assert graph.frame("frameworks").empty
