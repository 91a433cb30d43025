"""Task catalogues: the file format, validation with locations, building from the graph, the shipped set."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from kstp.errors import CycleError, InputError, UnknownIdError
from kstp.graph.structures import derive_question_prerequisites
from kstp.loaders import catalogues
from kstp.loaders.standards import load_standards

ROOT = Path(__file__).resolve().parents[2]
DIAMOND = """\
id: diamond
name: Diamond
provenance: {source: hand-made}
tasks:
  - {id: a, description: count}
  - {id: b, description: add}
  - {id: c, description: subtract}
  - {id: d, description: multiply}
prerequisites:
  - [a, b]
  - [a, c]
  - [b, d]
  - [c, d]
"""


def write(tmp_path, text, name="c.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_read_catalogue_states_and_fringes_by_hand(tmp_path):
    c = catalogues.read_catalogue(write(tmp_path, DIAMOND))
    assert c.task_ids == ("a", "b", "c", "d") and c.prerequisites == (("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"))
    assert [(sorted(s), w) for s, w in c.states()] == [([], 1), (["a"], 1), (["a", "b"], 1), (["a", "c"], 1),
                                                       (["a", "b", "c"], 1), (["a", "b", "c", "d"], 1)]
    assert [c.space().outer_fringe(s) for s, _ in c.states()] == [["a"], ["b", "c"], ["c"], ["b"], ["d"], []]


def test_json_and_yaml_files_are_the_same_catalogue(tmp_path):
    yaml_form = catalogues.read_catalogue(write(tmp_path, DIAMOND))
    as_json = write(tmp_path, json.dumps(yaml_form.as_dict(), indent=1), "c.json")
    assert catalogues.read_catalogue(as_json) == yaml_form
    again = catalogues.write_catalogue_file(yaml_form, tmp_path / "again.yaml", "a header")
    assert again.read_text().startswith("# a header\n")
    assert catalogues.read_catalogue(again) == yaml_form and yaml_form.digest() == catalogues.read_catalogue(
        again).digest()


def test_unknown_task_is_named_with_its_line(tmp_path):
    path = write(tmp_path, DIAMOND.replace("  - [c, d]", "  - [c, e]"))
    with pytest.raises(UnknownIdError, match=rf"unknown task 'e' at {path}:13; it is not among"):
        catalogues.read_catalogue(path)


def test_cycle_is_named_with_its_lines(tmp_path):
    path = write(tmp_path, DIAMOND.replace("  - [c, d]", "  - [d, a]"))
    with pytest.raises(CycleError, match=r"prerequisite cycle a -> b -> d -> a in .*c.yaml \(line 10, line 12, "
                                         r"line 13\)") as info:
        catalogues.read_catalogue(path)
    assert info.value.cycle == ["a", "b", "d", "a"]


def test_self_loop_is_refused(tmp_path):
    with pytest.raises(CycleError, match="self-loop b -> b"):
        catalogues.read_catalogue(write(tmp_path, DIAMOND.replace("  - [c, d]", "  - [b, b]")))


@pytest.mark.parametrize("old, new, error", [
    ("  - [c, d]", "  - [a, d]", r"pair \[a, d\] at .*c.yaml:13 is implied by a -> b -> d"),
    ("  - [c, d]", "  - [a, b]", r"c.yaml:13: pair \[a, b\] repeats"),
    ("{id: c, description: subtract}", "{id: b, description: subtract}", r"c.yaml:7: task 'b' repeats"),
    ("{id: c, description: subtract}", "{id: c, description: add}", "same description as 'b'"),
    ("{id: c, description: subtract}", "{id: c}", r"c.yaml:7: task 'c' has no description"),
    ("  - [c, d]", "  - [c, d, a]", r"c.yaml:13: a prerequisite is a pair"),
    ("provenance:", "coverage: {sample: 0, seed: 1}\nprovenance:", "coverage must be"),
    ("id: diamond", "id: 'dia:mond'", "catalogue id 'dia:mond' must be"),
])
def test_malformed_catalogues_are_refused_with_location(tmp_path, old, new, error):
    with pytest.raises(InputError, match=error):
        catalogues.read_catalogue(write(tmp_path, DIAMOND.replace(old, new)))


def test_read_catalogue_invalid_yaml_is_one_line_with_line_and_column(tmp_path):
    path = write(tmp_path, DIAMOND.replace("name: Diamond", "name: Diamond: shape"))
    with pytest.raises(InputError) as error:
        catalogues.read_catalogue(path)
    assert str(error.value) == f"{path}:2: not valid YAML/JSON at column 14 (mapping values are not allowed here)"


def test_sampled_coverage_weights_count_draws(tmp_path):
    c = catalogues.read_catalogue(write(tmp_path, DIAMOND.replace("provenance:", "coverage: {sample: 40, seed: 3}\n"
                                                                                 "provenance:")))
    states = c.states()
    assert sum(w for _, w in states) == 40
    assert all(c.space().is_state(s) for s, _ in states)
    assert states == c.states()  # the seed makes it reproducible


CURRICULUM = "id,code,description,cluster\na,7.X.1,read,K1\nb,7.X.2,write,K1\nc,7.Y.1,spell,K2\nd,7.X.3,edit,K1\n"
EDGES = "from_id,to_id\na,c\nc,b\nb,d\na,d\n"


@pytest.mark.parametrize("choice", [{"code_prefix": "7.X"}, {"cluster": "cm:K1"}])
def test_concepts_catalogue_restricts_the_closure_and_reduces_it(store, tmp_path, choice):
    load_standards(store, write(tmp_path, CURRICULUM, "c.csv"), write(tmp_path, EDGES, "e.csv"), "cm")
    c = catalogues.concepts_catalogue(store, "cm", "cm_x", "X", **choice)
    # a leads to b only through c, outside the choice; a -> d is implied by a -> b -> d.
    assert [(t.id, t.description) for t in c.tasks] == [("7.X.1", "read"), ("7.X.2", "write"), ("7.X.3", "edit")]
    assert c.prerequisites == (("7.X.1", "7.X.2"), ("7.X.2", "7.X.3"))
    assert c.provenance["framework"] == "cm"


def test_concepts_catalogue_needs_a_match(store, tmp_path):
    load_standards(store, write(tmp_path, CURRICULUM, "c.csv"), write(tmp_path, EDGES, "e.csv"), "cm")
    with pytest.raises(UnknownIdError, match="no concept of framework 'cm' matches code prefix '9.'"):
        catalogues.concepts_catalogue(store, "cm", "x", "X", code_prefix="9.")
    with pytest.raises(InputError, match="one of them"):
        catalogues.concepts_catalogue(store, "cm", "x", "X", code_prefix="7", cluster="cm:K1")


def test_items_catalogue_uses_derived_prerequisites(toy):
    derive_question_prerequisites(toy, "toy", "strict")
    c = catalogues.items_catalogue(toy, "toy", "toy_items", "Toy items", ["q1", "q2", "q4", "q5"], "Do: {text}")
    # Eq. 1 (strict) gives q1->q2, q1->q4, q1->q5, q2->q5, q4->q5; q1->q5 is implied.
    assert c.prerequisites == (("q1", "q2"), ("q1", "q4"), ("q2", "q5"), ("q4", "q5"))
    assert [t.description for t in c.tasks] == ["Do: count", "Do: add", "Do: add and subtract", "Do: multiply"]
    with pytest.raises(UnknownIdError, match="unknown item 'q9'"):
        catalogues.items_catalogue(toy, "toy", "x", "X", ["q1", "q9"])


def test_items_catalogue_refuses_equally_informative_items(toy):
    # Mutual prerequisites, as the reflexive rule derives for two items with the same skills.
    toy.write_relationships("PREREQUISITE_OF", "Question", "Question", pd.DataFrame(
        {"from_id": ["toy:q5", "toy:q6"], "to_id": ["toy:q6", "toy:q5"], "rule": "reflexive"}))
    with pytest.raises(CycleError, match=r"cycle q5 -> q6 -> q5 in dataset 'toy' \(equally informative"):
        catalogues.items_catalogue(toy, "toy", "x", "X", ["q5", "q6"])


def test_write_and_read_back_from_the_graph(store, tmp_path):
    c = catalogues.read_catalogue(write(tmp_path, DIAMOND))
    catalogues.write_catalogue(store, c)
    stored = store.frame("question_prerequisite_edges", {"dataset": "diamond"})
    assert len(stored) == 5 and set(stored["rule"]) == {"catalogue"}  # the closure: 4 pairs plus a -> d
    back = catalogues.stored_catalogue(store, "diamond", c.coverage)
    assert back.digest() == c.digest()
    assert catalogues.write_catalogue(store, c).written["PREREQUISITE_OF"].created == 0  # idempotent


def test_a_catalogue_never_overwrites_a_real_dataset(toy):
    derive_question_prerequisites(toy, "toy", "strict")
    clash = catalogues.make_catalogue("toy", "Toy", [("q1", "count"), ("q2", "add")], [("q1", "q2")])
    with pytest.raises(InputError, match="dataset 'toy' in the graph is not this catalogue"):
        catalogues.write_catalogue(toy, clash)
    assert len(toy.frame("question_prerequisite_edges", {"dataset": "toy"})) > 1  # left alone


def test_shipped_catalogues_are_real_small_and_documented():
    shipped = catalogues.shipped_catalogues()
    assert len(shipped) >= 4
    for name, path in shipped.items():
        c = catalogues.read_catalogue(path)
        assert c.id == name and 4 <= len(c.tasks) <= 8 and c.coverage.kind == "exhaustive"
        assert c.provenance["source"] and c.provenance["command"] == "python tools/build_catalogues.py"
    eight_f = catalogues.resolve_catalogue("cm_8f")
    # 8.F.A.1 -> 8.F.A.2 -> 8.F.A.3 -> {8.F.B.4, 8.F.B.5}: a chain of 3, then 2 free tasks: 3 + 4 states.
    assert len(eight_f.states()) == 7
    with pytest.raises(UnknownIdError, match="shipped: cm_4nbt"):
        catalogues.resolve_catalogue("nope")


def test_shipped_catalogues_are_what_the_documented_command_builds(tmp_path, data_root):
    subprocess.run([sys.executable, str(ROOT / "tools" / "build_catalogues.py"), "--data", str(data_root),
                    "--out", str(tmp_path)], check=True, capture_output=True)
    for name, path in catalogues.shipped_catalogues().items():
        assert (tmp_path / f"{name}.yaml").read_text() == path.read_text(), name


def test_cli_build_check_and_list(tmp_path, graph_location):
    from click.testing import CliRunner

    from kstp.cli.main import cli

    graph = ["--graph", graph_location]
    runner = CliRunner()
    concepts, edges = write(tmp_path, CURRICULUM, "c.csv"), write(tmp_path, EDGES, "e.csv")
    assert runner.invoke(cli, [*graph, "ingest", "standards", str(concepts), "--edges", str(edges),
                               "--framework", "cm"]).exit_code == 0
    out = tmp_path / "x.yaml"
    built = runner.invoke(cli, [*graph, "catalogue", "build", "concepts", "--framework", "cm", "--code-prefix", "7.X",
                                "--id", "cm_x", "--name", "X", "--out", str(out)])
    assert built.exit_code == 0, built.output
    checked = runner.invoke(cli, ["catalogue", "check", str(out), "--json"])
    assert checked.exit_code == 0, checked.output
    states = json.loads(checked.stdout)["states"]
    assert [(s["state"], s["outerFringe"]) for s in states] == [
        ([], ["7.X.1"]), (["7.X.1"], ["7.X.2"]), (["7.X.1", "7.X.2"], ["7.X.3"]), (["7.X.1", "7.X.2", "7.X.3"], [])]
    bad = runner.invoke(cli, ["catalogue", "check", str(write(tmp_path, DIAMOND.replace("[c, d]", "[d, a]")))])
    assert bad.exit_code == 1 and "prerequisite cycle a -> b -> d -> a" in bad.output
    listed = runner.invoke(cli, ["catalogue", "list", "--json"])
    rows = {row["id"]: row for row in json.loads(listed.stdout)}
    assert set(rows) == set(catalogues.shipped_catalogues())
    # paper 2, Table 1's columns: components, states, terminal states (one each: all states are covered)
    assert [rows["cm_8f"][k] for k in ("tasks", "states", "terminal")] == [5, 7, 1]
    assert {row["terminal"] for row in rows.values()} == {1}
