"""(d) The command line: start-up of ``--help``, and a second ``kstp demo`` on an unchanged graph.

- ``kstp --help`` and every subcommand's ``--help``, each in a fresh interpreter (wall
  seconds, start-up included; the median of 3 per command). Target: <= 0.5 s each.
  Baseline, same run: ``kstp --help`` in an interpreter that first imports the libraries
  the CLI used to load at start-up (openai, matplotlib.pyplot, statsmodels,
  scipy.stats; then pandas, pyarrow, scipy.sparse, rich.progress and the graph store),
  i.e. what the lazy imports save.
- ``kstp demo`` twice on a fresh embedded graph: the first run does the work (the
  baseline), the second must find nothing to do. Its time is taken inside the process,
  after start-up (``cli.main`` only); the graph files are compared byte for byte.
  Target: <= 2 s, byte-identical graph, "nothing changed" printed.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

from benchmarks.common import REPO, banner, data_root, fmt_ratio, fmt_s, print_table, workdir

__all__ = ["main", "summary"]

HELP_TARGET_S = 0.5
NOOP_TARGET_S = 2.0
_EAGER = ("import openai, matplotlib.pyplot, statsmodels.stats.multitest, scipy.stats\n"
          "import pandas, pyarrow, scipy.sparse, rich.progress, kstp.graph.store, kstp.kst.spaces\n")
_RUN = ("import sys, time\n{pre}from kstp.cli.main import cli\nstart = time.perf_counter()\n"
        "try:\n    cli.main(sys.argv[1:], prog_name='kstp')\nexcept SystemExit as exc:\n    code = exc.code or 0\n"
        "print('BENCH', time.perf_counter() - start, file=sys.stderr)\nsys.exit(code)")


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))


def _kstp(args: list[str], pre: str = "") -> tuple[float, float, subprocess.CompletedProcess]:
    """Run kstp in a fresh interpreter: (wall seconds, seconds inside cli.main, the process)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _RUN.format(pre=pre), *args], capture_output=True, text=True,
                          env=_env(), cwd=REPO)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"kstp {' '.join(args)} failed: {done.stderr[-2000:]}")
    inside = next(float(line.split()[1]) for line in done.stderr.splitlines() if line.startswith("BENCH"))
    return wall, inside, done


def _commands() -> list[list[str]]:
    """Every command path of the CLI (groups and leaves), e.g. ["evaluate", "psr"]."""
    import click

    from kstp.cli.main import cli

    paths = []

    def walk(command, path, ctx):
        paths.append(path)
        for name in getattr(command, "commands", {}):
            sub = command.get_command(ctx, name)
            walk(sub, [*path, name], click.Context(sub, info_name=name, parent=ctx))

    walk(cli, [], click.Context(cli, info_name="kstp"))
    return paths


def _files(folder) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name.startswith("graph")}


def main(quick: bool = False) -> dict:
    banner(f"(d) CLI start-up and the demo's no-op re-run{' [quick]' if quick else ''}")
    commands = _commands()
    if quick:
        commands = commands[:4]
    helps = {" ".join(c) or "(top level)": statistics.median(_kstp([*c, "--help"])[0] for _ in range(3))
             for c in commands}
    eager = statistics.median(_kstp(["--help"], _EAGER)[0] for _ in range(3))
    slowest = max(helps, key=helps.get)
    problems = [f"kstp {name} --help: {fmt_s(s)} s" for name, s in helps.items() if s > HELP_TARGET_S]
    with workdir("cli") as tmp:
        args = ["--graph", f"ladybug:{tmp / 'graph'}", "demo", "--data", str(data_root()), "--out",
                str(tmp / "results")]
        first_wall, first_inside, _ = _kstp(args)
        before = _files(tmp)
        second_wall, second_inside, done = _kstp(args)
        identical = _files(tmp) == before
    said = "nothing changed" in done.stderr
    if not identical:
        problems.append("the second demo changed the graph files")
    if not said:
        problems.append("the second demo did not say 'nothing changed'")
    print_table(["step", "seconds", "baseline/this"], [
        ["kstp --help, eager imports (baseline)", fmt_s(eager), "1.00x"],
        ["kstp --help", fmt_s(helps["(top level)"]), fmt_ratio(eager / helps["(top level)"])],
        [f"slowest --help: kstp {slowest} --help", fmt_s(helps[slowest]), fmt_ratio(eager / helps[slowest])],
        ["kstp demo, first run (inside the process)", fmt_s(first_inside), "1.00x"],
        ["kstp demo, second run (inside the process)", fmt_s(second_inside), fmt_ratio(first_inside / second_inside)],
        ["kstp demo, second run (wall, start-up included)", fmt_s(second_wall), "-"],
    ])
    print(f"{len(helps)} commands' --help, median of 3 each, fresh interpreters; all <= {HELP_TARGET_S} s: "
          f"{'met' if max(helps.values()) <= HELP_TARGET_S else 'MISSED'}; second demo <= {NOOP_TARGET_S} s after "
          f"start-up: {'met' if second_inside <= NOOP_TARGET_S else 'MISSED'}; graph byte-identical: "
          f"{'yes' if identical else 'NO'}; said 'nothing changed': {'yes' if said else 'NO'}")
    for problem in problems:
        print("PROBLEM:", problem)
    return {"help_s": helps["(top level)"], "help_max_s": helps[slowest], "eager_s": eager,
            "noop_s": second_inside, "first_s": first_inside, "identical": identical, "said": said}


def summary(r: dict) -> str:
    """The one-line summary of :func:`main`'s result."""
    return (f"cli: kstp --help {fmt_s(r['help_s'])} s (slowest subcommand {fmt_s(r['help_max_s'])} s), eager / lazy "
            f"{fmt_ratio(r['eager_s'] / r['help_s'])}; second demo {fmt_s(r['noop_s'])} s after start-up, first / "
            f"second {fmt_ratio(r['first_s'] / r['noop_s'])}, byte-identical: {'yes' if r['identical'] else 'NO'}")


if __name__ == "__main__":
    main()
