// name: question_keys
// params: $dataset: string
// returns: many {questionId, questionKey}
// Ladybug form: the node offset (stable while no node of the label is deleted).
MATCH (q:Question)
WHERE q.dataset = $dataset
RETURN q.id AS questionId, offset(id(q)) AS questionKey
