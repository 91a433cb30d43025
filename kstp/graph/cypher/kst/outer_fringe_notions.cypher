// name: outer_fringe_notions
// params: $dataset: string, $questionIds: list<string>
// returns: many {questionId}
// Outer fringe of a knowledge state K (given as $questionIds) read on the notions, the
// classes of equally informative items (mutual prerequisites): the items q outside K
// whose prerequisites outside K are all equally informative with q, so that K plus q's
// whole class is a state; the outer fringe of K in the discriminative reduction, each
// notion listed with its items (Doignon & Falmagne 1999, Def. 4.1.6, on the notions).
// Assumes the stored relation is transitive, as Eq. 1 derives it.
MATCH (q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE NOT q.id IN $questionIds
  AND NOT EXISTS {
    MATCH (p:Question)-[:PREREQUISITE_OF]->(q)
    WHERE NOT p.id IN $questionIds AND NOT EXISTS { MATCH (q)-[:PREREQUISITE_OF]->(p) }
  }
RETURN q.id AS questionId
ORDER BY questionId
