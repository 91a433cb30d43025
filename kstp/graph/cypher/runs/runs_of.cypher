// name: runs_of
// params: $evaluator: string, $model: string, $dataset: string
// returns: many {runId, configHash, config, status, startedAt, finishedAt, responses}
// The runs of one evaluator for one model on one dataset, newest first, with how many
// Responses each holds (a run that holds none has no results to keep apart).
MATCH (r:Run {evaluator: $evaluator, model: $model, dataset: $dataset})
OPTIONAL MATCH (x:Response)-[:IN_RUN]->(r)
WITH r, count(x) AS responses
RETURN r.id AS runId, r.configHash AS configHash, r.config AS config, r.status AS status,
       r.startedAt AS startedAt, r.finishedAt AS finishedAt, responses
ORDER BY startedAt DESC
