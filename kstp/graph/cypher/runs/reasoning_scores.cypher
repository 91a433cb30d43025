// name: reasoning_scores
// params: $runId: string
// returns: many {responseId, questionId, relevance, coherence, accuracy, judgeRunId}
// The judge's reasoning scores on the primary answers of an answers run (paper 1,
// Appendix C); an answer not judged yet has null scores.
MATCH (q:Question)<-[:TO]-(r:Response)-[:IN_RUN]->(run:Run {id: $runId})
WHERE r.sampleIndex = 0 AND (run.dataset IS NULL OR q.dataset = run.dataset)
RETURN r.id AS responseId, q.id AS questionId, r.reasoningRelevance AS relevance,
       r.reasoningCoherence AS coherence, r.reasoningAccuracy AS accuracy, r.reasoningRunId AS judgeRunId
ORDER BY questionId
