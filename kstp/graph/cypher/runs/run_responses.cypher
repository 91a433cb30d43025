// name: run_responses
// params: $runId: string
// returns: many {responseId, questionId, sampleIndex, seed, promptHash, text, extracted, extractionMethod, correct, verdict, finishReason, error, tokensIn, tokensOut, latencyS, reasoning}
// Every completion of a run with its grade, in question and sample order: a row per question of the
// run's dataset it answers (a reply another dataset's question of the same text shares is not that
// question's here; a run without a dataset reads every question).
MATCH (q:Question)<-[:TO]-(r:Response)-[:IN_RUN]->(run:Run {id: $runId})
WHERE run.dataset IS NULL OR q.dataset = run.dataset
RETURN r.id AS responseId, q.id AS questionId, r.sampleIndex AS sampleIndex, r.seed AS seed,
       r.promptHash AS promptHash, r.text AS text, r.extracted AS extracted,
       r.extractionMethod AS extractionMethod, r.correct AS correct, r.verdict AS verdict,
       r.finishReason AS finishReason, r.error AS error, r.tokensIn AS tokensIn, r.tokensOut AS tokensOut,
       r.latencyS AS latencyS, r.reasoning AS reasoning
ORDER BY questionId, sampleIndex
