// name: inner_fringe
// params: $dataset: string, $questionIds: list<string>
// returns: many {questionId}
// Inner fringe of a knowledge state K (given as $questionIds): the items q of K that
// no other item of K needs, equally informative items (mutual prerequisites, which
// leave a state together) aside (Doignon & Falmagne 1999, Def. 4.1.6, on the classes
// of equally informative items). Meaningful only when K is a state.
MATCH (q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE q.id IN $questionIds
  AND NOT EXISTS {
    MATCH (q)-[:PREREQUISITE_OF]->(r:Question)
    WHERE r.id IN $questionIds AND NOT EXISTS { MATCH (r)-[:PREREQUISITE_OF]->(q) }
  }
RETURN q.id AS questionId
ORDER BY questionId
