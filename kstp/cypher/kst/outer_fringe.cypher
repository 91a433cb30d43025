// name: outer_fringe
// params: $dataset: string, $questionIds: list<string>
// returns: many {questionId}
// Outer fringe of a knowledge state K (given as $questionIds): the items q outside K
// whose prerequisites are all in K, equally informative items (mutual prerequisites,
// which enter a state together) aside: the items the learner is ready to learn next
// (Doignon & Falmagne 1999, Def. 4.1.6, on the classes of equally informative items).
// Assumes the stored relation is transitive, as Eq. 1 derives it.
MATCH (q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE NOT q.id IN $questionIds
  AND NOT EXISTS {
    MATCH (p:Question)-[:PREREQUISITE_OF]->(q)
    WHERE NOT p.id IN $questionIds AND NOT EXISTS { MATCH (q)-[:PREREQUISITE_OF]->(p) }
  }
RETURN q.id AS questionId
ORDER BY questionId
