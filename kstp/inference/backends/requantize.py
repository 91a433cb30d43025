"""A GGUF's Q4_1 weights requantized to Q8_0, written once per machine: the local model's faster copy.

llama.cpp's CPU build in ``xllamacpp`` (AVX2) multiplies Q4_1 weights through its generic dot
products, and Q8_0 weights through its repacked matrix kernels. On one core of kstp's machines
SmolLM2-135M-Instruct reads 126 prompt tokens/s at Q4_1 and 179 at Q8_0 (2,661-token prompt;
171 -> 283 at 413 tokens) and writes 83 -> 91 tokens/s. Each Q4_1 value ``d * q + m`` is
requantized in its block of 32 as Q8_0 does (``d8 = max|x| / 127``, the value ``d8 * round(x / d8)``):
within one Q8_0 step of the Q4_1 weight. Every other tensor and every metadata field is copied as it is.
The copy's replies are not the Q4_1 file's word for word; the run records which file served them.

Assumes a little-endian GGUF (as llama.cpp writes them).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

from kstp.errors import import_extra

__all__ = ["q8_0_copy", "cache_folder", "converted_name"]

log = logging.getLogger(__name__)

#: Bumped when the conversion changes, so that a copy from an older kstp is made again.
VERSION = 1


def cache_folder() -> Path:
    """kstp's folder for converted models: ``$XDG_CACHE_HOME/kstp/models`` (default ``~/.cache/kstp/models``)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "kstp" / "models"


def converted_name(source: Path) -> str:
    """The copy's file name: ``.Q4_1`` in the source's name read as ``.Q8_0``.

    >>> converted_name(Path("SmolLM2-135M-Instruct.Q4_1.gguf"))
    'SmolLM2-135M-Instruct.Q8_0.gguf'
    >>> converted_name(Path("model.gguf"))
    'model.Q8_0.gguf'
    """
    stem = source.stem
    return (stem.replace(".Q4_1", ".Q8_0") if ".Q4_1" in stem else f"{stem}.Q8_0") + ".gguf"


def q8_0_copy(source: Path, folder: Path | None = None) -> Path:
    """The path of ``source`` with its Q4_1 tensors at Q8_0, converted on first use (about 4 s for 135 M weights).

    Parameters
    ----------
    source : pathlib.Path
        A GGUF file.
    folder : pathlib.Path, optional
        Where copies are kept (default :func:`cache_folder`), each under a subfolder named by the
        source's path, size and modification time, so that a changed source is converted again.

    Returns
    -------
    pathlib.Path
        The copy; ``source`` itself when it holds no Q4_1 tensor, or when the copy cannot be
        written (a read-only or full cache: a warning says so, and the source is served, slower).

    Notes
    -----
    The copy is written to a temporary file beside its place and renamed in, so two processes
    converting at once, or one killed midway, never leave a partial copy under the final name.

    Raises
    ------
    MissingExtraError
        When ``gguf`` (extra ``local``) is not installed.
    """
    source = Path(source)
    stat = source.stat()
    key = hashlib.sha256(f"{source.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}\0{VERSION}".encode()).hexdigest()
    target = (folder or cache_folder()) / key[:16] / converted_name(source)
    if target.is_file():
        return target  # every start but the first: gguf is not imported (36 ms)
    gguf = import_extra("gguf", "local", "the local model's Q8_0 copy")
    reader = gguf.GGUFReader(source)
    if not any(t.tensor_type == gguf.GGMLQuantizationType.Q4_1 for t in reader.tensors):
        return source
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, partial = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent)
        os.close(handle)
    except OSError as exc:
        log.warning("cannot write the Q8_0 copy of %s under %s (%s): serving the Q4_1 file, slower", source.name,
                    target.parent, exc.strerror)
        return source
    log.info("serving %s from a copy at Q8_0 (made once, a few seconds): %s", source.name, target)
    try:
        _write_q8_0(reader, Path(partial))
        os.replace(partial, target)
    except OSError as exc:
        log.warning("cannot write the Q8_0 copy of %s to %s (%s): serving the Q4_1 file, slower", source.name,
                    target, exc.strerror)
        return source
    finally:
        Path(partial).unlink(missing_ok=True)
    return target


def _write_q8_0(reader, path: Path) -> None:
    import gguf

    logging.getLogger("gguf").setLevel(logging.WARNING)  # it logs each file it writes
    architecture = reader.fields["general.architecture"].contents()
    writer = gguf.GGUFWriter(path, arch=architecture)
    for field in reader.fields.values():
        if field.name.startswith("GGUF.") or field.name == "general.architecture":  # the header; written by the writer
            continue
        if field.name == "general.alignment":
            writer.add_custom_alignment(field.contents())
            continue
        vtype = field.types[0]
        sub = field.types[1] if vtype == gguf.GGUFValueType.ARRAY and len(field.types) == 2 else None
        writer.add_key_value(field.name, field.contents(), vtype, sub_type=sub)
    for tensor in reader.tensors:
        if tensor.tensor_type == gguf.GGMLQuantizationType.Q4_1:
            values = gguf.quants.dequantize(tensor.data, tensor.tensor_type)
            writer.add_tensor(tensor.name, gguf.quants.quantize(values, gguf.GGMLQuantizationType.Q8_0),
                              raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        else:
            writer.add_tensor(tensor.name, tensor.data, raw_dtype=tensor.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
