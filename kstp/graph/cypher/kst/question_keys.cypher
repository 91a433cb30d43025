// name: question_keys
// params: $dataset: string
// returns: many {questionId, questionKey}
// The engine's node key of each question of a dataset, as `answer_keys_in_range` returns
// it: the id itself here, the node offset in the Ladybug form.
MATCH (q:Question)
WHERE q.dataset = $dataset
RETURN q.id AS questionId, q.id AS questionKey
