"""``kstp demo``: the main job end to end on the shipped real data."""

from __future__ import annotations

import hashlib
import json
from contextlib import contextmanager
from pathlib import Path

import click

from kstp._version import __version__
from kstp.cli.output import emit, get_store, json_option, message, on_interrupt, print_table, status
from kstp.settings import data_dir, graph_target

__all__ = ["demo"]

#: The learner datasets of the demo, under responses/: both skill maps, so Eq. 1 runs
#: with the reflexive rule (concepts(q_i) within concepts(q_j)).
SKILL_MAP_DATASETS = {
    "probability_pks": ("items.csv", "qmatrix.csv", "skills.csv", "responses_full.csv"),
    "frcsub": ("items.csv", "qmatrix.csv", "skills.csv", "responses.csv"),
}
_STEPS = 3 + 3 * len(SKILL_MAP_DATASETS)
#: Written in --out after a demo: what it read and the graph it left, byte for byte.
FINGERPRINT = "demo_fingerprint.json"
_OUTPUTS = ("psr_summary.csv", "psr_summary.json", "psr_distribution.png")


@contextmanager
def _step(counter: list[int], title: str):
    """One numbered step: a spinner while it runs, then ``[i/N] title: done in S s``."""
    counter[0] += 1
    done = counter[0] - 1
    on_interrupt(f"in step {counter[0]}/{_STEPS} ({title}); "
                 + (f"steps 1-{done} are in the graph" if done else "no step had finished")
                 + "; run kstp demo again to finish (steps already done change nothing).")
    with status(f"[{counter[0]}/{_STEPS}] {title}", keep=True):
        yield


def _inputs(root: Path) -> list[Path]:
    files = [root / "standards/nys_concepts.json", root / "llm_kst/xes_skills_nys.json"]
    return files + [root / "responses" / d / f for d, names in SKILL_MAP_DATASETS.items() for f in names]


def _digest(paths: list[Path]) -> str:
    """SHA-256 over the paths and their bytes (a missing file counts as absent)."""
    total = hashlib.sha256(f"kstp {__version__} {sorted(SKILL_MAP_DATASETS.items())}".encode())
    for path in paths:
        total.update(str(path).encode())
        if path.is_file():
            with open(path, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 22), b""):
                    total.update(block)
    return total.hexdigest()


def _graph_files(ctx: click.Context) -> list[Path] | None:
    """The embedded graph's files (data and write-ahead log), or None for a server graph."""
    target = graph_target((ctx.find_root().obj or {}).get("graph"))
    if target.engine != "ladybug":
        return None
    path = Path(target.location).resolve()
    return [path, path.with_name(path.name + ".wal")]


def _fingerprint(root: Path, out: Path, graph: list[Path]) -> dict:
    return {"inputs": _digest(_inputs(root)), "graph": _digest(graph), "out": str(out.resolve())}


def _unchanged(root: Path, out: Path, graph: list[Path] | None) -> bool:
    """Whether the last demo into ``out`` read these inputs and left this graph as it is now."""
    try:
        stored = json.loads((out / FINGERPRINT).read_text())
    except (OSError, ValueError):
        return False
    return (graph is not None and all((out / name).is_file() for name in _OUTPUTS)
            and stored == _fingerprint(root, out, graph))


@click.command()
@click.option("--data", type=click.Path(path_type=Path), envvar="KSTP_DATA",
              help="Shared data folder (default: $KSTP_DATA, else ../shared/data).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("results"), show_default=True,
              help="Folder for the PSR tables, per-learner CSVs and the distribution chart.")
@json_option
@click.pass_context
def demo(ctx: click.Context, data: Path | None, out: Path, as_json: bool) -> None:
    """Run the main job on real data: curriculum, items, students, Eq. 1, PSR.

    Ingests the Coherence Map (480 concepts, 757 prerequisite edges) and the
    LLM-KST question annotation map (4,118 questions, strict rule); the probability
    word problems (12 items, 504 learners) and the fraction-subtraction test (20
    items, 536 learners), both skill maps with the reflexive rule; derives question
    prerequisites and reports accuracy and PSR per dataset (--format json or csv: the
    three tables as one document). Safe to re-run: finished
    steps change nothing, and when the data files, the (embedded) graph and the
    results are exactly as the last demo left them, it says "nothing changed" and
    does not open the graph at all.

    \b
    Example:
      KSTP_DATA=../shared/data kstp demo --out results/
    """
    import pandas as pd

    from kstp.cli.evaluate import print_psr, psr_summaries
    from kstp.graph.manage import graph_stats
    from kstp.graph.structures import derive_question_prerequisites
    from kstp.loaders import items as items_loader
    from kstp.loaders import responses as responses_loader
    from kstp.loaders.standards import load_standards

    root = data_dir(data)
    graph = _graph_files(ctx)
    if _unchanged(root, out, graph):
        message(f"nothing changed since the last demo (same data, graph and kstp {__version__}); "
                f"the results in {out} are current")
        if as_json:  # the graph stays closed: the PSR rows the last demo wrote
            emit({"unchanged": True, "psr": json.loads((out / "psr_summary.json").read_text())})
        return
    finished = []
    if graph is not None:  # runs after the store has closed (callbacks run last-registered first)
        ctx.find_root().call_on_close(lambda: finished and (out / FINGERPRINT).write_text(
            json.dumps(_fingerprint(root, out, graph), indent=2) + "\n"))
    store = get_store(ctx)
    done = [0]
    with _step(done, "Coherence Map"):
        load_standards(store, root / "standards/nys_concepts.json")
    with _step(done, "LLM-KST question annotation map (xes3g5m)"):
        known = items_loader.framework_concepts(store, "ccss")
        items_loader.write_items(store, items_loader.read_concept_map(
            root / "llm_kst/xes_skills_nys.json", "xes3g5m", "ccss", known))
    with _step(done, "Eq. 1 on xes3g5m (strict)"):
        derive_question_prerequisites(store, "xes3g5m", "strict")
    for dataset, (items, qmatrix, skills, answers) in SKILL_MAP_DATASETS.items():
        folder = root / "responses" / dataset
        with _step(done, f"{dataset} items"):
            items_loader.write_items(store, items_loader.read_items_csv(
                folder / items, dataset, folder / qmatrix, folder / skills))
        with _step(done, f"{dataset} learners"):
            questions = set(store.frame("dataset_questions", {"dataset": dataset})["localId"])
            responses_loader.write_answers(store, dataset, responses_loader.read_wide(folder / answers, questions),
                                           answers)
        with _step(done, f"Eq. 1 on {dataset} (reflexive)"):
            derive_question_prerequisites(store, dataset, "reflexive")
    on_interrupt(f"all {_STEPS} steps are in the graph, the PSR results may be incomplete; run kstp demo again "
                 "to write them.")
    stats = graph_stats(store)
    curriculum = pd.DataFrame(stats["frameworks"]).query("framework == 'ccss'")
    datasets = pd.DataFrame(stats["datasets"]).drop(columns=["name"])
    summaries = psr_summaries(ctx, tuple(SKILL_MAP_DATASETS), out, "release", 5, "exclude", "full")
    if as_json:
        emit({"unchanged": False, "curriculum": curriculum, "datasets": datasets, "psr": summaries})
    else:
        print_table(curriculum, "Curriculum (paper 1, Table 1)", digits=2)
        print_table(datasets, "Datasets", digits=2)
        print_psr(summaries, "release", 5, "full", out)
    finished.append(True)
