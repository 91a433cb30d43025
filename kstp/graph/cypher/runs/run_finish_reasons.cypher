// name: run_finish_reasons
// params: $runId: string
// returns: many {responseId, finishReason, questions}
// Every stored reply of a run with the backend's finish reason (length: cut at max_tokens),
// whatever the reply answers (a question, a state, a step pair), and how many questions it
// answers in the run's dataset (two questions of the same text share one reply; a reply a question
// of another dataset shares counts there only): the truncated share of a summary.
MATCH (run:Run {id: $runId})
WITH coalesce(run.dataset, '') AS dataset
MATCH (r:Response)-[:IN_RUN]->(:Run {id: $runId})
RETURN r.id AS responseId, r.finishReason AS finishReason,
       COUNT { MATCH (r)-[:TO]->(q:Question) WHERE dataset = '' OR q.dataset = dataset } AS questions
ORDER BY responseId
