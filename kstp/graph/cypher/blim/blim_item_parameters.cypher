// name: blim_item_parameters
// params: $dataset: string
// returns: many {questionId, careless, guess, carelessSe, guessSe, runId}
// The careless-error (beta) and lucky-guess (eta) rates of the dataset's latest BLIM fit.
MATCH (q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
WHERE q.blimRunId IS NOT NULL
RETURN q.id AS questionId, q.careless AS careless, q.guess AS guess, q.carelessSe AS carelessSe,
       q.guessSe AS guessSe, q.blimRunId AS runId
ORDER BY q.position, questionId
