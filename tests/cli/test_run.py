"""The ``kstp`` executable's entry point: a Ctrl-C while the commands load."""

import importlib.abc
import subprocess
import sys

import pytest

from kstp.cli import run


class _CtrlCOnImport(importlib.abc.MetaPathFinder):
    """Raise KeyboardInterrupt when ``kstp.cli.main`` is imported (a Ctrl-C at that moment)."""

    def find_spec(self, name, path, target=None):
        if name == "kstp.cli.main":
            raise KeyboardInterrupt
        return None


def test_run_ctrl_c_while_importing_exits_130_without_traceback(monkeypatch, capsys):
    monkeypatch.delitem(sys.modules, "kstp.cli.main", raising=False)
    monkeypatch.setattr(sys, "meta_path", [_CtrlCOnImport(), *sys.meta_path])
    with pytest.raises(SystemExit) as exit_info:
        run()
    assert exit_info.value.code == 130
    assert capsys.readouterr().err == "Interrupted before the command started; nothing was written.\n"


def test_run_runs_the_commands():
    done = subprocess.run([sys.executable, "-c", "import sys; sys.argv = ['kstp', '--version']; "
                           "from kstp.cli import run; run()"], capture_output=True, text=True, check=False)
    assert (done.returncode, done.stdout) == (0, "kstp, version 0.1.0\n")
