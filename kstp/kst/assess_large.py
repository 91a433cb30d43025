"""Adaptive assessment where the states cannot be listed: the posterior on the surmise relation, by Gibbs sampling.

At XES3G5M scale (4,118 questions, 822 of them without a concept and so incomparable
with every other) the quasi-ordinal space has more than 2^822 states: no vector of state
probabilities can be held, and :mod:`kstp.kst.assess` does not apply.

The model. Each class c of equally informative items has a latent skill z_c; a question
is mastered when its own skill and the skills of all its prerequisites are acquired:
K = {q : z_p = 1 for every p in the down-set of q}. This is the BLIM on the structure
delineated by the skill function that gives each question its down-set of skills (a
conjunctive skill function, Doignon & Falmagne 1999, ch. 4): its states are exactly the
down-sets of the surmise relation (every state of the quasi-ordinal space, Th. 3.8).
Given the learner's ability rho the skills are independent, each acquired with
probability rho, so P(K | rho) = rho^|K| (1 - rho)^|F(K)|, counting classes, with F(K) the
classes outside K whose prerequisites are all in K (the outer fringe on the notions);
rho itself is uniform on [0, 1] a priori and learnt from the answers with the rest. In
cognitive diagnosis this is the DINA model whose attribute hierarchy is the surmise
relation, with a higher-order ability (Heller, Stefanutti, Anselmi & Robusto 2015 show
the BLIM on a delineated structure and the DINA model to be one; de la Torre & Douglas
2004 for the higher-order ability): an answer to one question then tells something about
every other, the isolated ones included, through rho.

The sampler. The posterior is sampled by Gibbs updates of the skills and the ability, which, unlike the
states' own memberships, are free of constraints: a chain on the states themselves
(heat-bath on the order ideals, as :meth:`KnowledgeSpace.sample` walks them) moves one
frontier item at a time, and on the 57-level random structures and the XES3G5M relation
tried here its chains from the empty state and from the full domain still disagreed
after thousands of sweeps. Flipping z_c changes the state only where every other skill
below a class is acquired, so its full conditional needs, per chain, the number N_d of
missing skills below each class d: with z_c = 1 the classes d above c (c included) with
N_d = 0 are mastered and would not be without it; with z_c = 0 those with N_d = 1 would
become mastered. Its log-odds are log(rho_c / (1 - rho_c)) plus the sum of their answers'
log-likelihood ratios. Skills whose up-sets are disjoint do not interact, so the classes
are grouped (greedily, in a topological order) into blocks of pairwise disjoint up-sets
and a block is updated at once for every chain by sparse products with the up-set
matrix; after each sweep rho is drawn from its conditional, Beta(1 + acquired, 1 + not
acquired). Several chains run side by side, start from an exact draw of the prior and
are carried from one answer to the next.
The mass L_q = P(q in K | R) is the chains' average over the sweeps since the last answer.

On these masses the questioning rules of :mod:`kstp.kst.assess` apply as they are: the
half-split rule (L_q nearest 1/2) and the most informative question (for one answer the
mutual information depends on L_q and the item's rates alone), or a random one. The
``variance`` rule (the default here) asks the question whose answer most reduces the
posterior variance of T = sum over unasked q of (1 - beta_q - eta_q) [q in K], the part of
the number of right answers that depends on the state, in its linear (Kalman) form: the
reduction is Cov(R_q, T)^2 / Var(R_q), with Cov(R_q, T) = (1 - beta_q - eta_q) Cov([q in K], T)
taken from the chains' states (van der Linden 1998's minimum expected posterior variance).
Half-split and entropy weigh each question by how evenly it splits the states, so on
XES3G5M they spend their questions on the 822 isolated items (each splits the space
exactly in half and tells about itself alone); the variance rule weighs what an answer
tells about every other question.

No most likely state is at hand, so the assessment stops on the items' band (every
item's mass outside [low, high]: mycaas's ``items_discrimination``, Donadello et al.
2017), at a budget, when nothing is informative, or when all is asked; the state reported
is {q : L_q > 1/2}, closed downward (a down-set: L_p >= L_q whenever p is a prerequisite
of q, exactly, and the closure mends sampling noise). Predicted accuracy and PSR come
from the chains' states, as :func:`kstp.kst.assess_predict.predict` computes them.

Rates of exactly 0 or 1 would make the log-likelihood ratios infinite: they are kept in
[1e-6, 1 - 1e-6] here (pks keeps fitted rates in the same range).

References
----------
Doignon, J.-P., & Falmagne, J.-C. (1999). *Knowledge Spaces*. Springer, ch. 3 (surmise
relations, quasi-ordinal spaces), ch. 4 (skill maps, delineation) and ch. 10-11
(stochastic assessment). Heller, J., Stefanutti, L., Anselmi, P., & Robusto, E. (2015).
On the link between cognitive diagnostic models and knowledge space theory.
*Psychometrika* 80(4), 995-1019, doi:10.1007/s11336-015-9457-x. de la Torre, J., &
Douglas, J. A. (2004). Higher-order latent trait models for cognitive diagnosis.
*Psychometrika* 69(3), 333-353. Junker, B. W., & Sijtsma, K. (2001). Cognitive
assessment models with few assumptions (the DINA model). *Applied Psychological
Measurement* 25(3), 258-272. Geman, S., & Geman, D. (1984). Stochastic
relaxation, Gibbs distributions, and the Bayesian restoration of images. *IEEE PAMI* 6(6).
Donadello et al. 2017, *Educational and Psychological Measurement* 77(5) (the items'
stopping criterion). van der Linden, W. J. (1998). Bayesian item selection criteria for
adaptive testing. *Psychometrika* 63(2), 201-216.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from kstp.kst.assess import (
    MIN_INFORMATION,
    AssessmentError,
    Outcome,
    Step,
    StopRules,
    _h,
    check_rule,
)
from kstp.kst.assess_predict import predict
from kstp.kst.spaces import KnowledgeSpace

__all__ = ["SurmiseProcedure", "RATE_FLOOR", "draw_states"]

#: Rates are kept in [RATE_FLOOR, 1 - RATE_FLOOR] on the surmise relation (infinite weights otherwise).
RATE_FLOOR = 1e-6


def _logit(p: np.ndarray) -> np.ndarray:
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return np.log(p / (1 - p))


def _mask_bits(mask: int, m: int) -> np.ndarray:
    """The set bits of a Python integer mask over m classes, as indices."""
    if not mask:
        return np.zeros(0, np.int64)
    raw = np.frombuffer(mask.to_bytes((m + 7) // 8, "little"), np.uint8)
    return np.flatnonzero(np.unpackbits(raw, bitorder="little")[:m])


def draw_states(space: KnowledgeSpace, n: int, rng: np.random.Generator, items=None) -> np.ndarray:
    """``n`` states drawn exactly from the model's prior: an ability rho uniform on [0, 1], each class's skill
    acquired with probability rho, a question mastered when the skills of its down-set are: (n, items) bool.

    >>> space = KnowledgeSpace.build(["a", "b"], [("a", "b")])
    >>> k = draw_states(space, 2000, np.random.default_rng(0))
    >>> bool((k[:, 1] <= k[:, 0]).all()), round(float(k[:, 0].mean()), 1)  # down-sets; P(a) = E[rho] = 1/2
    (True, 0.5)
    """
    items = tuple(items) if items is not None else space.items
    m = len(space.classes)
    cls = space._class_of()
    class_of = np.array([cls[q] for q in items], np.int64)
    rho = rng.random(n)
    z = rng.random((n, m)) < rho[:, None]
    mastered = np.zeros((n, m), bool)
    for c in range(m):  # classes come in a topological order: a class's prerequisites are decided before it
        mastered[:, c] = z[:, c]
        for p in _mask_bits(space.cover[c], m):
            mastered[:, c] &= mastered[:, p]
    return mastered[:, class_of]


class SurmiseProcedure(StopRules):
    """One adaptive assessment on the quasi-ordinal space of a surmise relation, never listing its states.

    Same protocol as :class:`kstp.kst.assess.Procedure`: :meth:`next`, :meth:`record`,
    :meth:`stopped`, :meth:`outcome`; items are indices into ``items``.

    Parameters
    ----------
    space : KnowledgeSpace
        The quasi-ordinal space (:meth:`KnowledgeSpace.build` on the prerequisite pairs).
    beta, eta : array-like of shape (items,)
        Careless-error and lucky-guess rates, in the order of ``items``.
    items : sequence of str, optional
        The item order of the rates and of every index (default ``space.items``).
    rule : {"variance", "half-split", "entropy", "random"}
    band : (float, float)
        Stop once every item's mass is below ``band[0]`` or above ``band[1]``.
    budget : int, optional
        Stop after this many questions.
    min_information : float
        Stop when no unasked question's answer carries this much information (bits).
    prior_logodds : array-like of shape (classes,), optional
        Offsets added to each class's skill log-odds logit(rho), classes in
        ``space.classes`` order (default 0: every skill is as likely as the ability says).
    chains, sweeps, burn_in : int
        Chains run side by side; sweeps after each answer; sweeps on the prior first
        (the prior is drawn exactly, so none are needed for it).
    seed : int

    Raises
    ------
    AssessmentError
        On an unknown rule, rates of the wrong length or outside [0, 1], a band that is
        not 0 <= low <= high <= 1, or too few chains or sweeps.

    Examples
    --------
    The chain a < b < c, the ability uniform: a is mastered with probability E[rho] = 1/2,
    b with E[rho^2] = 1/3, c with 1/4, so the half-split rule asks a first.

    >>> space = KnowledgeSpace.build(["a", "b", "c"], [("a", "b"), ("b", "c")])
    >>> p = SurmiseProcedure(space, [0.05] * 3, [0.05] * 3, rule="half-split", seed=1)
    >>> p.next()
    [0]
    >>> p.record(0, True); p.record(2, True)
    >>> sorted(p.outcome().items_in_state.nonzero()[0].tolist())
    [0, 1, 2]
    """

    def __init__(self, space: KnowledgeSpace, beta, eta, items=None, rule: str = "variance",
                 band: tuple[float, float] = (0.2, 0.8), budget: int | None = None,
                 min_information: float = MIN_INFORMATION, prior_logodds=None, chains: int = 64,
                 sweeps: int = 12, burn_in: int = 0, seed: int = 0):
        self.rule = check_rule(rule)
        self.space = space
        self.items = tuple(items) if items is not None else space.items
        n = len(self.items)
        beta, eta = np.asarray(beta, np.float64), np.asarray(eta, np.float64)
        for name, rate in (("careless-error rate (beta)", beta), ("lucky-guess rate (eta)", eta)):
            if rate.shape != (n,):
                raise AssessmentError(f"{n} items but {rate.size} {name}s; give one per item")
            if np.isnan(rate).any() or (rate < 0).any() or (rate > 1).any():
                raise AssessmentError(f"a {name} must lie in [0, 1]")
        if not 0 <= band[0] <= band[1] <= 1:
            raise AssessmentError(f"the items' band is (low, high) with 0 <= low <= high <= 1, not {tuple(band)}")
        if chains < 2 or sweeps < 1 or burn_in < 0:
            raise AssessmentError("the sampler needs at least one chain and one sweep per answer")
        if budget is not None and budget < 0:
            raise AssessmentError(f"the question budget cannot be negative ({budget})")
        self.beta = np.clip(beta, RATE_FLOOR, 1 - RATE_FLOOR)
        self.eta = np.clip(eta, RATE_FLOOR, 1 - RATE_FLOOR)
        self.band, self.budget, self.min_information = (float(band[0]), float(band[1])), budget, min_information
        self.sweeps, self.seed = sweeps, seed
        self.rng = np.random.default_rng(seed)
        cls = space._class_of()
        self.class_of = np.array([cls[q] for q in self.items], np.int64)
        m = self.m = len(space.classes)
        self.members = [np.flatnonzero(self.class_of == c) for c in range(m)]
        self.field = np.zeros(m)  # per class: the sum of its answers' log-likelihood ratios (mastered against not)
        self.prior = np.zeros(m)  # per class: an offset to its skill's log-odds logit(rho)
        if prior_logodds is not None:
            a = np.asarray(prior_logodds, np.float64)
            if a.shape != (m,):
                raise AssessmentError(f"{m} classes but {a.size} prior log-odds")
            self.prior = a.copy()
        # up[c, d] = 1: d is c or above it (c lies in d's down-set)
        self._up_sets = [space.above[c] | 1 << c for c in range(m)]
        rows = [_mask_bits(mask, m) for mask in self._up_sets]
        owner = np.concatenate([np.full(len(r), c) for c, r in enumerate(rows)]) if m else np.zeros(0, np.int64)
        self._up = sparse.csr_matrix((np.ones(len(owner), np.float32), (owner, np.concatenate(rows) if m else owner)),
                                     shape=(m, m)).tocsc()
        # the covering relation by level, to turn skills into states: x_c = z_c and x_p for every p c covers
        below = [_mask_bits(c, m) for c in space.cover]
        child = np.concatenate([np.full(len(b), k) for k, b in enumerate(below)]) if m else np.zeros(0, np.int64)
        cover = sparse.csr_matrix((np.ones(len(child), np.float32), (child, np.concatenate(below) if m else child)),
                                  shape=(m, m))
        level = np.asarray(space.level, np.int64)
        self._levels = [(idx, cover[idx]) for idx in (np.flatnonzero(level == lv)
                                                      for lv in range(int(level.max()) + 1 if m else 0))
                        if len(cover[idx].indices)]
        self.chains = chains
        self.rho = self.rng.random(chains)  # each chain's ability, uniform a priori; the skills drawn given it
        self.z = self.rng.random((m, chains)) < 1 / (1 + np.exp(-(self.prior[:, None] + _logit(self.rho)[None, :])))
        self._answered: np.ndarray | None = None  # the classes with answers when the blocks were last made
        self._mass = np.zeros(m)
        self._run(max(burn_in, 0), record=False)
        self._run(sweeps)
        self.path: list[Step] = []
        self.observed: dict[int, bool] = {}

    # ---- the sampler -----------------------------------------------------------------------------------------
    def _prepare(self) -> None:
        """Blocks for the classes whose skill an answer depends on (the down-set of the answered classes),
        each block's rows of the up-set matrix restricted to the answered classes, and the missing counts there.

        Only the answered classes' states enter the likelihood, so a skill below none of them is drawn from
        its prior, and two skills interact only through an answered class above both: blocks need pairwise
        disjoint up-sets within the answered classes only."""
        answered = np.flatnonzero(self.field != 0)
        self._answered = answered
        up_a = self._up[:, answered].tocsr()  # (classes, answered): the answered classes above each class
        relevant = np.flatnonzero(np.diff(up_a.indptr) > 0)
        blocks: list[list[int]] = []
        taken = np.zeros((16, len(answered)), bool)  # per block, the answered classes its members lie below
        for c in relevant:  # greedily, in the topological order: the first block none of c's answered classes has
            seen = up_a.indices[up_a.indptr[c]:up_a.indptr[c + 1]]
            free = np.flatnonzero(~taken[:len(blocks), seen].any(axis=1))
            if len(free):
                k = int(free[0])
            else:
                k = len(blocks)
                blocks.append([])
                if k == len(taken):
                    taken = np.concatenate([taken, np.zeros_like(taken)])
            blocks[k].append(int(c))
            taken[k, seen] = True
        self._blocks = [(np.array(b), up_a[b], up_a[b].T.tocsr()) for b in blocks]
        free = np.ones(self.m, bool)
        free[relevant] = False
        self._free = np.flatnonzero(free)
        self._missing = np.asarray(up_a.T @ (~self.z).astype(np.float32))  # (answered, chains)

    def _states(self) -> np.ndarray:
        """Each chain's state from its skills, level by level: (classes, chains) bool."""
        x = self.z.copy()
        for idx, cover in self._levels:
            x[idx] &= np.asarray(cover @ (~x).astype(np.float32)) == 0
        return x

    def _run(self, sweeps: int, record: bool = True) -> None:
        """``sweeps`` Gibbs sweeps over the skills and the abilities; with ``record`` the class masses are the
        average of the chains' states over them."""
        if self._answered is None or not np.array_equal(self._answered, np.flatnonzero(self.field != 0)):
            self._prepare()
        total = np.zeros(self.m)
        kept = []
        field = self.field[self._answered].astype(np.float32)[:, None]
        for _ in range(sweeps):
            ability = _logit(self.rho)[None, :]
            free = self._free
            self.z[free] = self.rng.random((len(free), self.chains)) < 1 / (1 + np.exp(-(self.prior[free][:, None]
                                                                                            + ability)))
            for block, up, up_t in self._blocks:
                z = self.z[block]
                gain_on = up @ (field * (self._missing == 0))  # z_c = 1: the answered classes it masters now
                gain_off = up @ (field * (self._missing == 1))  # z_c = 0: those it would master
                logit = self.prior[block][:, None] + ability + np.where(z, gain_on, gain_off)
                drawn = self.rng.random(z.shape) < 1 / (1 + np.exp(-logit))
                if (drawn != z).any():
                    self.z[block] = drawn
                    self._missing += np.asarray(up_t @ (z.astype(np.float32) - drawn))
            acquired = self.z.sum(axis=0)
            self.rho = self.rng.beta(1 + acquired, 1 + self.m - acquired)
            if record:
                x = self._states()
                total += x.mean(axis=1)
                kept.append(x)
        if record:
            self._mass = total / max(sweeps, 1)
            self._samples = np.concatenate(kept, axis=1).astype(np.float32)  # (classes, chains x sweeps)

    def mastery(self) -> np.ndarray:
        """L_q = P(q in K | answers) per item, estimated from the chains: (items,)."""
        return self._mass[self.class_of]

    def variance_reduction(self) -> np.ndarray:
        """Cov(R_q, T)^2 / Var(R_q) per item: how much its answer reduces the variance of T (see the module notes)."""
        asked = np.zeros(self.n_items, bool)
        asked[list(self.observed)] = True
        slope = 1 - self.beta - self.eta
        weight = np.zeros(self.m)
        np.add.at(weight, self.class_of, np.where(asked, 0.0, slope))
        x = self._samples - self._samples.mean(axis=1, keepdims=True)
        t = weight @ x
        cov = (x @ t) / x.shape[1]  # Cov([c in K], T) per class
        held = self.mastery()
        p = held * (1 - self.beta) + (1 - held) * self.eta
        with np.errstate(invalid="ignore", divide="ignore"):
            out = (slope * cov[self.class_of]) ** 2 / (p * (1 - p))
        return np.nan_to_num(out)

    def information(self) -> np.ndarray:
        """Mutual information (bits) between each item's answer and the state: (items,)."""
        held = self.mastery()
        p_correct = held * (1 - self.beta) + (1 - held) * self.eta
        return np.maximum(_h(p_correct) - held * _h(1 - self.beta) - (1 - held) * _h(self.eta), 0.0)

    # ---- the procedure ---------------------------------------------------------------------------------------
    @property
    def n_items(self) -> int:
        return len(self.items)

    def _item_mastery(self) -> np.ndarray:
        return self.mastery()

    def _item_information(self) -> np.ndarray:
        return self.information()

    def next(self, batch: int = 1) -> list[int]:
        """The question(s) to ask now: the rule's best items, at most one per class of equally informative items
        (a second from the same class would split the same mass again); [] once :meth:`stopped`."""
        if self.stopped():
            return []
        if self.budget is not None:
            batch = min(batch, self.budget - len(self.path))
        pool = self.pool()
        if self.rule == "random":
            return [int(q) for q in self.rng.choice(pool, size=min(batch, len(pool)), replace=False)]
        if self.rule == "half-split":
            score = -np.abs(2 * self.mastery()[pool] - 1)
        elif self.rule == "entropy":
            score = self.information()[pool]
        else:
            score = self.variance_reduction()[pool]
        order = pool[np.argsort(-score, kind="stable")]
        out, seen = [], set()
        for q in order:
            c = int(self.class_of[q])
            if c in seen:
                continue
            out.append(int(q))
            seen.add(c)
            if len(out) == batch:
                break
        return out

    def record(self, item: int, correct: bool, sweeps: int | None = None) -> None:
        """Take the answer to ``item`` and move the chains on (``sweeps``, default the procedure's).

        Raises
        ------
        AssessmentError
            When ``item`` is no item or was answered already.
        """
        self.record_many([(item, correct)], sweeps)

    def record_many(self, answers, sweeps: int | None = None) -> None:
        """Take several answers ((item, correct) pairs, a batch), then move the chains on once."""
        for item, correct in answers:
            item = int(item)
            if not 0 <= item < self.n_items:
                raise AssessmentError(f"item {item} is not one of the {self.n_items} items")
            if item in self.observed:
                raise AssessmentError(f"item {item} was answered already; each question is asked once")
            b, e = self.beta[item], self.eta[item]
            self.field[self.class_of[item]] += np.log((1 - b) / e) if correct else np.log(b / (1 - e))
            self.observed[item] = bool(correct)
        self._run(self.sweeps if sweeps is None else sweeps)
        held = self.mastery()
        entropy = float(_h(self._mass).sum())
        for item, correct in answers:
            self.path.append(Step(int(item), bool(correct), None, None, entropy,
                                  int(((held >= self.band[0]) & (held <= self.band[1])).sum())))

    def state(self) -> np.ndarray:
        """{q : L_q > 1/2}, closed downward: (items,) bool."""
        inside = self._mass > 0.5
        below = [_mask_bits(b, self.m) for b in self.space.below]
        closed = inside.copy()
        for c in np.flatnonzero(inside):
            closed[below[c]] = True
        return closed[self.class_of]

    def outcome(self, pairs=None, draws: int = 0, level: float = 0.95) -> Outcome:
        """The state {q : L_q > 1/2} (closed downward) with its fringes, the path, and the prediction.

        ``draws`` states for the intervals are taken from the chains over further sweeps
        (one sweep between two rounds of draws); the accuracy's mean is exact in the masses.
        """
        held = self.mastery()
        k = self.state()
        names = [self.items[q] for q in np.flatnonzero(k)]
        index = {q: j for j, q in enumerate(self.items)}
        inner = np.zeros(self.n_items, bool)
        outer = np.zeros(self.n_items, bool)
        inner[[index[q] for q in self.space.inner_fringe(names)]] = True
        outer[[index[q] for q in self.space.outer_fringe(names)]] = True
        prediction = None
        if draws:
            rng = np.random.default_rng([self.seed, len(self.path)])
            saved_rng, self.rng = self.rng, rng
            saved = self.z.copy(), self._missing.copy(), self.rho.copy()
            rounds = []
            while sum(len(r) for r in rounds) < draws:
                self._run(1, record=False)
                rounds.append(self._states().T[:, self.class_of])
            (self.z, self._missing, self.rho), self.rng = saved, saved_rng
            states = np.concatenate(rounds)[:draws]
            asked = np.zeros(self.n_items, bool)
            asked[list(self.observed)] = True
            answers = np.array([self.observed.get(q, False) for q in range(self.n_items)], np.float64)
            expected = float(np.where(asked, answers, held * (1 - self.beta) + (1 - held) * self.eta).mean())
            prediction = predict(states, self.beta, self.eta, self.observed, rng, pairs, expected, level)
        return Outcome(None, k, None, inner, outer, list(self.path), self.stopped(), float(_h(self._mass).sum()),
                       prediction, held)
