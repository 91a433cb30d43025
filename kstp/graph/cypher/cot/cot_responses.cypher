// name: cot_responses
// params: $runId: string
// returns: many {responseId, questionId, sampleIndex, difficulty, correct, verdict, cotValid, cotError}
// Every trajectory of a run with its problem, the problem's difficulty and the stored
// format check and final-answer grade: the rows PRR, PASS@1 and AUC average over.
MATCH (q:Question)<-[:TO]-(r:Response)-[:IN_RUN]->(run:Run {id: $runId})
WHERE run.dataset IS NULL OR q.dataset = run.dataset
RETURN r.id AS responseId, q.id AS questionId, r.sampleIndex AS sampleIndex, q.difficulty AS difficulty,
       r.correct AS correct, r.verdict AS verdict, r.cotValid AS cotValid, r.cotError AS cotError
ORDER BY questionId, sampleIndex
