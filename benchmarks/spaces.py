"""Knowledge spaces of a prerequisite relation: kstp against the two KST packages on PyPI.

The same inputs go to all three: prerequisite chains, antichains (no prerequisites), random
DAGs (seeded) and one random digraph with cycles, of 10 to 40 items. Each tool builds the
quasi-ordinal knowledge space (the down-sets of the surmise relation) and lists its states;
the families are checked EQUAL as sets of frozensets of the same item names.

- kstp: ``KnowledgeSpace.build(items, pairs).states(limit=None)``;
- kstpy 1.0.0: ``constr(sr2basis(sr))`` with ``sr`` the reflexive-transitive closure of the
  pairs (kstpy takes a surmise relation, not prerequisite pairs; the closure, by networkx,
  is timed with it);
- knowledgespaces 0.1.0: ``space_from_prerequisites(items, pairs).states``. It filters the
  power set, so it refuses 25 items or more (``DomainTooLargeError``, its own limit).

kstpy's ``constr`` does about (items x states) set unions, so it is skipped where that
product passes :data:`KSTPY_BUDGET` (over a minute). Antichains of n items have 2^n states,
so they stop at 20 items. A third table shows kstp alone on spaces of 10^6 states or more.

The second table (issue 14, item 5) times enumeration *with* the inner and outer fringe of
every state, each tool with its own fringe functions, all under the standard definition
(Doignon & Falmagne 1999, Def. 4.1.6), and checks the three families of (state, inner,
outer) EQUAL:

- kstp: ``KnowledgeSpace.build(items, pairs).fringes(limit=None)``: bit masks over the item
  classes (a state's outer fringe: the classes outside it whose prerequisites are all in
  it; inner: those in it that no class in it needs), vectorised over all states; the
  "kstp sets" column adds turning every mask into a frozenset of items;
- kstpy: ``fringe(state, structure)`` for every state of ``constr(sr2basis(sr))`` (each
  call scans the whole structure, so it is run where states^2 <= :data:`KSTPY_FRINGE_BUDGET`);
- knowledgespaces: ``inner_fringe(state)`` and ``outer_fringe(state)`` of
  ``space_from_prerequisites(items, pairs)`` for every state.

The target: at least 10^6 states per second with fringes on an antichain of 20 or more
items (kstp's figure, masks), and at least 100x both packages where they run.
The two packages are benchmark-only (``make bench`` installs them); kstp does not use them.

The third table (issue 34) times the analyses of any structure (:mod:`kstp.kst.analysis`:
base, surmise relation, fringes of every state, learning paths, forward gradedness) and
BLIM simulation on pks's example structures and on generated spaces and closure spaces,
against kstpy (``basis``, ``surmiserelation``, ``fringe`` per state, ``learningpaths``,
``simulation``) and, where ``Rscript`` loads them, pks (``getKFringe``,
``is.forward.graded``) and kstMatrix (``kmbasis``, in C, and ``kmsurmiserelation``),
through ``benchmarks/structures_r.R``. Every answer is checked EQUAL across tools (the
simulations, being random, by their shape). The target: every kstp analysis within 2x of
the fastest peer (ratio peer/kstp >= 0.5).
"""

from __future__ import annotations

import statistics
import time
import warnings
from collections.abc import Callable

import networkx as nx
import numpy as np

from benchmarks.common import banner, fmt_int, fmt_ratio, fmt_s, print_table, r_package_version

__all__ = ["main", "summary", "KSTPY_BUDGET", "KSTPY_FRINGE_BUDGET"]

#: kstpy is run where items x states (kstp's count) is at most this (up to about 30 s of set unions).
KSTPY_BUDGET = 20_000_000
#: kstpy's fringes are timed where states^2 is at most this (each call scans every state: up to ~20 s).
KSTPY_FRINGE_BUDGET = 30_000_000
#: Inputs of the fringe table, with the kstp-alone antichain of the states/s target.
FRINGE_SIZES = (10, 15, 20)
FRINGE_ANTICHAIN = 22
SIZES = (10, 15, 20, 25, 30, 34, 40)
QUICK_SIZES = (10, 15)
ANTICHAIN_MAX = 20
DAG_DEGREE = 4.0  # random DAG: each ordered pair (in a random order) is an edge with probability 4 / items
DAG_SEED = 1


# ---- inputs --------------------------------------------------------------------------------
def _names(n: int) -> list[str]:
    return [f"q{i:02d}" for i in range(n)]


def chain(n: int) -> tuple[list[str], list[tuple[str, str]]]:
    items = _names(n)
    return items, list(zip(items, items[1:], strict=False))


def antichain(n: int) -> tuple[list[str], list[tuple[str, str]]]:
    return _names(n), []


def random_dag(n: int, p: float, seed: int) -> tuple[list[str], list[tuple[str, str]]]:
    """Items in a random order; each pair (earlier, later) is a prerequisite with probability p."""
    rng = np.random.default_rng(seed)
    items = _names(n)
    order = rng.permutation(n)
    return items, [(items[order[i]], items[order[j]]) for i in range(n) for j in range(i + 1, n) if rng.random() < p]


def random_digraph(n: int, p: float, seed: int) -> tuple[list[str], list[tuple[str, str]]]:
    """Each ordered pair of distinct items is a prerequisite with probability p (cycles allowed)."""
    rng = np.random.default_rng(seed)
    items = _names(n)
    return items, [(a, b) for a in items for b in items if a != b and rng.random() < p]


# ---- the three tools -----------------------------------------------------------------------
def run_kstp(items, pairs) -> set[frozenset[str]]:
    from kstp.kst.spaces import KnowledgeSpace

    return set(KnowledgeSpace.build(items, pairs).states(limit=None))


def count_kstp(items, pairs) -> int:
    from kstp.kst.spaces import KnowledgeSpace

    return KnowledgeSpace.build(items, pairs).count(limit=None)


def run_kstpy(items, pairs) -> set[frozenset[str]]:
    from kstpy.basics import constr, sr2basis

    graph = nx.DiGraph()
    graph.add_nodes_from(items)
    graph.add_edges_from(pairs)
    # the reflexive pairs keep prerequisite-free items in kstpy's domain (it reads the domain off the relation)
    sr = {(a, b) for b in items for a in nx.ancestors(graph, b)} | {(q, q) for q in items}
    return {frozenset(s) for s in constr(sr2basis(sr))}


def run_knowledgespaces(items, pairs) -> set[frozenset[str]] | None:
    """The family, or None where the package refuses the domain size."""
    from knowledgespaces import space_from_prerequisites
    from knowledgespaces._limits import DomainTooLargeError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "domain size is large" from 15 items on
        try:
            return set(space_from_prerequisites(items, pairs).states)
        except DomainTooLargeError:
            return None


Fringes = dict[frozenset[str], tuple[frozenset[str], frozenset[str]]]  # state -> (inner, outer)


def fringes_kstp(items, pairs):
    """kstp's (space, (states, inner, outer) masks): what the states/s figure times."""
    from kstp.kst.spaces import KnowledgeSpace

    space = KnowledgeSpace.build(items, pairs)
    return space, space.fringes(limit=None)


def fringes_kstp_sets(items, pairs) -> Fringes:
    space, masks = fringes_kstp(items, pairs)
    states, inner, outer = (space.item_sets(m) for m in masks)
    return dict(zip(states, zip(inner, outer, strict=True), strict=True))


def fringes_kstpy(items, pairs) -> Fringes:
    from kstpy.basics import constr, fringe, sr2basis

    graph = nx.DiGraph()
    graph.add_nodes_from(items)
    graph.add_edges_from(pairs)
    sr = {(a, b) for b in items for a in nx.ancestors(graph, b)} | {(q, q) for q in items}
    structure = constr(sr2basis(sr))
    out = {}
    for state in structure:
        f = fringe(state, structure)
        out[frozenset(state)] = (frozenset().union(*f["inner"]), frozenset().union(*f["outer"]))
    return out


def fringes_knowledgespaces(items, pairs) -> Fringes | None:
    from knowledgespaces import space_from_prerequisites
    from knowledgespaces._limits import DomainTooLargeError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            ks = space_from_prerequisites(items, pairs)
        except DomainTooLargeError:
            return None
    return {s: (ks.inner_fringe(s), ks.outer_fringe(s)) for s in ks.states}


def _time(fn: Callable, *args):
    """(result, seconds): one run; a run under a second is repeated, median of 3."""
    start = time.perf_counter()
    result = fn(*args)
    times = [time.perf_counter() - start]
    if times[0] < 1.0:
        for _ in range(2):
            start = time.perf_counter()
            result = fn(*args)
            times.append(time.perf_counter() - start)
    return result, statistics.median(times)


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("kstpy", "knowledgespaces"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def _inputs(quick: bool) -> list[tuple[str, list[str], list[tuple[str, str]]]]:
    sizes = QUICK_SIZES if quick else SIZES
    out = [(f"chain {n}", *chain(n)) for n in sizes]
    out += [(f"antichain {n}", *antichain(n)) for n in sizes if n <= ANTICHAIN_MAX]
    out += [(f"random DAG {n}", *random_dag(n, DAG_DEGREE / n, DAG_SEED)) for n in sizes]
    out.append(("digraph, cycles 15", *random_digraph(15, 0.08, DAG_SEED)))
    return out


#: kstp alone on large spaces (counted, not listed): (label, input).
def _large(quick: bool) -> list[tuple[str, tuple]]:
    rows = [("antichain 20 (2^20)", antichain(20)), ("random DAG 34, p 0.088", random_dag(34, 0.088, 1))]
    if not quick:
        rows += [("random DAG 60, p 0.1", random_dag(60, 0.1, 1)),
                 ("random DAG 70, p 0.12 (>64 classes)", random_dag(70, 0.12, 2))]
    return rows


def _diff(name: str, label: str, got: set, expected: set) -> str:
    return (f"{label}: {name} has {len(got):,} states, kstp {len(expected):,}; {len(got - expected):,} only in "
            f"{name}, {len(expected - got):,} only in kstp")


# ---- the benchmark -------------------------------------------------------------------------------
def main(quick: bool = False) -> dict:
    banner(f"knowledge spaces: kstp against kstpy and knowledgespaces{' [quick]' if quick else ''}")
    versions = _versions()
    missing = [n for n, v in versions.items() if v is None]
    if missing:
        print(f"not installed: {', '.join(missing)} (make bench installs them); those columns are skipped")
    print("versions: " + ", ".join(f"{n} {v or '-'}" for n, v in versions.items()), flush=True)
    tools = {"kstpy": run_kstpy if versions["kstpy"] else None,
             "knowledgespaces": run_knowledgespaces if versions["knowledgespaces"] else None}
    warm = (["a", "b", "c"], [("a", "b")])
    run_kstp(*warm), count_kstp(*warm)
    for fn in tools.values():
        if fn is not None:
            fn(*warm)  # imports, lazy modules

    rows, records, problems = [], [], []
    for label, items, pairs in _inputs(quick):
        n = len(items)
        states, kstp_s = _time(run_kstp, items, pairs)
        count, count_s = _time(count_kstp, items, pairs)
        if count != len(states):
            problems.append(f"{label}: count() {count:,} but states() lists {len(states):,}")
        known = n + 1 if label.startswith("chain") else 2**n if label.startswith("antichain") else None
        if known is not None and count != known:
            problems.append(f"{label}: kstp counts {count:,} states, expected {known:,}")
        record = {"input": label, "items": n, "states": len(states), "kstp_s": kstp_s, "count_s": count_s}
        cells, agree = {}, True
        for name, fn in tools.items():
            if fn is None:
                cells[name] = ("-", None, "not installed")
                continue
            if name == "kstpy" and n * len(states) > KSTPY_BUDGET:
                cells[name] = ("-", None, "skipped")
                continue
            got, seconds = _time(fn, items, pairs)
            if got is None:
                cells[name] = ("-", None, "refused")
                continue
            if got != states:
                agree = False
                problems.append(_diff(name, label, got, states))
            cells[name] = (fmt_int(len(got)), seconds, "")
            record[f"{name}_s"], record[f"{name}_ratio"] = seconds, seconds / kstp_s
        record["agree"], record["compared"] = agree, any(f"{name}_s" in record for name in tools)
        records.append(record)
        ran = [c for c in cells.values() if c[1] is not None]
        row = [label, fmt_int(len(states))]
        for _name, (shown, _s, why) in cells.items():
            row.append(shown if why == "" else why)
        row += ["yes" if agree and ran else "NO" if not agree else "-", fmt_s(kstp_s), fmt_s(count_s)]
        row += [fmt_s(s) for _count, s, _why in cells.values()]
        row += [fmt_ratio(s / kstp_s) if s is not None else "-" for _count, s, _why in cells.values()]
        rows.append(row)
        print(f"  {label}: {len(states):,} states", flush=True)
    print_table(["input", "kstp states", "kstpy", "knowledgespaces", "equal", "kstp s", "kstp count s",
                 "kstpy s", "knowledgespaces s", "kstpy/kstp", "knowledgespaces/kstp"], rows)
    print("kstp s: build + states() (frozensets); kstp count s: build + count(). Times under a second: median of 3; "
          "others one run. Ratio: the package's seconds over kstp's build + states(). kstpy's time includes the "
          f"transitive closure it needs as input. kstpy skipped where items x states > {KSTPY_BUDGET:,}; "
          "knowledgespaces refuses 25 items or more (it filters the power set).")

    fringe_records = _fringe_table(quick, versions, problems)
    analysis_records = _analysis_table(quick, versions, problems)

    large_rows, large = [], []
    for label, (items, pairs) in _large(quick):
        count, count_s = _time(count_kstp, items, pairs)
        large.append({"input": label, "items": len(items), "states": count, "count_s": count_s})
        large_rows.append([label, str(len(items)), fmt_int(count), fmt_s(count_s)])
    print()
    print_table(["kstp alone, large spaces", "items", "states", "build + count s"], large_rows)
    print("count() enumerates every state as a bit mask; listing them as frozensets (states()) costs far more "
          "(the kstp s column above). Above 64 item classes the masks are Python integers, not numpy words.")
    for problem in problems:
        print("PROBLEM:", problem)
    return {"versions": versions, "records": records, "fringes": fringe_records, "analyses": analysis_records,
            "large": large, "problems": problems, "agree": not problems}


def _fringe_inputs(quick: bool) -> list[tuple[str, list[str], list[tuple[str, str]]]]:
    sizes = QUICK_SIZES if quick else FRINGE_SIZES
    out = [(f"chain {n}", *chain(n)) for n in sizes]
    out += [(f"antichain {n}", *antichain(n)) for n in sizes]
    out += [(f"random DAG {n}", *random_dag(n, DAG_DEGREE / n, DAG_SEED)) for n in sizes]
    out.append(("digraph, cycles 15", *random_digraph(15, 0.08, DAG_SEED)))
    out.append((f"antichain {FRINGE_ANTICHAIN}", *antichain(FRINGE_ANTICHAIN)))  # kstp alone: the target
    return out


def _fringe_table(quick: bool, versions: dict, problems: list[str]) -> list[dict]:
    """Enumeration with the inner and outer fringe of every state: kstp against both packages."""
    tools = {"kstpy": fringes_kstpy if versions["kstpy"] else None,
             "knowledgespaces": fringes_knowledgespaces if versions["knowledgespaces"] else None}
    rows, records = [], []
    for label, items, pairs in _fringe_inputs(quick):
        (_space, masks), kstp_s = _time(fringes_kstp, items, pairs)
        states = len(masks[0])
        record = {"input": label, "items": len(items), "states": states, "kstp_s": kstp_s,
                  "kstp_states_per_s": states / kstp_s}
        alone = label == f"antichain {FRINGE_ANTICHAIN}"
        want, sets_s = (None, None) if alone else _time(fringes_kstp_sets, items, pairs)
        cells, agree = {}, True
        for name, fn in tools.items():
            if fn is None or alone:
                cells[name] = "not installed" if fn is None else "-"
                continue
            if name == "kstpy" and states**2 > KSTPY_FRINGE_BUDGET:
                cells[name] = "skipped"
                continue
            got, seconds = _time(fn, items, pairs)
            if got is None:
                cells[name] = "refused"
                continue
            if got != want:
                agree = False
                wrong = sum(got.get(k) != v for k, v in want.items()) + len(set(got) - set(want))
                problems.append(f"fringes, {label}: {name} differs from kstp on {wrong:,} of {len(want):,} states")
            cells[name] = seconds
            record[f"{name}_s"], record[f"{name}_ratio"] = seconds, seconds / kstp_s
        record["agree"], record["compared"] = agree, any(f"{n}_s" in record for n in tools)
        records.append(record)
        row = [label, fmt_int(states), fmt_s(kstp_s), fmt_int(round(states / kstp_s)),
               fmt_s(sets_s) if sets_s is not None else "-"]
        row += [fmt_s(c) if isinstance(c, float) else c for c in cells.values()]
        row += ["yes" if record["compared"] and agree else "NO" if not agree else "-"]
        row += [fmt_ratio(c / kstp_s) if isinstance(c, float) else "-" for c in cells.values()]
        rows.append(row)
        print(f"  fringes {label}: {states:,} states", flush=True)
    print()
    print_table(["enumeration + fringes", "states", "kstp s", "kstp states/s", "kstp sets s", "kstpy s",
                 "knowledgespaces s", "equal", "kstpy/kstp", "knowledgespaces/kstp"], rows)
    print("kstp s: build + fringes(): every state with its inner and outer fringe as bit masks; kstp sets s adds "
          "one frozenset per state and fringe. kstpy: fringe(state, structure) per state (skipped where "
          f"states^2 > {KSTPY_FRINGE_BUDGET:,}); knowledgespaces: inner_fringe + outer_fringe per state (it refuses "
          "25 items or more). Both include building their structure. Ratio: the package's seconds over kstp s. "
          f"Target: >= 1,000,000 states/s on the antichain of {FRINGE_ANTICHAIN} (and of 20), >= 100x both packages.")
    return records


# ---- structure analysis (issue 34) ---------------------------------------------------------------
#: kstpy's pairwise analyses (basis, surmise relation, per-state fringes) run where states^2 is at most this.
KSTPY_PAIRS_BUDGET = 20_000_000
#: kstpy lists every learning path: run where kstp counts at most this many.
KSTPY_PATHS_BUDGET = 20_000
SIMULATED = 10_000  # learners drawn by each simulation
ANALYSES = ("base", "space?", "relation", "fringes", "paths", "forward", "simulate")


def _analysis_inputs(quick: bool) -> list[tuple[str, list[str], np.ndarray]]:
    """pks's example structures (tests/data/kst), and generated spaces and closure spaces."""
    import json

    from benchmarks.common import REPO
    from kstp.kst.analysis import Structure

    reference = json.loads((REPO / "tests" / "data" / "kst" / "kst_reference.json").read_text())
    out = []
    for name in ("DoignonFalmagne7", "endm_K", "chess_dst1", "chess_dst4", "chess_dst3"):
        ref = reference[name]
        out.append((f"pks {name}", list(ref["items"]),
                    np.array([[int(c) for c in p] for p in ref["states"]], dtype=np.uint8)))
    from kstp.kst.spaces import KnowledgeSpace

    for n in (12,) if quick else (9, 14, 18, 22):
        items, pairs = random_dag(n, DAG_DEGREE / n, DAG_SEED)
        space = Structure.from_space(KnowledgeSpace.build(items, pairs), None).states
        out.append((f"space of random DAG {n}", items, space))
        out.append((f"closure space (complements), DAG {n}", items, 1 - space))
    return out


def _kstp_analysis(what: str, items, matrix):
    from kstp.kst.analysis import Structure

    k = Structure.build(items, matrix)
    if what == "base":  # unchecked, as the peers compute it
        return {frozenset(s) for s in k.sets(k.base(check=False))}
    if what == "space?":  # kstp alone: the check its checked base() adds
        return k.is_space()
    if what == "relation":
        r = k.surmise_relation()
        return {(items[p], items[q]) for p, q in zip(*np.nonzero(r), strict=True)}
    if what == "fringes":
        inner, outer = k.fringes()
        names = np.asarray(items, dtype=object)
        return {frozenset(names[s > 0]): (frozenset(names[i > 0]), frozenset(names[o > 0]))
                for s, i, o in zip(k.states, inner, outer, strict=True)}
    if what == "paths":  # counted; listed too where kstpy can list them (the comparison)
        from kstp.kst.paths import learning_paths

        paths = learning_paths(k)
        count = paths.count
        if count > KSTPY_PATHS_BUDGET:
            return count, None
        sets = [frozenset(s) for s in k.sets(range(len(k)))]
        return count, {tuple(sets[r] for r in p) for p in paths}
    if what == "forward":
        return [q for q, ok in zip(items, k.forward_graded(), strict=True) if ok]
    from kstp.kst.blim_gof import simulate

    answers, _ = simulate(matrix, np.full(len(matrix), 1 / len(matrix)), np.full(len(items), 0.1),
                          np.full(len(items), 0.1), SIMULATED, np.random.default_rng(1))
    return answers.shape


def _kstpy_analysis(what: str, items, family):
    from kstpy import basics, simulation

    if what == "base":
        return {frozenset(s) for s in basics.basis(family)}
    if what == "relation":
        return set(basics.surmiserelation(family))
    if what == "fringes":
        out = {}
        for state in family:
            f = basics.fringe(state, family)
            out[frozenset(state)] = (frozenset().union(*f["inner"]), frozenset().union(*f["outer"]))
        return out
    if what == "paths":
        paths = basics.learningpaths(family)
        return len(paths), {tuple(frozenset(s) for s in p) for p in paths}
    rates = {q: 0.1 for q in items}
    drawn = simulation.simulation(family, SIMULATED, rates, dict(rates))
    return (len(drawn), len(items))


def _r_analyses(inputs) -> dict | None:
    """pks's and kstMatrix's timings per input (benchmarks/structures_r.R), or None when R cannot load pks."""
    import json
    import subprocess
    import tempfile
    from pathlib import Path

    import pandas as pd

    from benchmarks.common import REPO

    if r_package_version("pks") is None:
        return None
    with tempfile.TemporaryDirectory(prefix="kstp-structures-bench-") as tmp:
        listing = []
        for k, (label, items, matrix) in enumerate(inputs):
            path = Path(tmp) / f"K{k}.csv"
            pd.DataFrame(matrix, columns=items).to_csv(path, index=False)
            listing.append({"key": label, "K": str(path)})
        pd.DataFrame(listing).to_csv(Path(tmp) / "jobs.csv", index=False)
        done = subprocess.run(["Rscript", str(REPO / "benchmarks" / "structures_r.R"), str(Path(tmp) / "jobs.csv"),
                               str(Path(tmp) / "out.json")], capture_output=True, text=True, timeout=3600)
        if done.returncode:
            print(f"R run failed: {done.stderr.strip()[-300:]}")
            return None
        return json.loads((Path(tmp) / "out.json").read_text())


def _analysis_table(quick: bool, versions: dict, problems: list[str]) -> list[dict]:
    """Structure analyses and simulation: kstp against kstpy, pks and kstMatrix (see the module docstring)."""
    from kstp.kst.analysis import Structure, StructureError

    inputs = _analysis_inputs(quick)
    for what in ANALYSES:  # imports and first calls (scipy, BLAS) before any timing
        _kstp_analysis(what, *inputs[0][1:])
        if versions["kstpy"] and what not in ("forward", "space?"):
            from kstpy.helpers import kstFrozenset

            _kstpy_analysis(what, inputs[0][1], {kstFrozenset(np.asarray(inputs[0][1], dtype=object)[row > 0])
                                                 for row in inputs[0][2]})
    r = None if quick else _r_analyses(inputs)
    if r is None and not quick:
        print("R with pks not found: the pks and kstMatrix columns are left out")
    r_columns = {"fringes": "fringes_s", "forward": "forward_graded_s", "base": "basis_s", "relation": "relation_s"}
    rows, records = [], []
    for label, items, matrix in inputs:
        family = None
        if versions["kstpy"]:
            from kstpy.helpers import kstFrozenset

            names = np.asarray(items, dtype=object)
            family = {kstFrozenset(names[row > 0]) for row in matrix}
        k = Structure.build(items, matrix)
        is_space = k.is_space()
        for what in ANALYSES:
            if what == "base" and not is_space:
                continue
            try:
                ours, kstp_s = _time(_kstp_analysis, what, items, matrix)
            except StructureError as exc:
                rows.append([label, f"{len(matrix):,}", what, "-", "-", "-", "-", f"kstp: {exc}"[:60]])
                continue
            record = {"input": label, "states": len(matrix), "analysis": what, "kstp_s": kstp_s}
            peers = []
            pairwise = len(matrix) ** 2 > KSTPY_PAIRS_BUDGET and what in ("base", "relation", "fringes")
            # kstpy's learning paths are gradations (one item a step): the same as kstp's only when well-graded
            too_many = what == "paths" and (ours[0] > KSTPY_PATHS_BUDGET or not k.is_well_graded())
            if family is not None and what not in ("forward", "space?") and not pairwise and not too_many:
                theirs, kstpy_s = _time(_kstpy_analysis, what, items, family)
                if theirs != ours:  # a simulation: the shape of the drawn data
                    problems.append(f"analysis {what}, {label}: kstpy and kstp differ")
                record["kstpy_s"] = kstpy_s
                peers.append(kstpy_s)
            r_rec = (r or {}).get(label, {})
            if r_columns.get(what) in r_rec:
                record["r_s"] = r_rec[r_columns[what]]
                peers.append(record["r_s"])
                if what == "base" and r_rec.get("basis_size") != len(ours):
                    problems.append(f"analysis base, {label}: kstMatrix's basis has {r_rec.get('basis_size')} "
                                    f"elements, kstp's {len(ours)}")
            note = ""
            if peers:
                fastest = min(p for p in peers if p > 0) if any(p > 0 for p in peers) else None
                record["fastest_ratio"] = fastest / kstp_s if fastest else None
                # a run under a millisecond measures call overhead (numpy's against pure Python), not the analysis
                record["measured"] = max(kstp_s, fastest or 0) >= 1e-3
                note = "" if record["measured"] else "all under 1 ms"
            records.append(record)
            ratio = record.get("fastest_ratio")
            rows.append([label, f"{len(matrix):,}", what, fmt_s(kstp_s),
                         fmt_s(record["kstpy_s"]) if "kstpy_s" in record else "-",
                         fmt_s(record["r_s"]) if "r_s" in record else "-",
                         fmt_ratio(ratio) if ratio else "-", note])
        print(f"  analyses {label}: {len(matrix):,} states", flush=True)
    print()
    print_table(["structure analysis", "states", "analysis", "kstp s", "kstpy s", "R s (pks/kstMatrix)",
                 "fastest peer/kstp", "note"], rows)
    print("kstp: Structure.build from the 0/1 matrix, then the analysis; base unchecked (base(check=False)), as "
          "the peers compute it, and space? the union-closure check the default base() adds (kstp alone). "
          "kstpy: basis, surmiserelation, fringe per state, learningpaths (lists every path), simulation, on its "
          f"frozenset family (skipped where states^2 > {KSTPY_PAIRS_BUDGET:,}, or more than {KSTPY_PATHS_BUDGET:,} "
          "learning paths). R: pks getKFringe (inner + outer) and is.forward.graded, kstMatrix kmbasis (C) and "
          "kmsurmiserelation; R's clock ticks in milliseconds, so a 0.001 s R time is a bound. Target: "
          "fastest peer/kstp >= 0.5 (kstp within 2x) where a tool takes a millisecond or more; below that the "
          "ratio compares numpy's call overhead with pure Python's.")
    return records


def _ratio_range(records: list[dict], name: str) -> str:
    ratios = [r[f"{name}_ratio"] for r in records if f"{name}_ratio" in r]
    if not ratios:
        return "not run"
    return f"{fmt_ratio(min(ratios))} to {fmt_ratio(max(ratios))} (median {fmt_ratio(statistics.median(ratios))})"


def summary(r: dict) -> str:
    """The one-line summary of :func:`main`'s result."""
    big = max(r["large"], key=lambda e: e["states"])
    compared = sum(rec["compared"] for rec in r["records"])
    equal = "NO" if not r["agree"] else "yes" if compared else "not compared"
    fringes = r["fringes"]
    target = [f for f in fringes if f["input"].startswith("antichain") and f["items"] >= 20]
    rate = min(f["kstp_states_per_s"] for f in target) if target else 0
    fringe_line = (f"; with fringes: kstp {fmt_int(round(rate))} states/s on antichains of 20+ items "
                   "(target 1,000,000), "
                   f"kstpy/kstp {_ratio_range(fringes, 'kstpy')}, knowledgespaces/kstp "
                   f"{_ratio_range(fringes, 'knowledgespaces')}")
    ratios = [a["fastest_ratio"] for a in r.get("analyses", []) if a.get("fastest_ratio") and a.get("measured")]
    quick = [a["fastest_ratio"] for a in r.get("analyses", []) if a.get("fastest_ratio") and not a.get("measured")]
    analysis_line = (f"; structure analyses: fastest peer/kstp {fmt_ratio(min(ratios))} to {fmt_ratio(max(ratios))} "
                     f"(median {fmt_ratio(statistics.median(ratios))}; target >= 0.5) where a tool takes 1 ms or "
                     f"more" + (f", {fmt_ratio(min(quick))} to {fmt_ratio(max(quick))} below" if quick else "")
                     ) if ratios else ""
    return (f"spaces: {len(r['records'])} inputs ({compared} compared), state families equal: {equal}; "
            f"kstpy/kstp {_ratio_range(r['records'], 'kstpy')}; knowledgespaces/kstp "
            f"{_ratio_range(r['records'], 'knowledgespaces')}; kstp counts {big['states']:,} states in "
            f"{fmt_s(big['count_s'])} s{fringe_line}{analysis_line}")


if __name__ == "__main__":
    main()
