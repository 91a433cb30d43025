// name: nextstep_responses
// params: $runId: string
// returns: many {responseId, model, catalogue, stateId, condition, presentation, attempt, cellKey, text, finishReason, error, verdict, invalidKind, predicted, predictedPairs, reference, correct, precision, recall, f1, jaccard, symDiff}
// Every attempt of a next-step recommendation run, in cell and attempt order: what
// kstp report nextstep re-parses and re-scores without inference (paper 2, §3-4).
MATCH (r:Response)-[:IN_RUN]->(:Run {id: $runId})
WHERE r.cellKey IS NOT NULL
RETURN r.id AS responseId, r.model AS model, r.catalogue AS catalogue, r.stateId AS stateId,
       r.condition AS condition, r.presentation AS presentation, r.attempt AS attempt, r.cellKey AS cellKey,
       r.text AS text, r.finishReason AS finishReason, r.error AS error, r.verdict AS verdict,
       r.invalidKind AS invalidKind, r.predicted AS predicted, r.predictedPairs AS predictedPairs,
       r.reference AS reference, r.correct AS correct, r.precision AS precision, r.recall AS recall,
       r.f1 AS f1, r.jaccard AS jaccard, r.symDiff AS symDiff
ORDER BY cellKey, attempt
