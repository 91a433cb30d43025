"""Grading replies in a process of its own, each reply within a time limit.

One reply can keep a grader busy for ever: a power tower that a symbolic step evaluates
exactly, a pathological pattern. In the run's own process that would stall every
request behind it, and Python cannot stop a computation that does not return to the
interpreter (a big-integer power holds the interpreter until it is done). So
:class:`Grader` runs a grading function in a child process, one reply after another; a
reply that takes longer than the limit is recorded as not gradable, with the reason,
the child is killed, and a fresh one takes the next reply. A grading function that
raises is recorded the same way (its error named) and the run goes on.

A grading function is a module-level function (the child imports it by name)
``function(*item) -> dict`` of Response properties; its items are pickled to the child.
The child imports from the folders the parent does (:func:`_child_env`), so a function of a
module the parent found outside its Python's own folders is found there whatever the working folder.
The child ignores Ctrl-C (the run's process decides what an interruption keeps) and
dies with its parent, even one killed with SIGKILL.
"""

from __future__ import annotations

import atexit
import concurrent.futures
import logging
import os
import pickle
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence

from kstp.errors import KstpError
from kstp.inference.children import die_with_parent

__all__ = ["Grader", "shared_grader", "GRADE_TIMEOUT_S", "NOT_GRADABLE", "not_gradable"]

#: Seconds one reply may take to grade.
GRADE_TIMEOUT_S = 10.0
#: Seconds a fresh child may take to start and import the grading function's module.
START_TIMEOUT_S = 120.0
#: The start of the verdict of a reply that could not be graded.
NOT_GRADABLE = "not gradable"

_log = logging.getLogger("kstp")


def not_gradable(why: str) -> dict:
    """The Response properties of a reply that could not be graded: incorrect, with the reason.

    >>> not_gradable("the grader did not finish within 10 s")
    {'verdict': 'not gradable: the grader did not finish within 10 s', 'correct': False}
    """
    return {"verdict": f"{NOT_GRADABLE}: {why}", "correct": False}


def _child_env() -> dict[str, str]:
    """The environment of a grading child: the parent's, with the folders on the parent's ``sys.path`` that are not
    its Python's own (a project's, the working folder it started in) first on ``PYTHONPATH``.

    ``python -m`` puts the child's working folder on its path, not the parent's path: a grading function of a
    module the parent imported from its project folder would not be found by a child started while the working
    folder is elsewhere (a grading run inside a ``kstp`` command called from another folder).
    """
    own = tuple(os.path.realpath(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix})
    folders = [os.path.realpath(p or os.curdir) for p in sys.path]
    extra = [p for p in dict.fromkeys(folders)
             if os.path.isdir(p) and not any(p == o or p.startswith(o + os.sep) for o in own)]
    current = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([*extra, *([current] if current else [])])}


class Grader:
    """A grading child process, started on first use and again after a reply it could not finish.

    Parameters
    ----------
    timeout : float
        Seconds one reply may take (:data:`GRADE_TIMEOUT_S`).
    """

    def __init__(self, timeout: float = GRADE_TIMEOUT_S):
        self.timeout = timeout
        self._child: subprocess.Popen | None = None
        self._cpu = 0.0  # CPU seconds of the children that are gone
        self._lock = threading.Lock()  # one caller at a time talks to the child
        self._thread: concurrent.futures.ThreadPoolExecutor | None = None

    def _start(self) -> subprocess.Popen:
        if self._child is None or self._child.poll() is not None:
            self._child = subprocess.Popen(
                [sys.executable, "-m", "kstp.inference.grader"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                bufsize=0, env=_child_env(), preexec_fn=die_with_parent if sys.platform.startswith("linux") else None)
        return self._child

    def _kill(self) -> None:
        if self._child is not None:
            self._cpu += self._child_cpu()
            self._child.kill()
            self._child.wait()
            for stream in (self._child.stdin, self._child.stdout):
                stream.close()
            self._child = None

    def _child_cpu(self) -> float:
        try:
            fields = open(f"/proc/{self._child.pid}/stat").read().rsplit(")", 1)[1].split()
        except (OSError, AttributeError):
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def cpu_seconds(self) -> float:
        """CPU seconds the grading children have used so far (Linux; 0 elsewhere)."""
        return self._cpu + (self._child_cpu() if self._child is not None else 0.0)

    def _receive(self, child: subprocess.Popen, deadline: float) -> tuple:
        """The child's next message; ``("late",)`` when ``deadline`` (monotonic) passes first, ``("died",)``."""
        ready, _, _ = select.select([child.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            return ("late",)
        try:
            return pickle.loads(_read_frame(child.stdout.fileno()))
        except (EOFError, pickle.UnpicklingError):
            return ("died",)

    def submit(self, function: Callable[..., dict], items: Sequence[tuple]) -> concurrent.futures.Future:
        """:meth:`grade` in the grader's own thread, while the caller goes on; the future holds its result.

        The thread lives as long as the grader: the kernel's "parent died" signal, which
        stops a child stuck in a reply when kstp is killed, follows the thread that
        started the child, so a thread that ended would take its child with it.
        """
        if self._thread is None:
            self._thread = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="kstp-grading")
        return self._thread.submit(self.grade, function, items)

    def grade(self, function: Callable[..., dict], items: Sequence[tuple]) -> list[dict]:
        """``function(*item)`` for every item, in the child: one dict per item, in order.

        An item that takes longer than :attr:`timeout` gets :func:`not_gradable`
        ("the grader did not finish within N s"), one that kills the child "the grader
        crashed", one whose function raised the error's name and text; a fresh child
        takes the items after it.

        Raises
        ------
        KstpError
            When a child cannot start (or import ``function``'s module) within
            :data:`START_TIMEOUT_S`.
        """
        with self._lock:
            try:
                return self._grade(function, items)
            except BaseException:  # Ctrl-C mid-conversation: the next call starts with a fresh child
                self._kill()
                raise

    def _grade(self, function: Callable[..., dict], items: Sequence[tuple]) -> list[dict]:
        results: list[dict] = []
        while len(results) < len(items):
            child = self._start()
            try:
                _write_frame(child.stdin, pickle.dumps((function, list(items[len(results):])),
                                                       protocol=pickle.HIGHEST_PROTOCOL))
            except BrokenPipeError:
                pass  # it died at its start: said below
            deadline, begun, message = time.monotonic() + START_TIMEOUT_S, False, ("died",)
            while len(results) < len(items):
                message = self._receive(child, deadline)
                if message[0] == "begin":
                    deadline, begun = time.monotonic() + self.timeout, True
                elif message[0] == "ok":
                    results.append(message[2])
                elif message[0] == "error":
                    _log.warning("grading a reply failed: %s", message[2])
                    results.append(not_gradable(f"the grader failed ({message[2]})"))
                else:
                    break
            else:
                return results
            self._kill()
            if not begun:
                why = f"gave no sign within {START_TIMEOUT_S:g} s" if message[0] == "late" else "exited"
                raise KstpError(f"the grading process ({sys.executable} -m kstp.inference.grader) {why} before "
                                "grading anything; its errors are above")
            results.append(not_gradable(f"the grader did not finish within {self.timeout:g} s" if message[0] == "late"
                                        else "the grader crashed on it"))
        return results

    def close(self) -> None:
        """Stop the child (a later :meth:`grade` starts another) and the grader's thread."""
        if self._thread is not None:
            self._thread.shutdown(wait=False, cancel_futures=True)
            self._thread = None
        if self._child is not None and self._child.poll() is None:
            try:
                self._child.stdin.close()  # the child's end of input: it exits
                self._child.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._kill()


_shared: Grader | None = None


def shared_grader(timeout: float = GRADE_TIMEOUT_S) -> Grader:
    """The process's grader (one child for every run of the process), with ``timeout`` per reply."""
    global _shared
    if _shared is None:
        _shared = Grader(timeout)
        atexit.register(_shared.close)
    _shared.timeout = timeout
    return _shared


def _write_frame(stream, data: bytes) -> None:
    """One message: its length (8 bytes, big-endian), then its bytes."""
    stream.write(len(data).to_bytes(8, "big") + data)
    stream.flush()


def _read_frame(fd: int) -> bytes:
    """One message written by :func:`_write_frame`, read from the file descriptor without buffering.

    Raises
    ------
    EOFError
        When the other end closed before a whole message came.
    """
    size = int.from_bytes(_read_exactly(fd, 8), "big")
    return _read_exactly(fd, size)


def _read_exactly(fd: int, size: int) -> bytes:
    parts, left = [], size
    while left:
        part = os.read(fd, min(left, 1 << 20))
        if not part:
            raise EOFError
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def _serve() -> None:
    """The child: read ``(function, items)``, answer ``begin``/``ok``/``error`` per item, until input ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # what grading code prints goes to stderr, never into the answers
    sys.stdout = sys.stderr
    source = sys.stdin.fileno()
    while True:
        try:
            function, items = pickle.loads(_read_frame(source))
        except EOFError:
            return
        for index, item in enumerate(items):
            _write_frame(out, pickle.dumps(("begin", index, None)))
            try:
                message = ("ok", index, function(*item))
            except Exception as exc:  # recorded with the reply, and the run goes on
                message = ("error", index, f"{type(exc).__name__}: {exc}"[:500])
            _write_frame(out, pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL))


if __name__ == "__main__":
    _serve()
