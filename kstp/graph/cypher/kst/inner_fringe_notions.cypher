// name: inner_fringe_notions
// params: $dataset: string, $questionIds: list<string>
// returns: many {questionId}
// Inner fringe of a knowledge state K (given as $questionIds) read on the notions: the
// items q of K that no item of K outside q's class of equally informative items (mutual
// prerequisites) needs, so that K minus that whole class is a state; the inner fringe
// in the discriminative reduction (Doignon & Falmagne 1999, Def. 4.1.6, on the
// notions). Assumes the stored relation is transitive. Meaningful only when K is a state.
MATCH (q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE q.id IN $questionIds
  AND NOT EXISTS {
    MATCH (q)-[:PREREQUISITE_OF]->(r:Question)
    WHERE r.id IN $questionIds AND NOT EXISTS { MATCH (r)-[:PREREQUISITE_OF]->(q) }
  }
RETURN q.id AS questionId
ORDER BY questionId
