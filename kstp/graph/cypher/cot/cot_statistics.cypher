// name: cot_statistics
// params: $runId: string
// returns: many {responseId, nodes, edges, density, maxInDegree, maxOutDegree}
// Graph statistics of each trajectory's DAG (Zhang et al. 2025, Table 1): nodes, edges,
// density 2E / (N (N - 1)) (null below two nodes), largest in- and out-degree.
MATCH (:Run {id: $runId})<-[:IN_RUN]-(r:Response)-[:HAS_STEP]->(s:CotStep)
WITH r, s, COUNT { MATCH (s)-[:SUPPORTS]->(:CotStep) } AS outDegree,
     COUNT { MATCH (:CotStep)-[:SUPPORTS]->(s) } AS inDegree
WITH r, count(s) AS nodes, sum(outDegree) AS edges, max(inDegree) AS maxInDegree, max(outDegree) AS maxOutDegree
RETURN r.id AS responseId, nodes, edges,
       CASE WHEN nodes < 2 THEN null ELSE 2.0 * edges / (nodes * (nodes - 1)) END AS density,
       maxInDegree, maxOutDegree
ORDER BY responseId
