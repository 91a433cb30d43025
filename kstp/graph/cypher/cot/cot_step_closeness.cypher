// name: cot_step_closeness
// params: $runId: string
// returns: many {responseId, stepId, final, outDegree, closed}
// Logical closeness per step (Zhang et al. 2025, Definition 3.1): a step is closed when
// it is the final step or some later step of its own trajectory uses it (out-degree >= 1
// over SUPPORTS). SUPPORTS only joins steps of one trajectory, so no response filter is
// needed on the child.
MATCH (:Run {id: $runId})<-[:IN_RUN]-(r:Response)-[:HAS_STEP]->(s:CotStep)
WITH r, s, COUNT { MATCH (s)-[:SUPPORTS]->(:CotStep) } AS outDegree
RETURN r.id AS responseId, s.stepId AS stepId, s.final AS final, outDegree,
       (s.final OR outDegree >= 1) AS closed
ORDER BY responseId, stepId
