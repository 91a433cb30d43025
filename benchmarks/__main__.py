"""``python -m benchmarks [ingest|eq1|psr ...] [--quick]``: run the benchmarks, print tables and ratios.

No argument runs all four in order. ``--quick`` shrinks every size for a smoke run (its
figures are not the ones to report).
"""

from __future__ import annotations

import argparse
import importlib
import platform
import time

from benchmarks.common import data_root, fmt_ratio, fmt_s

BENCHMARKS = {"ingest": "benchmarks.ingest", "eq1": "benchmarks.eq1", "psr": "benchmarks.psr",
              "inference": "benchmarks.inference"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"benchmarks to run ({', '.join(BENCHMARKS)}); default all")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
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
        results[name] = importlib.import_module(BENCHMARKS[name]).main(quick=args.quick)
    print("\n== summary (ratios: baseline over kstp, same run) ==")
    if "ingest" in results:
        r = results["ingest"]
        print(f"ingest: {r['edges']:,} edges, write_answers {r['edges_per_s']:,.0f} edges/s; per-edge throughput "
              f"{fmt_ratio(r['ratio_vs_create'])} UNWIND/CREATE, {fmt_ratio(r['ratio_vs_merge'])} UNWIND/MERGE")
    if "eq1" in results:
        r = results["eq1"]
        print(f"eq1: {r['pairs']:,} pairs, all agree: {'yes' if r['agree'] else 'NO'}; literal double loop / kstp "
              f"(queries + sparse) {fmt_ratio(r['ratio_vs_kstp'])}; / pure Cypher {fmt_ratio(r['ratio_vs_cypher'])}")
    if "psr" in results:
        r = results["psr"]
        print(f"psr: {r['subsample']:,}-learner subsample, equal: {'yes' if r['equal'] else 'NO'}; dict loop / kstp "
              f"{fmt_ratio(r['ratio'])}; kstp full scale {fmt_s(r['full_s'])} s")
    if "inference" in results:
        r = results["inference"]
        vllm_ratio = fmt_ratio(r["vllm_ratio"]) if r["vllm_ratio"] else "skipped"
        print(f"inference: concurrency 8 / sequential {fmt_ratio(r['concurrency_ratio'])}; vLLM batched / per "
              f"prompt {vllm_ratio}; store + grade {r['store_grade_ms']:.2f} ms per completion "
              f"({r['share_of_generation']:.1%} of generation){'' if r['correct_ok'] else '; PROBLEM: grades'}")
    print(f"total {fmt_s(time.perf_counter() - start)} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
