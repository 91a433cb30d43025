"""``kstp report``: recompute a method's tables and figures from stored responses, without inference."""

from __future__ import annotations

import click

__all__ = ["report"]


@click.group()
def report() -> None:
    """Recompute tables and figures of a finished run from the graph (no inference)."""
