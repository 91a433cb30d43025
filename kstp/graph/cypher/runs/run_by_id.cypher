// name: run_by_id
// params: $runId: string
// returns: many {runId, evaluator, model, backend, dataset, config, status, startedAt, finishedAt}
// One run's record: a report recomputes from its stored configuration, so it needs
// the run by id rather than by (evaluator, model, dataset).
MATCH (r:Run {id: $runId})
RETURN r.id AS runId, r.evaluator AS evaluator, r.model AS model, r.backend AS backend, r.dataset AS dataset,
       r.config AS config, r.status AS status, r.startedAt AS startedAt, r.finishedAt AS finishedAt
