// name: runs_of
// params: $evaluator: string, $model: string, $dataset: string
// returns: many {runId, configHash, config, status, startedAt, finishedAt}
// The runs of one evaluator for one model on one dataset, newest first.
MATCH (r:Run {evaluator: $evaluator, model: $model, dataset: $dataset})
RETURN r.id AS runId, r.configHash AS configHash, r.config AS config, r.status AS status,
       r.startedAt AS startedAt, r.finishedAt AS finishedAt
ORDER BY startedAt DESC
