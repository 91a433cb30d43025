// name: state_violations
// params: $dataset: string, $questionIds: list<string>
// returns: many {questionId, prerequisiteId}
// Why an item set is not a knowledge state: each (item in the set, prerequisite not in
// the set) pair. Empty exactly when the set is closed under the prerequisite relation.
MATCH (p:Question)-[:PREREQUISITE_OF]->(q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE q.id IN $questionIds AND NOT p.id IN $questionIds
RETURN q.id AS questionId, p.id AS prerequisiteId
ORDER BY questionId, prerequisiteId
