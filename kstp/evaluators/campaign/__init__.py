"""Campaigns: many models, datasets and evaluators in one plan, each cell a normal run (issue 45, part 1).

A campaign file (TOML or YAML) names models, datasets, evaluators with their options,
samples, seeds and tags (:mod:`~kstp.evaluators.campaign.plan`). Each cell of the
product is the command line of one ``kstp evaluate ...`` (or ``kstp annotate concepts``)
command, run as its own process (:mod:`~kstp.evaluators.campaign.runner`): the same
run identity, logs and resume as that command typed by hand, so an interrupted campaign
goes on where each run stopped. Progress and the table across models are read from the
runs stored in the graph (:mod:`~kstp.evaluators.campaign.progress`).
"""

from kstp.evaluators.campaign.plan import KINDS, Cell, Plan, PlanError, read_plan

__all__ = ["KINDS", "Cell", "Plan", "PlanError", "read_plan"]
