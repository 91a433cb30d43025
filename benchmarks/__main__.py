"""``python -m benchmarks [ingest|eq1|psr ...] [--quick] [--scale F] [--out DIR]``: run the benchmarks, print tables
and ratios.

No argument runs them all in order. ``--quick`` shrinks every size for a smoke run (its
figures are not the ones to report). ``--scale F`` runs the benchmarks that take it
(``neo4j``) at F times the XES3G5M size; ``--out DIR`` gives the benchmarks that write
tables and figures (``assess``) a folder for them.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import platform
import time

from benchmarks.common import data_root, fmt_s

BENCHMARKS = {"ingest": "benchmarks.ingest", "eq1": "benchmarks.eq1", "psr": "benchmarks.psr",
              "inference": "benchmarks.inference", "spaces": "benchmarks.spaces", "cli": "benchmarks.cli",
              "neo4j": "benchmarks.neo4j", "blim": "benchmarks.blim",
              "explore": "benchmarks.explore", "gpu": "benchmarks.gpu", "grading": "benchmarks.grading",
              "assess": "benchmarks.assess", "campaign": "benchmarks.campaign"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"benchmarks to run ({', '.join(BENCHMARKS)}); default all")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--scale", type=float, help="fraction of the XES3G5M size (benchmarks that take it: neo4j)")
    parser.add_argument("--out", help="folder for tables and figures (benchmarks that write them: assess)")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark {unknown[0]!r}; choose from {', '.join(BENCHMARKS)}")
    names = args.names or list(BENCHMARKS)
    import ladybug

    print(f"kstp benchmarks: {', '.join(names)}{' (quick)' if args.quick else ''}; data {data_root()}; "
          f"Python {platform.python_version()}, ladybug {getattr(ladybug, '__version__', '?')}, "
          f"{platform.machine()}", flush=True)
    results, start = {}, time.perf_counter()
    for name in names:
        run = importlib.import_module(BENCHMARKS[name]).main
        scaled = {"scale": args.scale} if "scale" in inspect.signature(run).parameters else {}
        if args.out and "out" in inspect.signature(run).parameters:
            scaled["out"] = args.out
        results[name] = run(quick=args.quick, **scaled)
    print("\n== summary (ratios: baseline over kstp, same run) ==")
    for name, result in results.items():
        print(importlib.import_module(BENCHMARKS[name]).summary(result))
    print(f"total {fmt_s(time.perf_counter() - start)} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
