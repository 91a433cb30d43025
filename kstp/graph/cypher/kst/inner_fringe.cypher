// name: inner_fringe
// params: $dataset: string, $questionIds: list<string>
// returns: many {questionId}
// Inner fringe of a knowledge state K (given as $questionIds): the items q of K such
// that K minus q is a state, i.e. that no other item of K needs (Doignon & Falmagne
// 1999, Def. 4.1.6). An item with an equally informative partner in K is never in it;
// inner_fringe_notions removes such classes whole. Meaningful only when K is a state.
MATCH (q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE q.id IN $questionIds
  AND NOT EXISTS {
    MATCH (q)-[:PREREQUISITE_OF]->(r:Question)
    WHERE r.id IN $questionIds
  }
RETURN q.id AS questionId
ORDER BY questionId
