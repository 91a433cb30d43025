// name: evaluator_runs
// params: $evaluator: string, $dataset: string
// returns: many {runId, model, status, startedAt}
// Every run of one evaluator on one dataset, all models, newest first within a model:
// what a report compares across models (e.g. paper 1 Figure 3).
MATCH (r:Run {evaluator: $evaluator, dataset: $dataset})
RETURN r.id AS runId, r.model AS model, r.status AS status, r.startedAt AS startedAt
ORDER BY model, startedAt DESC
