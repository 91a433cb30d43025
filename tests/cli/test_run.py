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


def test_run_log_files_are_named_after_the_run_id_with_separators_as_underscores(tmp_path):
    """The README's example: a model name with '/' stays one file in the folder, not a sub-folder."""
    from kstp.cli.models import write_run_files

    path = write_run_files(tmp_path, "answers:Qwen/Qwen2.5-7B-Instruct:frcsub:3f2a9c1d0b7e", {"a": 1}, [{"b": 2}])
    assert path.name == "answers_Qwen_Qwen2.5-7B-Instruct_frcsub_3f2a9c1d0b7e.json"
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name, path.name.replace(".json", ".samples.jsonl")]
