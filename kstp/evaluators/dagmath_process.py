"""The stochastic process of DAG-MATH §2.2: reasoning as a random walk on a task DAG.

A task DAG holds every conclusion a solution could reach (nodes) and which conclusions
each one needs (edges, parent -> child). A trajectory starts with nothing visited; at
each step one *available* node is visited — a node not yet visited whose parents have
all been visited — chosen with probability proportional to its weight (uniform by
default); the process stops (is absorbed) when it visits a sink. A trajectory is
*perfect* when it is absorbed at the target sink (the correct answer) and is logically
closed: every visited node except the last has a child among the visited nodes. The
perfect reasoning rate (PRR, Definition 3.2) is the probability of a perfect trajectory
under the transition rule of Eq. 2.1.

Assumes an acyclic task DAG (checked). The exact PRR sums over visited sets and is
exponential in the worst case; it refuses DAGs whose state space passes a limit, where
the estimate by simulation with the Hoeffding sample size is the tool.

References
----------
Zhang, Kuzborskij, Lee, Leng, Liu 2025, "DAG-Math: Graph-Guided Mathematical Reasoning
in LLMs", §2.2 (Eq. 2.1, the only numbered equation), §3 (Definition 3.2, the two-chain
toy DAG of Figure 2, the Hoeffding remark) (arXiv 2510.19842).
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Mapping

import networkx as nx

from kstp.errors import InputError

__all__ = ["available", "sample_trajectory", "is_perfect", "exact_prr", "estimate_prr", "hoeffding_sample_size",
           "two_chain_dag", "MAX_STATES"]

#: Visited sets the exact PRR may enumerate before it refuses.
MAX_STATES = 200_000


def _checked(dag: nx.DiGraph, target: Hashable | None = None) -> None:
    if not nx.is_directed_acyclic_graph(dag):
        cycle = nx.find_cycle(dag)
        raise InputError("the task graph has a cycle " + " -> ".join(str(u) for u, _ in cycle)
                         + f" -> {cycle[0][0]}; a task DAG must be acyclic")
    if target is not None and (target not in dag or dag.out_degree(target)):
        raise InputError(f"target {target!r} is not a sink of the task DAG; sinks: "
                         f"{sorted(map(str, (n for n in dag if not dag.out_degree(n))))}")


def available(dag: nx.DiGraph, visited: set) -> list:
    """Nodes not yet visited whose parents are all visited, in the DAG's node order.

    >>> dag = nx.DiGraph([("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")])
    >>> available(dag, set()), available(dag, {"a"}), available(dag, {"a", "b"})
    (['a'], ['b', 'c'], ['c'])
    """
    return [n for n in dag if n not in visited and all(p in visited for p in dag.predecessors(n))]


def sample_trajectory(dag: nx.DiGraph, rng: random.Random, weights: Mapping | None = None) -> list:
    """One trajectory: visit available nodes (probability proportional to ``weights``, default 1) until a sink.

    Parameters
    ----------
    rng : random.Random
        The source of randomness (seed it for reproducibility).
    weights : mapping, optional
        Positive weight per node; a missing node weighs 1.

    Returns
    -------
    list
        The visited nodes in order; the last is a sink.
    """
    visited: list = []
    seen: set = set()
    while True:
        options = available(dag, seen)
        node = rng.choices(options, [weights.get(n, 1.0) if weights else 1.0 for n in options])[0]
        visited.append(node)
        seen.add(node)
        if not dag.out_degree(node):
            return visited


def is_perfect(dag: nx.DiGraph, trajectory: list, target: Hashable) -> bool:
    """Absorbed at ``target`` and logically closed (every node but the last has a visited child).

    >>> dag = nx.DiGraph([("s", "a"), ("s", "b")])
    >>> is_perfect(dag, ["s", "a"], "a"), is_perfect(dag, ["s", "b"], "a")
    (True, False)
    """
    seen = set(trajectory)
    return trajectory[-1] == target and all(any(c in seen for c in dag.successors(n)) for n in trajectory[:-1])


def exact_prr(dag: nx.DiGraph, target: Hashable, weights: Mapping | None = None) -> float:
    """The exact perfect reasoning rate (Definition 3.2) of the Eq. 2.1 process on ``dag``.

    Sums, over visited sets, the probability of each absorbing path that is perfect.

    Raises
    ------
    InputError
        When ``dag`` has a cycle, ``target`` is not one of its sinks, or more than
        :data:`MAX_STATES` visited sets would be enumerated (estimate it with
        :func:`estimate_prr` instead).

    Examples
    --------
    >>> exact_prr(two_chain_dag(4), "a4")
    0.125
    """
    _checked(dag, target)
    memo: dict[frozenset, float] = {}

    def rate(seen: frozenset) -> float:
        if seen in memo:
            return memo[seen]
        if len(memo) >= MAX_STATES:
            raise InputError(f"the exact PRR would enumerate more than {MAX_STATES} visited sets on this "
                             f"{dag.number_of_nodes()}-node DAG; estimate it by simulation (estimate_prr)")
        options = available(dag, set(seen))
        w = [weights.get(n, 1.0) if weights else 1.0 for n in options]
        total = 0.0
        for node, weight in zip(options, w, strict=True):
            after = seen | {node}
            if dag.out_degree(node):
                total += weight * rate(after)
            elif node == target and all(any(c in after for c in dag.successors(n)) for n in seen):
                total += weight
        memo[seen] = total / sum(w)
        return memo[seen]

    return rate(frozenset())


def estimate_prr(dag: nx.DiGraph, target: Hashable, samples: int, seed: int = 42,
                 weights: Mapping | None = None) -> float:
    """The share of perfect trajectories among ``samples`` simulated ones (seeded).

    With ``samples >= hoeffding_sample_size(eps, delta)`` the estimate is within ``eps``
    of :func:`exact_prr` with probability at least ``1 - delta``.
    """
    _checked(dag, target)
    rng = random.Random(seed)
    return sum(is_perfect(dag, sample_trajectory(dag, rng, weights), target) for _ in range(samples)) / samples


def hoeffding_sample_size(epsilon: float, delta: float = 0.05) -> int:
    """Trajectories needed so that the empirical PRR is within ``epsilon`` with probability >= 1 - ``delta``.

    Hoeffding's inequality for means of [0, 1] variables: n >= ln(2 / delta) / (2 epsilon^2).
    The paper (§3) states only the order, M = Omega(1 / epsilon^2) problems for R-hat; the
    same bound holds for the N trajectories of one PRR-hat, which is what this sizes.

    Raises
    ------
    InputError
        Unless 0 < epsilon < 1 and 0 < delta < 1.

    Examples
    --------
    >>> hoeffding_sample_size(0.05, 0.05)
    738
    """
    if not (0 < epsilon < 1 and 0 < delta < 1):
        raise InputError(f"need 0 < epsilon < 1 and 0 < delta < 1, got epsilon={epsilon}, delta={delta}")
    return math.ceil(math.log(2 / delta) / (2 * epsilon**2))


def two_chain_dag(length: int) -> nx.DiGraph:
    """The paper's toy task DAG: two chains of ``length`` nodes sharing their first node.

    The shared source is ``a1`` (= ``b1``); the chains are ``a1 -> a2 -> ... -> aL`` and
    ``a1 -> b2 -> ... -> bL``; the correct answer is the sink ``aL``. Under uniform
    transitions each of the L - 1 steps after the source picks the right chain with
    probability 1/2, so PRR = (1/2)^(L - 1).

    Raises
    ------
    InputError
        When ``length`` < 1.

    >>> sorted(two_chain_dag(3).edges())
    [('a1', 'a2'), ('a1', 'b2'), ('a2', 'a3'), ('b2', 'b3')]
    """
    if length < 1:
        raise InputError(f"chain length must be >= 1, got {length}")
    dag = nx.DiGraph()
    dag.add_node("a1")
    for chain in "ab":
        nodes = ["a1"] + [f"{chain}{i}" for i in range(2, length + 1)]
        dag.add_edges_from(zip(nodes, nodes[1:], strict=False))
    return dag
