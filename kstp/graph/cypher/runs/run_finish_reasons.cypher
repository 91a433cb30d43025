// name: run_finish_reasons
// params: $runId: string
// returns: many {responseId, finishReason}
// Every stored reply of a run with the backend's finish reason (length: cut at max_tokens),
// whatever the reply answers (a question, a state, a step pair): the truncated share of a summary.
MATCH (r:Response)-[:IN_RUN]->(:Run {id: $runId})
RETURN r.id AS responseId, r.finishReason AS finishReason
ORDER BY responseId
