// name: response_steps
// params: $responseId: string
// returns: many {stepId, position, node, edge, final, closed, parentStepId}
// The chain-of-thought DAG of one trajectory: its steps in writing order, one row per
// (step, parent) (parentStepId null for a step with no parent), with the logical
// closeness of each step (DAG-MATH, Definition 3.1).
MATCH (:Response {id: $responseId})-[:HAS_STEP]->(s:CotStep)
OPTIONAL MATCH (p:CotStep)-[:SUPPORTS]->(s)
RETURN s.stepId AS stepId, s.position AS position, s.node AS node, s.edge AS edge, s.final AS final,
       s.closed AS closed, p.stepId AS parentStepId
ORDER BY position, stepId, parentStepId
