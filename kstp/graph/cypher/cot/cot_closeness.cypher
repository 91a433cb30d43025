// name: cot_closeness
// params: $runId: string
// returns: many {responseId, steps, nonFinalSteps, closedSteps, closedShare, closed}
// Logical closeness per trajectory (Zhang et al. 2025, Definition 3.1): closed when every
// non-final step has out-degree >= 1; closedShare is the share of closed non-final steps
// (1.0 for a one-step trajectory), the quantity the AUC sweep thresholds (§5).
MATCH (:Run {id: $runId})<-[:IN_RUN]-(r:Response)-[:HAS_STEP]->(s:CotStep)
WITH r, s, COUNT { MATCH (s)-[:SUPPORTS]->(:CotStep) } AS outDegree
WITH r, count(s) AS steps, sum(CASE WHEN s.final THEN 0 ELSE 1 END) AS nonFinalSteps,
     sum(CASE WHEN NOT s.final AND outDegree >= 1 THEN 1 ELSE 0 END) AS closedSteps
RETURN r.id AS responseId, steps, nonFinalSteps, closedSteps,
       CASE WHEN nonFinalSteps = 0 THEN 1.0 ELSE 1.0 * closedSteps / nonFinalSteps END AS closedShare,
       closedSteps = nonFinalSteps AS closed
ORDER BY responseId
