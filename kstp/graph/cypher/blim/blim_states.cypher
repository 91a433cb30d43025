// name: blim_states
// params: $runId: string
// returns: many {stateId, probability, questionId}
// The knowledge structure of a BLIM fit with each state's fitted probability, one row
// per (state, question); the empty state has one row with a null questionId.
MATCH (k:KnowledgeState {blimRunId: $runId})
OPTIONAL MATCH (k)-[:CONTAINS]->(q:Question)
RETURN k.id AS stateId, k.probability AS probability, q.id AS questionId
ORDER BY stateId, questionId
