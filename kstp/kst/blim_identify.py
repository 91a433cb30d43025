"""Which BLIM parameters a knowledge structure can identify: the rank of the Jacobian of the
map from parameters to response-pattern probabilities (pks's ``jacobian`` and ``blimit``).

A BLIM's parameters are the state probabilities pi_K (all but the last state's, implied
by the sum), the careless-error rates beta_q and the lucky-guess rates eta_q; what data can
ever show is the probability P(R) of each of the 2^items response patterns. A parameter is
locally identifiable when no direction in the parameter space that moves it leaves every
P(R) unchanged: when the Jacobian J = dP(R)/d(pi, beta, eta) has no null vector with a
component on it. Where a structure is forward-graded in q (K + {q} is a state for every
state K), eta_q trades off with the state probabilities; where it is backward-graded in q
(K - {q} is a state for every state K), beta_q does (Heller 2017). A standard error of such
a parameter is not a statement about the data, whatever its size.

Identifiability is a property of the structure and of the constraints (fixed and equal
rates), not of the estimates: the rank is taken at a generic point (seeded random rates
in (0.05, 0.35) and state probabilities, as pks's ``blimit`` draws them), where a fit at
the boundary (a state probability 0) cannot lower it by accident. Assumes complete 0/1
patterns; the check lists all 2^items patterns, so it is bounded (:data:`MAX_CELLS`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kstp.kst.blim import _groups, _log_p_r_given_k

__all__ = ["MAX_CELLS", "Identifiability", "all_patterns", "jacobian", "identifiability"]

#: The check visits patterns x states cells (2^items x states): above this it is not run.
MAX_CELLS = 2**27
_RANK_TOL = 1e-9  # eigenvalues of the column-normalised J'J below this share of the largest are null
_NULL_TOL = 1e-6  # a parameter whose squared share of the null space exceeds this is not identified
_CHUNK = 1 << 14  # patterns per block of J


def all_patterns(n_items: int) -> np.ndarray:
    """Every response pattern over ``n_items`` items, the first item changing fastest (R's ``expand.grid``).

    >>> all_patterns(2).tolist()
    [[0, 0], [1, 0], [0, 1], [1, 1]]
    """
    codes = np.arange(2**n_items, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n_items)) & 1).astype(np.uint8)


def jacobian(states, beta, eta, p_k, patterns=None) -> np.ndarray:
    """dP(R) / d(pi_1 .. pi_{S-1}, beta_1 .. beta_n, eta_1 .. eta_n), one row per pattern.

    Parameters
    ----------
    states : ndarray of shape (S, n), 0/1
        The structure; the last state's probability is 1 minus the others'.
    beta, eta : ndarray of shape (n,)
        Careless-error and lucky-guess rates in (0, 1).
    p_k : ndarray of shape (S,)
        State probabilities.
    patterns : ndarray of shape (m, n), optional
        The patterns R (default :func:`all_patterns`).

    Returns
    -------
    ndarray of shape (m, S - 1 + 2 n)
        Columns in pks's order (``pi_*``, ``beta_*``, ``eta_*``); pks's ``jacobian``
        gives the same rows but the last (1...1) when the last state is Q, as it assumes.

    Examples
    --------
    One item, states {} and {a}: P(1) = pi_{} eta + (1 - pi_{}) (1 - beta).

    >>> jacobian(np.array([[0], [1]]), np.array([0.1]), np.array([0.2]), np.array([0.4, 0.6])).round(3).tolist()
    [[0.7, 0.6, -0.4], [-0.7, -0.6, 0.4]]
    """
    k = np.asarray(states, dtype=np.float64)
    beta, eta, p_k = (np.asarray(x, dtype=np.float64) for x in (beta, eta, p_k))
    r = all_patterns(k.shape[1]) if patterns is None else np.asarray(patterns)
    r = r.astype(np.float64)
    prk = np.exp(_log_p_r_given_k(r, k, beta, eta, None))
    weighted = prk * p_k
    with np.errstate(divide="ignore", invalid="ignore"):
        d_beta = (weighted @ k) * ((1 - r) / beta - r / (1 - beta))
        d_eta = (weighted @ (1 - k)) * (r / eta - (1 - r) / (1 - eta))
    return np.hstack([prk[:, :-1] - prk[:, -1:], d_beta, d_eta])


@dataclass
class Identifiability:
    """The rank analysis of a BLIM's free parameters.

    Attributes
    ----------
    checked : bool
        False when the structure was too large to check (``reason`` says why).
    rank, n_parameters : int
        The Jacobian's rank and the number of free parameters (states - 1 plus the free
        beta and eta classes); ``n_parameters - rank`` is the null-space dimension.
    unidentified : list of str
        The parameters that cannot be identified: ``careless q``, ``guess q`` (a class of
        equal rates: its items joined by ``=``), ``probability {a, b}``.
    beta_identified, eta_identified : ndarray of shape (items,), bool
        Per item; True for fixed rates (nothing to identify).
    reason : str or None
        Why the check was not run.
    """

    checked: bool
    rank: int | None = None
    n_parameters: int | None = None
    unidentified: list[str] = field(default_factory=list)
    beta_identified: np.ndarray | None = None
    eta_identified: np.ndarray | None = None
    reason: str | None = None

    @property
    def null_dimension(self) -> int | None:
        return None if self.rank is None else self.n_parameters - self.rank


def identifiability(states, items, beta_fix=None, eta_fix=None, beta_equal=None, eta_equal=None,
                    seed: int = 0) -> Identifiability:
    """Which free parameters of a BLIM of ``states`` the pattern probabilities identify (see the module).

    Parameters
    ----------
    states : ndarray of shape (S, n), 0/1
    items : sequence of str
    beta_fix, eta_fix : ndarray of shape (n,), optional
        Fixed rates, NaN where free (:func:`kstp.kst.blim.fit_blim`).
    beta_equal, eta_equal : list of lists of int, optional
        Classes of items whose rates are held equal.
    seed : int
        Seed of the generic point.

    Returns
    -------
    Identifiability
        ``checked`` False, with the reason, when 2^n x S exceeds :data:`MAX_CELLS`.

    Examples
    --------
    Two items, a before b: 2 + 4 parameters for 3 independent pattern probabilities.

    >>> result = identifiability(np.array([[0, 0], [1, 0], [1, 1]]), ["a", "b"])
    >>> result.rank, result.n_parameters, result.unidentified[:2]
    (3, 6, ['probability {}', 'probability {a}'])

    References
    ----------
    Heller 2017, "Identifiability in probabilistic knowledge structures", Journal of
    Mathematical Psychology 77, 46-57, doi:10.1016/j.jmp.2016.07.008. Stefanutti, Heller,
    Anselmi & Robusto 2012, "Assessing the local identifiability of probabilistic
    knowledge structures", Behavior Research Methods 44, 1197-1211 (pks's ``blimit``).
    """
    states = np.asarray(states, dtype=np.uint8)
    n_states, n_items = states.shape
    items = list(items)
    if 2.0**n_items * n_states > MAX_CELLS:
        return Identifiability(False, reason=f"identifiability not checked: its 2^{n_items} response patterns x "
                               f"{n_states:,} states exceed the {MAX_CELLS:,} cells the check lists")
    beta_fix = np.full(n_items, np.nan) if beta_fix is None else np.asarray(beta_fix, dtype=np.float64)
    eta_fix = np.full(n_items, np.nan) if eta_fix is None else np.asarray(eta_fix, dtype=np.float64)
    rng = np.random.default_rng(seed)
    names = [f"probability {{{', '.join(_members(items, row))}}}" for row in states[:-1]]
    owners: list[tuple[str, np.ndarray]] = []
    point = {}
    for kind, fixed, classes in (("beta", beta_fix, beta_equal), ("eta", eta_fix, eta_equal)):
        eq = _groups(classes, n_items, f"{kind}_equal")
        value = np.where(np.isnan(fixed), 0.0, fixed)
        for rep in np.unique(eq.argmax(axis=1)):  # one parameter per class, one value at a generic point
            members = np.flatnonzero(eq[rep] > 0)
            free = members[np.isnan(fixed[members])]
            value[free] = rng.uniform(0.05, 0.35)
            if len(free):
                owners.append((kind, free))
                label = "careless" if kind == "beta" else "guess"
                names.append(f"{label} {'='.join(items[j] for j in free)}")
        point[kind] = value
    p_k = rng.uniform(0.5, 1.5, n_states)
    p_k /= p_k.sum()
    gram = np.zeros((len(names), len(names)))
    for start in range(0, 2**n_items, _CHUNK):
        codes = np.arange(start, min(start + _CHUNK, 2**n_items), dtype=np.int64)
        patterns = (codes[:, None] >> np.arange(n_items)) & 1
        full = jacobian(states, point["beta"], point["eta"], p_k, patterns)
        block = [full[:, :n_states - 1]]
        for kind, free in owners:  # an equality class moves together: its columns add up
            offset = n_states - 1 + (0 if kind == "beta" else n_items)
            block.append(full[:, offset + free].sum(axis=1, keepdims=True))
        block = np.hstack(block)
        gram += block.T @ block
    scale = 1 / np.sqrt(np.maximum(np.diag(gram), 1e-300))  # identifiability does not depend on units
    values, vectors = np.linalg.eigh(gram * scale[:, None] * scale[None, :])
    null = values <= _RANK_TOL * values.max()
    share = (vectors[:, null] ** 2).sum(axis=1)
    lost = share > _NULL_TOL
    identified = {"beta": np.ones(n_items, bool), "eta": np.ones(n_items, bool)}
    for (kind, free), bad in zip(owners, lost[n_states - 1:], strict=True):
        identified[kind][free] = not bad
    return Identifiability(True, int((~null).sum()), len(names), [n for n, bad in zip(names, lost, strict=True)
                                                                  if bad], identified["beta"], identified["eta"])


def _members(items, row) -> list[str]:
    return [q for q, x in zip(items, row, strict=True) if x]
