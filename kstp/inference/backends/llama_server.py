"""Child process of :class:`kstp.inference.backends.local.LocalServer`: serve one GGUF.

``python -m kstp.inference.backends.llama_server MODEL PORT THREADS CONTEXT PARALLEL PARENT`` starts
llama.cpp's OpenAI-compatible server (``xllamacpp``) on 127.0.0.1:PORT and serves
until it is terminated or its parent process PARENT is gone (checked every half second,
so that a parent killed with SIGKILL never leaves the server behind).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)  # the parent is gone: stop serving at once


def main(model: str, port: int, threads: int, context: int, parallel: int, parent: int) -> None:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model
    params.n_ctx = context * parallel  # llama.cpp splits the context among the slots
    params.n_parallel = parallel
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.warmup = False
    # No prompt cache: a request that reuses the KV of the slot's previous prompt is computed in other batch
    # shapes than one read whole, and its text then depends on what the slot held before (the order of
    # arrival); llama.cpp's advice for determinism (ggml-org/llama.cpp#2838, #4902). The requests say so too.
    params.cache_prompt = False
    params.cache_ram_mib = 0
    params.verbosity = -1  # llama.cpp logs every request otherwise
    threading.Thread(target=_watch, args=(parent,), daemon=True).start()
    server = xllamacpp.Server(params)  # noqa: F841 (serves while referenced)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
