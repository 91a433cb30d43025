"""The query registry: headers, parameter checks, overrides, and every error's path:line."""

from __future__ import annotations

import re

import pytest

from kstp.errors import QueryError
from kstp.graph.queries import get_query, load_registry, registry

GOOD = ("// name: {name}\n// params: $x: string\n// returns: many {{a}}\n// Says what.\n"
        "MATCH (n {{id: $x}}) RETURN n.id AS a\n")


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_registry_loads_every_shipped_query_with_header():
    queries = registry()
    assert {"concept_ancestors", "question_prerequisites", "psr_by_learner", "outer_fringe"} <= set(queries)
    psr = queries["psr_by_learner"]
    assert (psr.area, psr.params, psr.cardinality) == ("kst", {"dataset": "string"}, "many")
    assert psr.returns == ("learnerId", "psrMicro", "psrMacro", "questionsScored", "pairs")
    assert "Eq. 2-4" in psr.description


def test_engine_override_replaces_text_for_that_engine_only():
    query = registry()["node_counts"]
    assert "label(n)" in query.text("ladybug")
    assert "labels(n)" in query.text("neo4j")


@pytest.mark.parametrize("text, message", [
    ("// name: other\n// params: $x: string\n// returns: many {a}\nRETURN $x AS a\n",
     "q.cypher:1: declared name 'other' differs from file name 'q'"),
    ("// name: q\n// params: $x: string\n// returns: many {a}\nRETURN $y AS a\n",
     "q.cypher:4: \\$y is used but not declared"),
    ("// name: q\n// params: $x: string, $z: integer\n// returns: many {a}\nRETURN $x AS a\n",
     "q.cypher:2: \\$z is declared but never used"),
    ("// name: q\n// params: $x: text\n// returns: many {a}\nRETURN $x AS a\n",
     "q.cypher:2: \\$x has unknown type 'text'"),
    ("// name: q\n// returns: many {a}\nRETURN 1 AS a\n", "q.cypher:1: header lacks '// params: ...'"),
    ("// name: q\n// params: none\n// returns: rows\nRETURN 1 AS a\n", "q.cypher:3: returns must read"),
])
def test_malformed_header_fails_at_load_with_path_and_line(tmp_path, text, message):
    write(tmp_path, "area/q.cypher", text)
    with pytest.raises(QueryError, match=message):
        load_registry(tmp_path)


def test_parameter_inside_string_literal_is_not_a_use(tmp_path):
    write(tmp_path, "area/q.cypher", "// name: q\n// params: none\n// returns: one {a}\nRETURN '$x costs' AS a\n")
    assert load_registry(tmp_path)["q"].params == {}


def test_duplicate_names_and_orphan_overrides_are_refused(tmp_path):
    write(tmp_path, "a/q.cypher", GOOD.format(name="q"))
    write(tmp_path, "b/q.cypher", GOOD.format(name="q"))
    with pytest.raises(QueryError, match="b/q.cypher:1: query name 'q' is also used by a/q.cypher"):
        load_registry(tmp_path)
    (tmp_path / "b/q.cypher").unlink()
    write(tmp_path, "a/r.ladybug.cypher", GOOD.format(name="r"))
    with pytest.raises(QueryError, match="a/r.ladybug.cypher:1: engine override without r.cypher"):
        load_registry(tmp_path)
    (tmp_path / "a/r.ladybug.cypher").unlink()
    write(tmp_path, "a/q.ladybug.cypher", GOOD.format(name="q").replace("many {a}", "many {b}"))
    with pytest.raises(QueryError, match="header differs"):
        load_registry(tmp_path)
    (tmp_path / "a/q.ladybug.cypher").unlink()
    write(tmp_path, "a/q.sqlite.cypher", GOOD.format(name="q"))
    with pytest.raises(QueryError, match="unknown engine suffix 'sqlite'"):
        load_registry(tmp_path)


def test_schema_folder_is_not_a_query(tmp_path):
    write(tmp_path, "schema/ladybug.cypher", "CREATE NODE TABLE X(id STRING, PRIMARY KEY(id));\n")
    assert load_registry(tmp_path) == {}


def test_unknown_query_suggests_close_names():
    with pytest.raises(QueryError, match="Unknown query 'outer_fringes'. Did you mean: outer_fringe"):
        get_query("outer_fringes")


def test_call_time_parameter_checks():
    query = get_query("psr_distribution")
    with pytest.raises(QueryError, match="unknown parameter \\$datset"):
        query.check_params({"dataset": "d", "minPrerequisites": 5, "datset": "x"})
    with pytest.raises(QueryError, match="\\$minPrerequisites must be integer, got str '5'"):
        query.check_params({"dataset": "d", "minPrerequisites": "5"})
    with pytest.raises(QueryError, match="must be integer, got bool"):
        query.check_params({"dataset": "d", "minPrerequisites": True})


def test_a_form_of_its_own_for_each_engine(tmp_path):
    """No portable text: one ``// engine:`` file per engine, the same header in each."""
    head = "// name: k\n// params: $x: string\n// returns: many {{a}}\n// engine: {}\n// Says what.\n"
    write(tmp_path, "x/k.ladybug.cypher", head.format("ladybug") + "RETURN offset(id($x)) AS a\n")
    write(tmp_path, "x/k.neo4j.cypher", head.format("neo4j") + "RETURN id($x) AS a\n")
    query = load_registry(tmp_path)["k"]
    assert query.engines == ("ladybug", "neo4j")
    assert (query.text("ladybug"), query.text("neo4j")) == ("RETURN offset(id($x)) AS a", "RETURN id($x) AS a")
    write(tmp_path, "x/k.neo4j.cypher", head.format("neo4j").replace("{a}", "{b}") + "RETURN id($x) AS b\n")
    with pytest.raises(QueryError, match=r"x/k.neo4j.cypher:1: header differs from x/k.ladybug.cypher"):
        load_registry(tmp_path)
    assert registry()["answer_codes_in_range"].engines == ("ladybug", "neo4j")


def test_parameter_text_reads_by_declared_type(tmp_path):
    """``kstp query -p`` and the explorer's form read text through one parser."""
    write(tmp_path, "x/typed.cypher", "// name: typed\n// params: $n: integer, $m: float, $b: boolean, "
          "$ids: list<string>, $rows: list<map>, $opts: map, $s: string\n// returns: many {a}\n// Says what.\n"
          "RETURN [$n, $m, $b, $ids, $rows, $opts, $s] AS a\n")
    query = load_registry(tmp_path)["typed"]
    assert query.parse_param("n", "7") == 7 and query.parse_param("m", "0.25") == 0.25
    assert query.parse_param("b", "TRUE") is True and query.parse_param("b", "false") is False
    assert query.parse_param("ids", " a, b,,c ") == ["a", "b", "c"]
    assert query.parse_param("ids", '["a,1", " b"]') == ["a,1", "b"]
    assert query.parse_param("rows", '[{"k": 1}]') == [{"k": 1}] and query.parse_param("rows", "") == []
    assert query.parse_param("opts", '{"k": [1, 2]}') == {"k": [1, 2]} and query.parse_param("opts", " ") == {}
    assert query.parse_param("s", " as typed ") == " as typed "
    form = {"on": True, "": False}
    assert query.parse_param("b", "on", form) is True and query.parse_param("b", "", form) is False
    for key, text, kind in [("n", "7.5", "integer"), ("m", "x", "float"), ("b", "yes", "boolean"),
                            ("b", "", "boolean"), ("ids", "[not-json", "list<string>"), ("opts", "{", "map")]:
        with pytest.raises(QueryError, match=re.escape(f"typed: parameter ${key} must be {kind}, got {text!r}")):
            query.parse_param(key, text)
    with pytest.raises(QueryError, match="typed: unknown parameter \\$nn; declared: \\$n, \\$m"):
        query.parse_param("nn", "1")


def test_single_engine_query_runs_on_its_engine_only(tmp_path):
    write(tmp_path, "gds/g.neo4j.cypher", GOOD.format(name="g").replace("// Says what.", "// engine: neo4j"))
    query = load_registry(tmp_path)["g"]
    assert (query.engines, query.text("neo4j")) == (("neo4j",), "MATCH (n {id: $x}) RETURN n.id AS a")
    with pytest.raises(QueryError, match="query 'g' runs on neo4j only"):
        query.text("ladybug")
    assert registry()["framework_concepts"].engines == ("ladybug", "neo4j")
    # each shipped area of Neo4j-only queries has a test that runs all of them against a reference
    # (tests/graph/test_gds.py, tests/graph/test_vector_search.py)
    assert {q.area for q in registry().values() if q.engines == ("neo4j",)} == {"gds", "vector"}
    assert [n for n, q in registry().items() if q.engines == ("ladybug",)] == []


@pytest.mark.parametrize("rel, engine, message", [
    ("gds/g.cypher", "neo4j", "gds/g.cypher:4: a query for neo4j alone is named g.neo4j.cypher"),
    ("gds/g.ladybug.cypher", "neo4j", "gds/g.ladybug.cypher:4: a query for neo4j alone is named g.neo4j.cypher"),
    ("gds/g.neo4j.cypher", "sqlite", "gds/g.neo4j.cypher:4: unknown engine 'sqlite'"),
])
def test_single_engine_header_must_match_the_file_name(tmp_path, rel, engine, message):
    write(tmp_path, rel, GOOD.format(name="g").replace("// Says what.", f"// engine: {engine}"))
    with pytest.raises(QueryError, match=message):
        load_registry(tmp_path)
