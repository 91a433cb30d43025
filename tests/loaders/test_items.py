"""Item ingest: skill-map CSVs, math2015, the annotation map, JSONL, and refusals."""

from __future__ import annotations

import pytest

from kstp.errors import InputError, UnknownIdError
from kstp.loaders import items
from kstp.loaders.standards import load_standards


def test_probability_items_with_skill_map(store, data_root):
    folder = data_root / "responses/probability_pks"
    item_set = items.read_items_csv(folder / "items.csv", "probability_pks", folder / "qmatrix.csv",
                                    folder / "skills.csv")
    report = items.write_items(store, item_set)
    assert report.written["Question"].created == 12 and report.written["ASSESSES"].created == 22
    assert report.written["Concept"].created == 4
    first = store.run("dataset_questions", {"dataset": "probability_pks"})[0]
    assert first["questionId"] == "probability_pks:b101" and first["answer"] == "0.40"
    assert first["text"].startswith("A box contains 30 marbles")
    links = store.frame("question_concepts", {"dataset": "probability_pks"})
    assert links[links.questionId == "probability_pks:b111"]["conceptId"].tolist() == \
        ["probability_pks:cp", "probability_pks:id", "probability_pks:pb"]
    again = items.write_items(store, item_set)
    assert all(r.created == 0 and r.updated == 0 for r in again.written.values())


def test_frcsub_items_use_expression_and_computed_answer(store, data_root):
    folder = data_root / "responses/frcsub"
    items.write_items(store, items.read_items_csv(folder / "items.csv", "frcsub", folder / "qmatrix.csv",
                                                  folder / "skills.csv"))
    first = store.run("dataset_questions", {"dataset": "frcsub"})[0]
    assert (first["text"], first["answer"]) == ("5/3 - 3/4", "11/12")
    assert len(store.frame("question_concepts", {"dataset": "frcsub"})) == 56


def test_annotation_map_figures_match_paper(store, data_root):
    load_standards(store, data_root / "standards/nys_concepts.json")
    item_set = items.read_concept_map(data_root / "llm_kst/xes_skills_nys.json", "xes", "ccss",
                                      items.framework_concepts(store, "ccss"))
    items.write_items(store, item_set)
    row = store.run("datasets")[0]
    assert (row["questions"], row["questionsWithConcepts"], row["assesses"]) == (4118, 3296, 4394)
    assert round(row["assesses"] / row["questions"], 2) == 1.07
    assert item_set.notes["questions without concepts"] == 822


def test_annotation_map_unknown_concept_names_question(store, tmp_path):
    path = tmp_path / "map.json"
    path.write_text('{"q1": [1], "q2": [7]}')
    with pytest.raises(UnknownIdError, match=r"unknown concept '7' at .*map.json: key 'q2'; framework 'f' has no"):
        items.read_concept_map(path, "d", "f", {"1"})
    path.write_text('{"q1": 3}')
    with pytest.raises(InputError, match="expected an object mapping question ids to lists"):
        items.read_concept_map(path, "d", "f", {"1"})


def test_math2015_folder(store, data_root):
    item_set = items.read_math2015(data_root / "responses/math2015/Math1", "math1")
    items.write_items(store, item_set)
    assert len(item_set.questions) == 20 and len(item_set.concepts) == 11
    assert item_set.concepts.iloc[0]["description"] == "Set"
    assert item_set.questions.iloc[0]["answerType"] == "Obj (full score 4)"
    assert len(store.frame("question_concepts", {"dataset": "math1"})) == int(
        sum(int(v) for line in (data_root / "responses/math2015/Math1/q.txt").read_text().split() for v in line))


@pytest.mark.parametrize("qmatrix, error, message", [
    ("item_id,s1\nx1,2\n", InputError, "q.csv:2 column 's1': Q-matrix entries must be 0 or 1, found '2'"),
    ("item_id,s1\nx9,1\n", UnknownIdError, "unknown item 'x9' at .*q.csv:2; it is not in i.csv"),
])
def test_qmatrix_refusals_are_located(tmp_path, qmatrix, error, message):
    (tmp_path / "i.csv").write_text("item_id,text\nx1,one\n")
    (tmp_path / "q.csv").write_text(qmatrix)
    with pytest.raises(error, match=message):
        items.read_items_csv(tmp_path / "i.csv", "d", tmp_path / "q.csv")


def test_skills_file_must_name_every_qmatrix_column(tmp_path):
    (tmp_path / "i.csv").write_text("item_id,text\nx1,one\n")
    (tmp_path / "q.csv").write_text("item_id,s1,s2\nx1,1,0\n")
    (tmp_path / "s.csv").write_text("skill,description\ns1,first\n")
    with pytest.raises(UnknownIdError, match="unknown skill 's2' at .*q.csv:1; it is not in s.csv"):
        items.read_items_csv(tmp_path / "i.csv", "d", tmp_path / "q.csv", tmp_path / "s.csv")


def test_items_csv_repeated_id_and_missing_id_column(tmp_path):
    (tmp_path / "i.csv").write_text("item_id,text\nx1,one\nx1,two\n")
    with pytest.raises(InputError, match="i.csv:3: item id 'x1' repeats line 2"):
        items.read_items_csv(tmp_path / "i.csv", "d")
    (tmp_path / "i.csv").write_text("name,text\nx1,one\n")
    with pytest.raises(InputError, match="none of the columns item_id, id, question_id found"):
        items.read_items_csv(tmp_path / "i.csv", "d")


def test_jsonl_items(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "a", "text": "1+1", "answer": 2, "type": "number", "concepts": ["c1"]}\n\n'
                    '{"id": "b", "text": "2+2"}\n')
    item_set = items.read_items_jsonl(path, "d", "f", {"c1"})
    rows = item_set.questions[["id", "answer", "answerType"]]
    assert rows.iloc[0].tolist() == ["d:a", "2", "number"]
    assert rows.iloc[1]["id"] == "d:b" and rows.iloc[1][["answer", "answerType"]].isna().all()
    assert item_set.assesses[["from_id", "to_id"]].values.tolist() == [["d:a", "f:c1"]]
    path.write_text('{"id": "a"}\n{"id": "a"}\n')
    with pytest.raises(InputError, match="items.jsonl:2: item id 'a' repeats line 1"):
        items.read_items_jsonl(path, "d", None, set())
    path.write_text('{"id": "a", "concepts": ["zz"]}\n')
    with pytest.raises(UnknownIdError, match="unknown concept 'zz' at .*items.jsonl:1"):
        items.read_items_jsonl(path, "d", "f", {"c1"})
    path.write_text('{"id": "a",\n')
    with pytest.raises(InputError, match="items.jsonl:1: invalid JSON"):
        items.read_items_jsonl(path, "d", None, set())


def test_jsonl_items_without_ids_are_numbered_from_one(tmp_path):
    """Issue 43: the help said items without ids are numbered from 1, and such a file was refused."""
    path = tmp_path / "items.jsonl"
    path.write_text('{"text": "1+1", "answer": 2}\n\n{"text": "2+2", "answer": 4}\n')
    rows = items.read_items_jsonl(path, "d", None, set()).questions
    assert rows[["id", "text", "answer"]].values.tolist() == [["d:1", "1+1", "2"], ["d:2", "2+2", "4"]]
    path.write_text('{"id": "2", "text": "x"}\n{"text": "y"}\n')  # the number 2 is taken: refused, not merged
    with pytest.raises(InputError, match="items.jsonl:2: item id '2' repeats line 1"):
        items.read_items_jsonl(path, "d", None, set())
    path.write_text('{"id": "", "text": "x"}\n')
    with pytest.raises(InputError, match="items.jsonl:1: an item's \"id\" is empty"):
        items.read_items_jsonl(path, "d", None, set())


def test_jsonl_items_read_the_text_under_the_csv_text_names(tmp_path):
    """A new user's file kept the text under "question" and was told the item "needs its problem text"; the
    JSON-lines loader reads the names CSV items take, and an item with none of them says which it read."""
    path = tmp_path / "q.jsonl"
    path.write_text('{"id": "a", "question": "Which is prime?", "options": {"A": "4", "B": "7"}, "answer": "B"}\n'
                    '{"id": "b", "problem": "1 + 1"}\n')
    rows = items.read_items_jsonl(path, "d", None, set()).questions[["id", "text", "answer", "answerType"]]
    assert rows.values.tolist()[0] == ["d:a", "Which is prime?\nA. 4\nB. 7", "B", "choice"]
    assert rows.values.tolist()[1][:2] == ["d:b", "1 + 1"]
    path.write_text('{"id": "a", "stem": "Which is prime?", "options": {"A": "4", "B": "7"}}\n')
    with pytest.raises(InputError, match='q.jsonl:1: a multiple-choice item needs its problem text, read from '
                                         '"text" or "question" or "expression" or "problem"$'):
        items.read_items_jsonl(path, "d", None, set())


def test_corrected_qmatrix_replaces_concept_links(store, tmp_path):
    (tmp_path / "i.csv").write_text("item_id,text\nx1,one\nx2,two\n")
    (tmp_path / "q.csv").write_text("item_id,s1,s2\nx1,1,1\nx2,0,1\n")
    items.write_items(store, items.read_items_csv(tmp_path / "i.csv", "d", tmp_path / "q.csv"))
    (tmp_path / "q.csv").write_text("item_id,s1,s2\nx1,0,1\nx2,0,1\n")
    report = items.write_items(store, items.read_items_csv(tmp_path / "i.csv", "d", tmp_path / "q.csv"))
    assert report.notes["concept links removed (re-derive question prerequisites)"] == 1
    assert store.frame("question_concepts", {"dataset": "d"}).values.tolist() == [["d:x1", "d:s2"], ["d:x2", "d:s2"]]
    items.write_items(store, items.read_items_csv(tmp_path / "i.csv", "d"))  # no Q-matrix: links stay
    assert len(store.frame("question_concepts", {"dataset": "d"})) == 2


def test_repeated_qmatrix_row_is_refused(tmp_path):
    (tmp_path / "i.csv").write_text("item_id,text\nx1,one\n")
    (tmp_path / "q.csv").write_text("item_id,s1,s2\nx1,1,0\nx1,1,1\n")
    with pytest.raises(InputError, match="q.csv:3: item 'x1' repeats line 2"):
        items.read_items_csv(tmp_path / "i.csv", "d", tmp_path / "q.csv")


def test_items_csv_short_row_is_refused_with_its_line(tmp_path):
    (tmp_path / "i.csv").write_text("item_id,text,answer\nx1,one,1\nx2,two\n")
    with pytest.raises(InputError, match="i.csv:3: 2 cells but the header has 3; give every row one cell per column"):
        items.read_items_csv(tmp_path / "i.csv", "d")


def test_item_ids_are_nfc_normalised(tmp_path):
    (tmp_path / "i.jsonl").write_text('{"id": "e\\u0301t\\u00e9", "text": "t", "answer": "1"}\n', encoding="utf-8")
    item_set = items.read_items_jsonl(tmp_path / "i.jsonl", "d", None, set())
    assert item_set.questions[["id", "localId"]].values.tolist() == [["d:\u00e9t\u00e9", "\u00e9t\u00e9"]]


def test_items_jsonl_verified_flag_is_read_and_checked(tmp_path):
    """"verified" marks the concept links a person checked (paper 1, XES-verified); absent reads false,
    and a file that never says leaves the flag unset."""
    path = tmp_path / "v.jsonl"
    path.write_text('{"id": "a", "concepts": ["X", "Y"], "verified": true}\n{"id": "b", "concepts": ["X"]}\n')
    links = items.read_items_jsonl(path, "v", "f", {"X", "Y"}).assesses
    assert links[["from_id", "to_id", "verified"]].values.tolist() == [["v:a", "f:X", True], ["v:a", "f:Y", True],
                                                                       ["v:b", "f:X", False]]
    path.write_text('{"id": "a", "concepts": ["X"]}\n')
    assert "verified" not in items.read_items_jsonl(path, "v", "f", {"X"}).assesses
    path.write_text('{"id": "a", "concepts": ["X"]}\n{"id": "b", "concepts": ["X"], "verified": "yes"}\n')
    with pytest.raises(InputError, match=r"v.jsonl:2: \"verified\" must be true or false, not 'yes'"):
        items.read_items_jsonl(path, "v", "f", {"X"})


def test_a_question_text_of_one_megabyte_is_ingested_whole(store, tmp_path):
    """Past the csv module's default cell limit (131,072 characters), which ended in a _csv.Error."""
    text = "a long question." * 65_536  # 1,048,576 characters
    path = tmp_path / "items.csv"
    path.write_text(f'id,text,answer\nq1,"{text}",4\nq2,short,5\n')
    items.write_items(store, items.read_items_csv(path, "big"))
    stored = store.frame("dataset_questions", {"dataset": "big"}).set_index("localId")["text"]
    assert len(stored["q1"]) == 1_048_576 and stored["q1"] == text and stored["q2"] == "short"


def test_items_jsonl_options_become_option_lines_of_the_text(tmp_path):
    """A multiple-choice item's "options" (letter -> text, the release's XES3G5M layout) are written under its
    problem as the A. lines the grader and Prompt 3 read; its type is "choice" unless given."""
    path = tmp_path / "m.jsonl"
    path.write_text('{"id": "a", "text": "Which is prime?", "options": {"A": 4, "B": "7", "C": "9"}, "answer": "B"}\n'
                    '{"id": "b", "text": "What is 2 + 2?", "answer": 4, "type": "number"}\n'
                    '{"id": "c", "text": "Odd or even: 3?", "options": {"A": "odd", "B": "even"}, "type": "mcq"}\n')
    rows = items.read_items_jsonl(path, "m", None, set()).questions[["text", "answer", "answerType"]]
    assert rows.values.tolist() == [["Which is prime?\nA. 4\nB. 7\nC. 9", "B", "choice"],
                                    ["What is 2 + 2?", "4", "number"],
                                    ["Odd or even: 3?\nA. odd\nB. even", None, "mcq"]]


@pytest.mark.parametrize("text", [
    "Which must be true?\nI. f is continuous\nII. f is bounded",  # MMLU's statement lists
    "Which must be true?\nI. f is continuous\nII. f is bounded\nIII. f is differentiable",
    "Consider:\nA. a set of reals\nC. its closure",  # no run A, B
])
def test_mcq_text_statement_lists_are_question_text(text):
    """Roman numerals ("I.") and lone letters are no run of options from A: the text is kept, options under it
    (the ``I.`` line once refused every MMLU question with a statement list)."""
    assert items.mcq_text(text, {"A": "I only", "B": "II only"}, "B", "f:1") == text + "\nA. I only\nB. II only"


@pytest.mark.parametrize(("options", "rest", "message"), [
    ('["4", "7"]', '', r'm.jsonl:2: "options" must be an object mapping the letters A, B, ... to option texts '
                       r'\(e.g. \{"A": "4", "B": "7"\}\), not list \["4", "7"\]'),
    ('{"A": "4", "C": "7"}', '', r'm.jsonl:2: "options" must name the letters A, B, ... in order, two or more '
                                 r'\(at most J\), found A, C'),
    ('{"A": "4"}', '', r'm.jsonl:2: "options" must name the letters A, B, ... in order, two or more'),
    ('{"A": "4", "B": ""}', '', r'm.jsonl:2: option B must be one line of text, not ""'),
    ('{"A": "4", "B": "7\\nor 8"}', '', r'm.jsonl:2: option B must be one line of text'),
    ('{"A": "4", "B": "7"}', ', "answer": "7"', r'm.jsonl:2: the answer of a multiple-choice item must be one of its '
                                                r'letters A, B, not "7"'),
    ('{"A": "4", "B": "7"}', ', "text": "Pick: (A) 4 (B) 7"', r'm.jsonl:2: the text already lists options'),
    ('{"A": "4", "B": "7"}', ', "text": "Pick one.\\nA. 4\\nB. 7"', r'm.jsonl:2: the text already lists options'),
    ('{"A": "4", "B": "7"}', ', "text": "Pick one.\\nI. x\\nA. 4\\nB. 7"', r'm.jsonl:2: the text already lists'),
])
def test_items_jsonl_bad_options_are_refused_with_their_line(tmp_path, options, rest, message):
    path = tmp_path / "m.jsonl"
    item = '{"id": "b", "text": "Which is prime?", "options": ' + options + rest + '}'
    if '"text": "Pick' in rest:
        item = item.replace('"text": "Which is prime?", ', "")
    path.write_text('{"id": "a", "text": "1 + 1?", "answer": 2}\n' + item + "\n")
    with pytest.raises(InputError, match=message):
        items.read_items_jsonl(path, "m", None, set())
