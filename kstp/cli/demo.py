"""``kstp demo``: the main job end to end on the shipped real data."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import click
import pandas as pd

from kstp.cli.output import get_store, message, print_table, status
from kstp.platform.settings import data_dir

__all__ = ["demo"]

#: The learner datasets of the demo, under responses/: both skill maps, so Eq. 1 runs
#: with the reflexive rule (concepts(q_i) within concepts(q_j)).
SKILL_MAP_DATASETS = {
    "probability_pks": ("items.csv", "qmatrix.csv", "skills.csv", "responses_full.csv"),
    "frcsub": ("items.csv", "qmatrix.csv", "skills.csv", "responses.csv"),
}
_STEPS = 3 + 3 * len(SKILL_MAP_DATASETS)


@contextmanager
def _step(counter: list[int], title: str):
    counter[0] += 1
    with status(f"[{counter[0]}/{_STEPS}] {title}"):
        yield
    message(f"[{counter[0]}/{_STEPS}] {title}: done")


@click.command()
@click.option("--data", type=click.Path(path_type=Path), envvar="KSTP_DATA",
              help="Shared data folder (default: $KSTP_DATA, else ../shared/data).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("results"), show_default=True,
              help="Folder for the PSR tables, per-learner CSVs and the distribution chart.")
@click.pass_context
def demo(ctx: click.Context, data: Path | None, out: Path) -> None:
    """Run the main job on real data: curriculum, items, students, Eq. 1, PSR.

    Ingests the Coherence Map (480 concepts, 757 prerequisite edges) and the
    LLM-KST question annotation map (4,118 questions, strict rule); the probability
    word problems (12 items, 504 learners) and the fraction-subtraction test (20
    items, 536 learners), both skill maps with the reflexive rule; derives question
    prerequisites and reports accuracy and PSR per dataset. Safe to re-run: finished
    steps change nothing.

    \b
    Example:
      KSTP_DATA=../shared/data kstp demo --out results/
    """
    from kstp.cli.db import graph_stats
    from kstp.cli.evaluate import psr
    from kstp.loaders import items as items_loader
    from kstp.loaders import responses as responses_loader
    from kstp.loaders.standards import load_standards
    from kstp.platform.kst import derive_question_prerequisites
    root = data_dir(data)
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
    stats = graph_stats(store)
    print_table(pd.DataFrame(stats["frameworks"]).query("framework == 'ccss'"), "Curriculum (paper 1, Table 1)",
                digits=2)
    print_table(pd.DataFrame(stats["datasets"]).drop(columns=["name"]), "Datasets", digits=2)
    ctx.invoke(psr, datasets=tuple(SKILL_MAP_DATASETS), out=out, min_prerequisites=5, as_json=False)
