// name: outer_fringe
// params: $dataset: string, $questionIds: list<string>
// returns: many {questionId}
// Outer fringe of a knowledge state K (given as $questionIds): the items q outside K
// such that K plus q is a state, i.e. whose prerequisites are all in K: what the
// learner is ready to learn next (Doignon & Falmagne 1999, Def. 4.1.6; Steiner &
// Hochweber 2026, Eq. 2). An item with an equally informative partner (a mutual
// prerequisite, outside K with it) is never in it; outer_fringe_notions adds such
// classes whole. Meaningful only when K is a state.
MATCH (q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE NOT q.id IN $questionIds
  AND NOT EXISTS {
    MATCH (p:Question)-[:PREREQUISITE_OF]->(q)
    WHERE NOT p.id IN $questionIds
  }
RETURN q.id AS questionId
ORDER BY questionId
