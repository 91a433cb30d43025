// name: outer_fringe
// params: $dataset: string, $questionIds: list<string>
// returns: many {questionId}
// Outer fringe of a knowledge state K (given as $questionIds): the items q outside K
// such that K plus q is a state, i.e. every prerequisite of q is in K: the items the
// learner is ready to learn next (Doignon & Falmagne 1999, Def. 4.1.6).
MATCH (q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE NOT q.id IN $questionIds
  AND NOT EXISTS { MATCH (p:Question)-[:PREREQUISITE_OF]->(q) WHERE NOT p.id IN $questionIds }
RETURN q.id AS questionId
ORDER BY questionId
