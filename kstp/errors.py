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
    "procedure_error",
]


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
