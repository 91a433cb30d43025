// name: cot_trajectories
// params: $runId: string
// returns: many {responseId, questionId, problem, position, stepId, node, edge, parentStepId}
// The steps of every trajectory of a run, one row per (step, parent) (parentStepId null
// for a fact from the problem), in writing order: what few-shot examples are built from.
MATCH (q:Question)<-[:TO]-(r:Response)-[:IN_RUN]->(run:Run {id: $runId})
WHERE run.dataset IS NULL OR q.dataset = run.dataset
MATCH (r)-[:HAS_STEP]->(s:CotStep)
OPTIONAL MATCH (p:CotStep)-[:SUPPORTS]->(s)
RETURN r.id AS responseId, q.id AS questionId, q.text AS problem, s.position AS position, s.stepId AS stepId, s.node AS node,
       s.edge AS edge, p.stepId AS parentStepId
ORDER BY responseId, position, parentStepId
