"""Validation indices of a structure on response patterns, from files or a dataset on the graph.

Reads the patterns (a response file, or a dataset's human learners' complete answers) and
the structure (a structure file read onto the patterns' items, or the dataset's knowledge
space) and computes gamma, VC, DI and DA (:func:`kstp.kst.validation.validate`; kst's
``kvalidate``, kstMatrix's ``kmvalidate``). Higher is better for gamma (agreement with the
surmise relation, -1 to 1); lower is better for VC, DI and DA (violations and distances).
"""

from __future__ import annotations

from pathlib import Path

from kstp.errors import KstpError
from kstp.evaluators.blim import response_data, structure, structure_file
from kstp.graph.store import GraphStore
from kstp.kst.spaces import TooManyStatesError
from kstp.kst.validation import DA_ITEM_LIMIT, validate
from kstp.loaders.kstio import read_kst_file

__all__ = ["validate_structure"]


def validate_structure(store: GraphStore | None, dataset: str | None, structure_path: str | Path | None,
                       responses_path: str | Path | None, limit: int = 20_000) -> dict:
    """Gamma, VC, DI and DA of a structure on response patterns, JSON-ready.

    Parameters
    ----------
    store, dataset
        A dataset on the graph: its human learners' complete answers and, unless
        ``structure_path`` is given, its knowledge space.
    structure_path : path, optional
        A structure file (any format :func:`kstp.evaluators.blim.structure_file` reads),
        its columns read onto the patterns' items.
    responses_path : path, optional
        A response file instead of a dataset (needs ``structure_path``).
    limit : int
        Refuse a structure with more states.

    Returns
    -------
    dict
        ``responses`` (the file's name, or ``dataset D``), ``structure`` (the file's name,
        or ``space``: the dataset's, as ``fit blim`` names them), ``structureSource`` (how it
        was read), ``learners``, ``items``, ``states`` and the indices of
        :meth:`kstp.kst.validation.Validation.as_dict`.

    Raises
    ------
    KstpError
        When neither or both of ``dataset`` and ``responses_path`` are given, a response file
        comes without a structure file, and as the readers.
    """
    if (dataset is None) == (responses_path is None):
        raise KstpError("give a dataset (answers on the graph) or a response file, not both")
    if dataset is not None:
        data = response_data(store, dataset)
        items, matrix, source = data.items, data.matrix, f"dataset {dataset}"
    else:
        if structure_path is None:
            raise KstpError("a response file needs a structure file to validate")
        read = read_kst_file(responses_path, kind="data")
        items, matrix, source = read.items, read.matrix, Path(responses_path).name
    if structure_path is not None:
        states, note = structure_file(structure_path, items, limit)
        name = Path(structure_path).name
    else:
        name = "space"
        try:
            states, note = structure(store, dataset, "space", items, limit), f"the knowledge space of {dataset}"
        except TooManyStatesError:  # its message is the BLIM's
            raise TooManyStatesError(f"the knowledge space of {dataset!r} has more than {limit:,} states; validation "
                                     "compares every pattern with every state: derive question prerequisites "
                                     "first, raise --limit or give a smaller structure with --structure FILE") from None
    result = validate(states, matrix).as_dict()
    if result["DA"] is None:
        result["daNote"] = (f"DA compares with all 2^items patterns: not computed above {DA_ITEM_LIMIT} items"
                            if len(items) > DA_ITEM_LIMIT else "DA is not defined: every one of the 2^items "
                            "patterns is a state, so DA = DI / dpot divides by dpot = 0")
    return {"responses": source, "structure": name, "structureSource": note, "learners": len(matrix),
            "items": len(items), "states": len(states), **result}
