// name: rqeval_responses
// params: $runId: string
// returns: many {responseId, questionId, sampleIndex, text, extracted, correct, verdict, error, tokensOut, ls, stepPairs, contradictions, nliBackend, ss}
// Every completion of an RQEval run with its canonical answer, token count and stored
// logical-coherence figures, so scores are recomputed (and NLI resumed) without
// inference (paper 3, §3.2).
MATCH (q:Question)<-[:TO]-(r:Response)-[:IN_RUN]->(run:Run {id: $runId})
WHERE run.dataset IS NULL OR q.dataset = run.dataset
RETURN r.id AS responseId, q.id AS questionId, r.sampleIndex AS sampleIndex, r.text AS text,
       r.extracted AS extracted, r.correct AS correct, r.verdict AS verdict, r.error AS error,
       r.tokensOut AS tokensOut, r.ls AS ls, r.stepPairs AS stepPairs, r.contradictions AS contradictions,
       r.nliBackend AS nliBackend, r.ss AS ss
ORDER BY questionId, sampleIndex
