// name: stored_states
// params: $dataset: string
// returns: many {stateId, size, source, questionId}
// Knowledge states stored for a dataset, one row per (state, question); the empty
// state has no row.
MATCH (k:KnowledgeState {dataset: $dataset})-[:CONTAINS]->(q:Question)
RETURN k.id AS stateId, k.size AS size, k.source AS source, q.id AS questionId
ORDER BY stateId, questionId
