// name: scaffolding_responses
// params: $runId: string
// returns: many {responseId, questionId, strategy, exemplars, sampleIndex, text, extracted, correct, verdict, error}
// Every completion of a scaffolding run with its exemplar strategy and the ids of the
// exemplars it was shown (paper 1 NB2), in question, strategy and sample order.
MATCH (q:Question)<-[:TO]-(r:Response)-[:IN_RUN]->(run:Run {id: $runId})
WHERE run.dataset IS NULL OR q.dataset = run.dataset
RETURN r.id AS responseId, q.id AS questionId, r.strategy AS strategy, r.exemplars AS exemplars,
       r.sampleIndex AS sampleIndex, r.text AS text, r.extracted AS extracted, r.correct AS correct,
       r.verdict AS verdict, r.error AS error
ORDER BY questionId, strategy, sampleIndex
