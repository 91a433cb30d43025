"""``make check``'s fast tier (tests/conftest.py ``--fast``): a test tests/durations.json times over a second
is left out, one it does not list runs, and each parity test keeps a case (issue 44: one parity case per
query); and the order ``make test`` hands tests to its workers in: the Neo4j server's first (one worker runs
them all), then the rest, each part file by file, the longest first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ("tests/parity", "tests/kst/test_blim_structures.py", "tests/cli/test_fit.py")


def _fast(durations: Path | None = None, fast: bool = True) -> list[str]:
    """The tests ``--fast`` collects from FILES (every test of them where not ``fast``), in collection order."""
    env = {**os.environ, **({"KSTP_TEST_DURATIONS": str(durations)} if durations else {})}
    done = subprocess.run([sys.executable, "-m", "pytest", *(["--fast"] if fast else []), "--collect-only", "-q",
                           "-p", "no:xdist", "-p", "no:cacheprovider", *FILES], cwd=ROOT, capture_output=True,
                          text=True, env=env, check=True)
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_the_fast_tier_leaves_out_the_tests_timed_over_a_second_but_keeps_a_case_of_each_parity_test(tmp_path):
    durations = json.loads((ROOT / "tests" / "durations.json").read_text())
    (tmp_path / "none.json").write_text("{}")
    untimed, fast = _fast(tmp_path / "none.json"), set(_fast())
    slow = {t for t in untimed if durations.get(t, 0) > 1.0 and "/parity/" not in t}
    quick = {t for t in untimed if durations.get(t, 0) <= 1.0}
    assert len(slow) >= 5 and not slow & fast
    assert quick <= fast <= set(untimed)
    # Were every test timed at 5 s, the tier would hold the first case of each parity test and nothing else.
    (tmp_path / "all_slow.json").write_text(json.dumps(dict.fromkeys(untimed, 5.0)))
    only = set(_fast(tmp_path / "all_slow.json"))
    firsts = {t.split("[")[0]: t for t in reversed(untimed) if "/parity/" in t}
    assert only == set(firsts.values()) and len(only) >= 15


def test_the_neo4j_tests_then_the_others_come_longest_file_first_each_with_its_tests_in_their_order(tmp_path):
    (tmp_path / "none.json").write_text("{}")
    plain = _fast(tmp_path / "none.json", fast=False)  # no times: the files as collected
    server = [t for t in plain if "[neo4j" in t]  # these files' tests of the Neo4j server: their engine's case
    others = plain[len(server):]
    assert len(server) >= 30 and plain[:len(server)] == [t for t in plain if t in server]
    assert [t.split("::")[0] for t in (server[0], server[-1])] == ["tests/parity/test_parity.py",
                                                                   "tests/cli/test_fit.py"]
    files = list(dict.fromkeys(t.split("::")[0] for t in others))
    assert files == ["tests/parity/test_parity.py", "tests/kst/test_blim_structures.py", "tests/cli/test_fit.py"]
    fit = [t for t in plain if t.startswith("tests/cli/test_fit.py")]
    blim = [t for t in plain if t.startswith("tests/kst/test_blim_structures.py")]
    # test_fit.py 3 s in two tests, test_blim_structures.py 2 s in one, the parity tests none
    (tmp_path / "timed.json").write_text(json.dumps({fit[-1]: 2.0, fit[0]: 1.0, blim[1]: 2.0}))
    ordered = _fast(tmp_path / "timed.json", fast=False)
    expected = []
    for part in (server, others):
        expected += [t for t in part if t in fit] + [t for t in part if t in blim]
        expected += [t for t in part if t not in fit and t not in blim]
    assert ordered == expected
