// name: run_responses
// params: $runId: string
// returns: many {responseId, questionId, sampleIndex, seed, promptHash, text, extracted, extractionMethod, correct, verdict, finishReason, error, tokensIn, tokensOut, latencyS, reasoning}
// Every completion of a run with its grade, in question and sample order.
MATCH (q:Question)<-[:TO]-(r:Response)-[:IN_RUN]->(:Run {id: $runId})
RETURN r.id AS responseId, q.id AS questionId, r.sampleIndex AS sampleIndex, r.seed AS seed,
       r.promptHash AS promptHash, r.text AS text, r.extracted AS extracted,
       r.extractionMethod AS extractionMethod, r.correct AS correct, r.verdict AS verdict,
       r.finishReason AS finishReason, r.error AS error, r.tokensIn AS tokensIn, r.tokensOut AS tokensOut,
       r.latencyS AS latencyS, r.reasoning AS reasoning
ORDER BY questionId, sampleIndex
