"""Built-in inference backends; importing this package registers them."""

from kstp.inference.backends import local, openai_compat, vllm_offline  # noqa: F401
