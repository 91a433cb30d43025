"""Campaign files: each kind of mistake is one located line naming the key; a right file expands into the cells
whose commands kstp accepts; the README's example file is right (no graph, no model)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from kstp.cli.main import cli
from kstp.evaluators.campaign import PlanError, read_plan

ROOT = Path(__file__).resolve().parents[2]

GOOD = """\
datasets = ["toy"]

[campaign]
seeds = [1, 2]

[[models]]
name = "a"
model = "m-a"
base-url = "http://127.0.0.1:9/v1"
gen-kwargs = {max_tokens = 8}

[[models]]
model = "m-b"
backend = "local"

[[evaluators]]
kind = "answers"
samples = 2
tags = ["x"]

[[evaluators]]
kind = "scaffolding"
strategies = ["random"]
k = 1
"""


def _mistakes(tmp_path, text: str, name: str = "c.toml") -> list[str]:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(PlanError) as caught:
        read_plan(path)
    return caught.value.mistakes


def test_campaign_plan_expands_into_cells_in_order(tmp_path):
    (tmp_path / "c.toml").write_text(GOOD)
    plan = read_plan(tmp_path / "c.toml")
    assert [c.label for c in plan.cells] == [
        "answers · a · toy · seed 1 · x", "answers · a · toy · seed 2 · x", "answers · m-b · toy · seed 1 · x",
        "answers · m-b · toy · seed 2 · x", "scaffolding · a · toy · seed 1", "scaffolding · a · toy · seed 2",
        "scaffolding · m-b · toy · seed 1", "scaffolding · m-b · toy · seed 2"]
    first = plan.cells[0]
    assert first.argv == ("evaluate", "answers", "--dataset", "toy", "--model", "m-a", "--backend", "openai",
                          "--base-url", "http://127.0.0.1:9/v1", "--gen-kwargs", '{"max_tokens": 8}', "--seed", "1",
                          "--new-run", "--samples", "2", "--tag", "x")
    assert first.match["sampling"] == {"max_tokens": 8, "seed": 1, "n": 2}
    assert plan.cells[6].argv[-5:] == ("--new-run", "--strategy", "random", "--k", "1")


def test_campaign_plan_cells_are_commands_kstp_accepts(tmp_path):
    (tmp_path / "c.toml").write_text(GOOD)
    for cell in read_plan(tmp_path / "c.toml").cells:
        command, ctx = cli, cli.make_context("kstp", ["--graph", "ladybug:x", *cell.argv])
        while hasattr(command, "resolve_command"):
            name, command, rest = command.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
            ctx = command.make_context(name, rest, parent=ctx)


def test_campaign_plan_a_list_of_base_urls_is_repeated_flags(tmp_path):
    text = GOOD.replace('base-url = "http://127.0.0.1:9/v1"',
                        'base-url = ["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1", "http://127.0.0.1:11/v1"]')
    (tmp_path / "c.toml").write_text(text)
    first = read_plan(tmp_path / "c.toml").cells[0]
    assert first.argv[4:14] == ("--model", "m-a", "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1",
                                "--base-url", "http://127.0.0.1:10/v1", "--base-url", "http://127.0.0.1:11/v1")
    assert "baseUrl" not in first.match  # the run is the model's, whichever servers answer it
    command, ctx = cli, cli.make_context("kstp", ["--graph", "ladybug:x", *first.argv])
    name, command, rest = command.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
    ctx = command.make_context(name, rest, parent=ctx)
    name, command, rest = command.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
    assert command.make_context(name, rest, parent=ctx).params["base_url"] == (
        "http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1", "http://127.0.0.1:11/v1")


@pytest.mark.parametrize(("text", "line", "expected"), [
    (GOOD.replace('base-url = "http://127.0.0.1:9/v1"', 'base-url = ["http://a/v1", "http://a/v1"]'), 9,
     "models[0].base-url: names http://a/v1 twice; give each server once"),
    (GOOD.replace('base-url = "http://127.0.0.1:9/v1"', 'base-url = ["http://a/v1", 3]'), 9,
     "models[0].base-url: must be an endpoint URL or a list of them"),
    (GOOD.replace('backend = "local"', 'backend = "local"\nbase-url = "http://a/v1"'), 15,
     "models[1].base-url: goes with backend openai, not local"),
    (GOOD.replace('backend = "local"', 'backend = "vlm"'), 14,
     "models[1].backend: 'vlm' is not one of openai, vllm, local, hf, fringe-oracle"),
    (GOOD.replace("k = 1", "kk = 1"), 24, "evaluators[1].kk: unknown key; did you mean k?"),
    (GOOD.replace("samples = 2", "samples = 0"), 18, "evaluators[0].samples: must be a whole number of at least 1"),
    (GOOD.replace("seeds = [1, 2]", "seeds = [1, -2]"), 4, "campaign.seeds: must be a list of seeds"),
    (GOOD.replace('strategies = ["random"]', 'strategies = ["prereq"]'), 23,
     "evaluators[1].strategies: 'prereq' is not one of none, random"),
    (GOOD.replace("{max_tokens = 8}", "{max_token = 8}"), 10,
     "models[0].gen-kwargs.max_token: no sampling field; did you mean max_tokens?"),
    (GOOD.replace("{max_tokens = 8}", '"max_tokens=8"'), 10, "models[0].gen-kwargs: must be a table of key = value"),
    (GOOD.replace('model = "m-b"\n', ""), 12, "models[1]: model is missing"),
    (GOOD.replace('kind = "answers"', 'kind = "answer"'), 17,
     "evaluators[0].kind: 'answer' is not one of answers, scaffolding"),
    (GOOD.replace('datasets = ["toy"]\n', ""), None, "datasets: name at least one dataset"),
    (GOOD + 'datasets = "late"\n', 25, "evaluators[1].datasets: must be a non-empty list"),
    (GOOD.replace("[[evaluators]]\nkind = \"scaffolding\"", "[[evaluators]]\nkind = \"nextstep\""), 21,
     "evaluators[1]: catalogues is missing"),
    (GOOD.replace('name = "a"', 'name = "m-b"'), 12, "models[1].name: 'm-b' names two models"),
    (GOOD.replace("[campaign]", "[campaing]"), 3, "campaing: unknown key; did you mean campaign?"),
    (GOOD.replace("seeds = [1, 2]", "seeds = [1, 2"), 6, "not valid TOML (Unclosed array)"),
])
def test_campaign_plan_mistake_is_one_located_line(tmp_path, text, line, expected):
    mistakes = _mistakes(tmp_path, text)
    found = [m for m in mistakes if expected in m]
    assert len(found) == 1, mistakes
    where = re.match(r"(.*?c\.toml)(?::(\d+))?: ", found[0])
    assert where and (int(where.group(2)) if where.group(2) else None) == line, found[0]


def test_campaign_plan_datasets_after_a_table_say_where_they_belong(tmp_path):
    text = GOOD.replace('datasets = ["toy"]\n', "").replace('backend = "local"\n', 'backend = "local"\ndatasets = '
                                                                                         '["toy"]\n')
    mistakes = _mistakes(tmp_path, text)
    assert any(m.endswith("models[1].datasets: datasets goes at the top of the file: in TOML a key after a [table] "
                          "line belongs to that table, so top-level keys come before the first one")
               and ":14:" in m for m in mistakes), mistakes


def test_campaign_plan_every_mistake_at_once(tmp_path):
    text = GOOD.replace('backend = "local"', 'backend = "vlm"').replace("k = 1", "k = 0")
    assert len(_mistakes(tmp_path, text)) == 2


def test_campaign_plan_yaml_mistakes_are_located(tmp_path):
    text = ("datasets: [toy]\nmodels:\n  - model: m\n    backend: openai\n    concurency: 4\n"
            "evaluators:\n  - kind: answers\n")
    [mistake] = _mistakes(tmp_path, text, "c.yaml")
    assert mistake.endswith(":5: models[0].concurency: unknown key; did you mean concurrency? Keys here: name, model, "
                            "backend, base-url, model-args, gen-kwargs, concurrency, system-in-user"), mistake
    (tmp_path / "d.yml").write_text(text.replace("concurency", "concurrency"))
    assert [c.label for c in read_plan(tmp_path / "d.yml").cells] == ["answers · m · toy · seed 42"]


def test_campaign_plan_not_yaml_is_one_line(tmp_path):
    [mistake] = _mistakes(tmp_path, "models: [\n", "c.yaml")
    assert re.search(r"c\.yaml:\d+: not valid YAML", mistake)


def test_campaign_example_file_is_valid_and_its_commands_are_accepted():
    """The file the README shows (examples/campaign.toml) reads, and every cell's command is one kstp takes."""
    plan = read_plan(ROOT / "examples" / "campaign.toml")
    assert len(plan.cells) == 8 and {c.kind for c in plan.cells} == {"answers", "scaffolding"}
    for cell in plan.cells:
        command, ctx = cli, cli.make_context("kstp", list(cell.argv))
        while hasattr(command, "resolve_command"):
            name, command, rest = command.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
            ctx = command.make_context(name, rest, parent=ctx)
    readme = (ROOT / "README.md").read_text()
    shown = re.search(r"#### Campaigns.*?```toml\n(.*?)```", readme, re.S)
    assert shown and shown.group(1) == (ROOT / "examples" / "campaign.toml").read_text()
    assert all(shlex.split(c) for c in ("kstp campaign run examples/campaign.toml",))


ALL_KINDS = """\
datasets = ["toy"]

[[models]]
model = "m"
base-url = "http://127.0.0.1:9/v1"

[[evaluators]]
kind = "dagmath"
samples = 2
shots = 0
malformed = "retry:2"

[[evaluators]]
kind = "rqeval"
datasets = ["gsm8k"]
k = 2
p = 1
nli = "llm"
robustness = "present"

[[evaluators]]
kind = "nextstep"
catalogues = ["cm_8f", "pks_cip"]
conditions = ["P0", "P2"]
orders = 1
sampling = "deterministic"

[[evaluators]]
kind = "annotate"
framework = "toy"
retries = 1
prompt = "release"
"""


def test_campaign_plan_every_kind_is_its_command(tmp_path):
    """dagmath, rqeval, nextstep (one cell over its catalogues) and annotate cells are the commands kstp takes."""
    (tmp_path / "c.toml").write_text(ALL_KINDS)
    cells = read_plan(tmp_path / "c.toml").cells
    assert [(c.kind, c.dataset) for c in cells] == [("dagmath", "toy"), ("rqeval", "gsm8k"),
                                                    ("nextstep", "cm_8f+pks_cip"), ("annotate", "toy")]
    assert cells[2].argv[:8] == ("evaluate", "nextstep", "--catalogue", "cm_8f", "--catalogue", "pks_cip",
                                 "--conditions", "P0,P2")
    assert cells[3].argv[:6] == ("annotate", "concepts", "--items", "toy", "--framework", "toy")
    assert [c.match["evaluator"] for c in cells] == ["dagmath", "rqeval", "nextstep", "annotation"]
    for cell in cells:
        command, ctx = cli, cli.make_context("kstp", list(cell.argv))
        while hasattr(command, "resolve_command"):
            name, command, rest = command.resolve_command(ctx, [*ctx._protected_args, *ctx.args])
            ctx = command.make_context(name, rest, parent=ctx)
