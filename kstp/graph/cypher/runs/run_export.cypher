// name: run_export
// params: $runId: string
// returns: many {responseId, questionId, localId, dataset, question, gold, prompt, promptHash, sampleIndex, seed, text, reasoning, extracted, extractionMethod, correct, verdict, finishReason, error, tokensIn, tokensOut, latencyS, createdAt}
// Every sample of a run as data, one row each: the question with its gold answer, the chat
// asked (JSON; null for a sample stored before prompts were), the reply, the answer read
// from it, the verdict, tokens and latency. What kstp runs export writes, --log-samples
// logs and kstp runs diff pairs; in question and sample order (a sample of no question first).
MATCH (run:Run {id: $runId})
WITH coalesce(run.dataset, '') AS dataset
MATCH (r:Response)-[:IN_RUN]->(:Run {id: $runId})
OPTIONAL MATCH (r)-[:TO]->(q:Question)
WHERE dataset = '' OR q.dataset = dataset
WITH r, q, coalesce(q.id, '') AS byQuestion
RETURN r.id AS responseId, q.id AS questionId, q.localId AS localId, q.dataset AS dataset, q.text AS question,
       q.answer AS gold, r.prompt AS prompt, r.promptHash AS promptHash, r.sampleIndex AS sampleIndex,
       r.seed AS seed, r.text AS text, r.reasoning AS reasoning, r.extracted AS extracted,
       r.extractionMethod AS extractionMethod, r.correct AS correct, r.verdict AS verdict,
       r.finishReason AS finishReason, r.error AS error, r.tokensIn AS tokensIn, r.tokensOut AS tokensOut,
       r.latencyS AS latencyS, r.createdAt AS createdAt
ORDER BY byQuestion, sampleIndex, responseId
