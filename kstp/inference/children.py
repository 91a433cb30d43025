"""Child processes that never outlive kstp: the local llama.cpp server, the grader."""

from __future__ import annotations

import ctypes
import ctypes.util
import signal

__all__ = ["die_with_parent"]


def die_with_parent() -> None:
    """In a child before exec: ask the kernel for SIGTERM when the parent dies (Linux only).

    The kernel does it even when the parent is killed with SIGKILL and the child is
    busy in code that never returns to the interpreter.
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass  # not Linux: the child's own watch of its parent stops it
