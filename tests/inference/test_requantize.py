"""The local model's Q8_0 copy (kstp/inference/backends/requantize.py): the shipped SmolLM2 GGUF's metadata and
tensors kept, its Q4_1 weights within one Q8_0 step; made once, made again when the source changes, and the
source served when no copy can be written."""

from __future__ import annotations

import logging
import os

import gguf
import numpy as np

from kstp.inference.backends.local import smollm2_path
from kstp.inference.backends.requantize import q8_0_copy

Q4_1, Q8_0, F32 = gguf.GGMLQuantizationType.Q4_1, gguf.GGMLQuantizationType.Q8_0, gguf.GGMLQuantizationType.F32


def _tiny(path, q4_1: bool = True):
    """A GGUF of two tensors (a 4 x 64 weight, Q4_1 or F32, and an F32 norm) and a string-array field."""
    weight = np.linspace(-1.5, 2.5, 256, dtype=np.float32).reshape(4, 64)
    writer = gguf.GGUFWriter(path, arch="llama")
    writer.add_key_value("tokenizer.ggml.tokens", ["<s>", "a", "b"], gguf.GGUFValueType.ARRAY,
                         sub_type=gguf.GGUFValueType.STRING)
    writer.add_key_value("llama.block_count", 1, gguf.GGUFValueType.UINT32)
    writer.add_tensor("blk.0.w", gguf.quants.quantize(weight, Q4_1) if q4_1 else weight,
                      raw_dtype=Q4_1 if q4_1 else F32)
    writer.add_tensor("blk.0.norm", np.ones(64, dtype=np.float32), raw_dtype=F32)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_the_shipped_model_copy_keeps_its_metadata_and_tensors_and_each_weight_within_a_q8_step():
    source = smollm2_path()
    copy = q8_0_copy(source)  # the machine's cache, which every local-model test uses
    assert copy.name == "SmolLM2-135M-Instruct.Q8_0.gguf"
    before, after = gguf.GGUFReader(source), gguf.GGUFReader(copy)
    fields = {name: field.contents() for name, field in before.fields.items() if not name.startswith("GGUF.")}
    assert fields == {name: field.contents() for name, field in after.fields.items() if not name.startswith("GGUF.")}
    assert len(fields["tokenizer.ggml.tokens"]) == 49152 and "chat_template" in " ".join(fields)
    assert [t.name for t in before.tensors] == [t.name for t in after.tensors]
    converted = 0
    for old, new in zip(before.tensors, after.tensors, strict=True):
        assert list(old.shape) == list(new.shape), old.name
        if old.tensor_type != Q4_1:
            assert new.tensor_type == old.tensor_type and np.array_equal(old.data, new.data), old.name
            continue
        assert new.tensor_type == Q8_0
        converted += 1
        if not old.name.startswith(("blk.0.", "blk.29.")):  # one loop wrote them all: the first and last layers read
            continue
        x = gguf.quants.dequantize(old.data, Q4_1).reshape(-1, 32)  # Q8_0's blocks of 32
        y = gguf.quants.dequantize(new.data, Q8_0).reshape(-1, 32)
        step = np.abs(x).max(axis=1, keepdims=True) / 127  # Q8_0's step in each block
        assert (np.abs(x - y) <= step).all(), old.name
    assert converted == 210  # the 30 layers' 7 matrices; token_embd is Q8_0 already, the norms F32


def test_a_copy_is_made_once_and_again_when_its_source_changes(tmp_path):
    source = _tiny(tmp_path / "tiny.Q4_1.gguf")
    first = q8_0_copy(source, tmp_path / "cache")
    assert first.name == "tiny.Q8_0.gguf" and first.parent.parent == tmp_path / "cache"
    made = first.stat().st_mtime_ns
    assert q8_0_copy(source, tmp_path / "cache") == first and first.stat().st_mtime_ns == made
    assert [p.name for p in first.parent.iterdir()] == ["tiny.Q8_0.gguf"]  # no partial file left beside it
    reader = gguf.GGUFReader(first)
    assert [(t.name, t.tensor_type) for t in reader.tensors] == [("blk.0.w", Q8_0), ("blk.0.norm", F32)]
    assert reader.fields["tokenizer.ggml.tokens"].contents() == ["<s>", "a", "b"]
    os.utime(source, ns=(made + 10**9, made + 10**9))  # the source replaced (an upgrade of the package)
    again = q8_0_copy(source, tmp_path / "cache")
    assert again != first and again.name == first.name and again.is_file()


def test_a_model_without_q4_1_weights_is_served_as_it_is(tmp_path):
    source = _tiny(tmp_path / "plain.gguf", q4_1=False)
    assert q8_0_copy(source, tmp_path / "cache") == source
    assert not (tmp_path / "cache").exists()


def test_a_cache_that_cannot_be_written_serves_the_source_and_says_so(tmp_path, caplog):
    source = _tiny(tmp_path / "tiny.Q4_1.gguf")
    (tmp_path / "cache").write_text("a file where the cache folder should be")
    with caplog.at_level(logging.WARNING, logger="kstp.inference.backends.requantize"):
        assert q8_0_copy(source, tmp_path / "cache") == source
    assert "cannot write the Q8_0 copy of tiny.Q4_1.gguf" in caplog.text and "serving the Q4_1 file" in caplog.text
