// name: run_samples
// params: $runId: string
// returns: many {responseId, questionId, localId, sampleIndex, extracted, correct, verdict, error, finishReason, invalidKind, condition, stateId, presentation, cotValid, closed, closedShare, perfect, ls, ss, tokensOut, latencyS}
// Every sample of a run, whatever its evaluator, with what its grade and its method's
// figures say (answers, next-step, RQEval, DAG-MATH): the sample list of kstp explore's
// run page, in question and sample order (a next-step sample has no question: first, by id).
MATCH (run:Run {id: $runId})
WITH coalesce(run.dataset, '') AS dataset
MATCH (r:Response)-[:IN_RUN]->(:Run {id: $runId})
OPTIONAL MATCH (r)-[:TO]->(q:Question)
WHERE dataset = '' OR q.dataset = dataset
WITH r, q, coalesce(q.id, '') AS byQuestion
RETURN r.id AS responseId, q.id AS questionId, q.localId AS localId, r.sampleIndex AS sampleIndex,
       r.extracted AS extracted, r.correct AS correct, r.verdict AS verdict, r.error AS error,
       r.finishReason AS finishReason, r.invalidKind AS invalidKind, r.condition AS condition,
       r.stateId AS stateId, r.presentation AS presentation, r.cotValid AS cotValid, r.closed AS closed,
       r.closedShare AS closedShare, r.perfect AS perfect, r.ls AS ls, r.ss AS ss, r.tokensOut AS tokensOut,
       r.latencyS AS latencyS
ORDER BY byQuestion, sampleIndex, responseId
