// name: response_detail
// params: $responseId: string
// returns: many {responseId, runId, evaluator, learnerId, questionId, questionText, gold}
// One sample (Response) with the run or runs that hold it, the learner that gave it and
// its question with the gold answer (none for a next-step sample, which answers a
// catalogue state): the header of kstp explore's sample page.
MATCH (r:Response {id: $responseId})-[:IN_RUN]->(run:Run)
WITH r, run, coalesce(run.dataset, '') AS dataset
OPTIONAL MATCH (r)-[:TO]->(q:Question)
WHERE dataset = '' OR q.dataset = dataset
OPTIONAL MATCH (l:Learner)-[:GAVE]->(r)
RETURN r.id AS responseId, run.id AS runId, run.evaluator AS evaluator, l.id AS learnerId, q.id AS questionId,
       q.text AS questionText, q.answer AS gold
ORDER BY runId, learnerId
