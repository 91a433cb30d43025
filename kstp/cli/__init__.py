"""The ``kstp`` command line (click)."""

from __future__ import annotations

import sys

__all__ = ["run"]


def run() -> None:
    """The ``kstp`` executable: import the commands, then run them.

    Importing the commands takes a moment (click, rich; each command imports pandas and the
    rest when it runs); a Ctrl-C in it is an interruption like any other, exit 130 with one
    line, not a traceback. Once the commands run, :class:`kstp.cli.output.KstpGroup` handles
    Ctrl-C and SIGTERM.

    Raises
    ------
    SystemExit
        130 on a Ctrl-C before the commands are loaded; otherwise the command's status.
    """
    try:
        from kstp.cli.main import cli
    except KeyboardInterrupt:
        print("Interrupted before the command started; nothing was written.", file=sys.stderr)
        raise SystemExit(130) from None
    cli()
