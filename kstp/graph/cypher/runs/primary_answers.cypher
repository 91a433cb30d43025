// name: primary_answers
// params: $learners: list<string>, $evaluator: string
// returns: many {learnerId, questionId, runId, startedAt, correct}
// The graded primary samples (sample 0) of the learners' runs of one evaluator, a row per
// learner, question and run: what a model's ANSWERED edges are written from, read again
// when the run they came from is deleted (another run may hold the same Responses).
MATCH (l:Learner)-[:GAVE]->(r:Response)-[:IN_RUN]->(run:Run)
WHERE l.id IN $learners AND run.evaluator = $evaluator AND r.sampleIndex = 0 AND r.correct IS NOT NULL
MATCH (r)-[:TO]->(q:Question)
WHERE run.dataset IS NULL OR q.dataset = run.dataset
RETURN l.id AS learnerId, q.id AS questionId, run.id AS runId, run.startedAt AS startedAt, r.correct AS correct
ORDER BY learnerId, questionId, startedAt DESC, runId DESC
