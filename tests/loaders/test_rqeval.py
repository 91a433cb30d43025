"""RQEval datasets as Questions with answer types; perturbations as VARIANT_OF variants."""

from __future__ import annotations

import json

import pytest

from kstp.errors import InputError
from kstp.loaders.rqeval import read_rqeval, write_rqeval


@pytest.mark.parametrize("name, items, variants, types", [
    ("gsm8k", 250, 2 * 142 + 88 + 3 * 19, {"number": 250}),
    ("mmlu", 225, 3 * 225, {"choice": 225}),
    ("strategyqa", 250, 183 + 2 * 49 + 3, {"yesno": 250}),
    ("synthetic", 250, 3 * 142 + 2 * 33, {"number": 100 + 25 + 25, "yesno": 25 + 38, "text": 19 + 18}),
])
def test_real_datasets_load_with_types_and_variants(store, data_root, name, items, variants, types):
    data = read_rqeval(data_root / f"rqeval/dataset_{name}.json")
    assert len(data.items.questions) == items and len(data.variants) == len(data.links) == variants
    assert data.items.questions["answerType"].value_counts().to_dict() == types
    report = write_rqeval(store, data)
    assert report.written["Question"].created == items + variants
    assert report.written["VARIANT_OF"].created == variants
    again = write_rqeval(store, data)
    assert again.written["Question"].created == 0 and again.written["VARIANT_OF"].created == 0
    # variants are probes, not items of the dataset's domain
    assert len(store.frame("dataset_questions", {"dataset": name})) == items
    rows = store.frame("rqeval_items", {"dataset": name})
    assert rows["variantId"].notna().sum() == variants


def test_variant_ids_keep_their_slot_and_empty_slots_are_skipped(tmp_path, store):
    path = tmp_path / "dataset_toy.json"
    path.write_text(json.dumps([
        {"id": "a", "question": "Is 7 prime?", "answer": "yes", "perturbations": ["", "Seven: prime?", "  "]},
        {"id": "b", "question": "3 x 4?", "answer": 12},
    ]))
    data = read_rqeval(path)
    assert data.items.questions[["id", "answer", "answerType"]].values.tolist() == [
        ["toy:a", "yes", "yesno"], ["toy:b", "12", "number"]]
    assert data.links.values.tolist() == [["toy:a~p2", "toy:a", "perturbation"]]
    assert data.variants[["id", "text", "answer", "answerType"]].values.tolist() == [
        ["toy:a~p2", "Seven: prime?", "yes", "yesno"]]
    assert data.items.notes == {"perturbations": 1, "items without perturbations": 1}
    write_rqeval(store, data)
    rows = store.frame("rqeval_items", {"dataset": "toy"})
    assert rows[["questionId", "variantId"]].astype(object).where(rows.notna(), None).values.tolist() == [
        ["toy:a", "toy:a~p2"], ["toy:b", None]]


@pytest.mark.parametrize("content, message", [
    ("{", "invalid JSON"),
    ('{"id": "a"}', "expected a JSON list of item objects"),
    ('[{"id": "a", "question": "q"}]', "item 1 has no 'answer'"),
    ('[{"id": "a", "question": "q", "answer": "1"}, {"id": "a", "question": "r", "answer": "2"}]',
     "item 2: id 'a' repeats item 1"),
    ('[{"id": "a", "question": "q", "answer": "1", "perturbations": [3]}]', "perturbations must be a list of strings"),
])
def test_malformed_files_are_refused_with_the_item(tmp_path, content, message):
    path = tmp_path / "dataset_bad.json"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        read_rqeval(path)
