"""The exceptions kstp raises on purpose.

Every error a user can cause derives from :class:`KstpError`; the CLI turns it into a
one-line message and exit status 1. A message states the condition, names the offending
value and, where one exists, suggests the fix.
"""

__all__ = [
    "KstpError",
    "ConfigError",
    "GraphUnavailableError",
    "DataNotFoundError",
    "InputError",
    "CycleError",
    "UnknownIdError",
    "QueryError",
    "NotAKnowledgeStateError",
    "MissingExtraError",
    "import_extra",
    "procedure_error",
]

import importlib
import importlib.util
from types import ModuleType


class KstpError(Exception):
    """Base class of every error kstp raises for bad input, configuration or data."""


class ConfigError(KstpError):
    """A setting (environment variable, option) has a value kstp cannot use."""


class GraphUnavailableError(KstpError):
    """The graph server went away during a command (after the driver's own retries).

    Writes are idempotent, so re-running the command once the server is back finishes
    the work without doubling anything.
    """


class DataNotFoundError(KstpError):
    """A data folder or file that a command needs does not exist."""


class InputError(KstpError):
    """An input file is malformed: a bad row, a missing column, a non-0/1 response.

    The message cites ``path:line`` of the first offending row.
    """


class CycleError(InputError):
    """A prerequisite relation that must be acyclic contains a cycle or a self-loop.

    Attributes
    ----------
    cycle : list of str
        The ids along the cycle, first id repeated at the end (``["A", "B", "A"]``).
    """

    def __init__(self, message: str, cycle: list[str]):
        super().__init__(message)
        self.cycle = cycle


class UnknownIdError(InputError):
    """A row refers to an id that is neither in the file nor in the graph."""


class QueryError(KstpError):
    """A named query does not exist, or was called with missing or unknown parameters."""


class ReadOnlyError(KstpError):
    """A statement would write to a graph that is only read (``kstp explore``'s ad-hoc Cypher): refused
    before it reaches the engine, which refuses it too (a read-only Ladybug file, a Neo4j read transaction)."""


class NotAKnowledgeStateError(KstpError):
    """An item set is not closed under the prerequisite relation.

    Attributes
    ----------
    violations : dict of str to list of str
        For each item of the set whose prerequisites are not all in the set, the
        missing prerequisites.
    """

    def __init__(self, message: str, violations: dict[str, list[str]]):
        super().__init__(message)
        self.violations = violations


class MissingExtraError(ConfigError):
    """An optional dependency is not installed; the message names the kstp extra that installs it."""


def import_extra(module: str, extra: str, needed_for: str, load: bool = True) -> ModuleType | None:
    """Import the optional ``module`` of the extra ``kstp[extra]`` (``load=False``: only check it is there).

    Parameters
    ----------
    module : str
        Dotted module name, e.g. ``"sentence_transformers"``.
    extra : str
        The ``[project.optional-dependencies]`` key of pyproject.toml that installs it.
    needed_for : str
        What needs it, as the message's subject (``"the local backend"``).

    Returns
    -------
    module or None
        The module; ``None`` when ``load`` is false (it is then found, not imported).

    Raises
    ------
    MissingExtraError
        When the module, or a module it imports, is missing: names that module and
        the ``pip install 'kstp[extra]'`` line.

    Examples
    --------
    >>> import_extra("no_such_module", "models", "BERTScore")
    Traceback (most recent call last):
    ...
    kstp.errors.MissingExtraError: BERTScore needs no_such_module, which is not installed: pip install 'kstp[models]'
    """
    try:
        if not load:
            if importlib.util.find_spec(module) is None:
                raise ModuleNotFoundError(name=module)
            return None
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        raise MissingExtraError(f"{needed_for} needs {exc.name or module}, which is not installed: "
                                f"pip install 'kstp[{extra}]'") from None


def procedure_error(exc: Exception, procedure: str, missing: str) -> KstpError:
    """A failed Neo4j procedure call as one line naming ``procedure``.

    A server that lacks the procedure gives a :class:`ConfigError` that adds ``missing``
    (why it may lack it: a plugin not installed, a version too old); any other failure
    a :class:`KstpError`.

    Examples
    --------
    >>> procedure_error(QueryError("There is no procedure `gds.x`"), "gds.x", "no GDS plugin")
    ConfigError('gds.x is not available on the Neo4j server: no GDS plugin: There is no procedure `gds.x`')
    >>> procedure_error(QueryError("out of memory"), "gds.x", "no GDS plugin")
    KstpError('gds.x failed: out of memory')
    """
    text = " ".join(str(exc).split())
    if any(words in text.lower() for words in ("no procedure", "unknown function", "not registered")):
        return ConfigError(f"{procedure} is not available on the Neo4j server: {missing}: {text[:200]}")
    return KstpError(f"{procedure} failed: {text[:300]}")
