// name: question_keys
// params: $dataset: string
// returns: many {questionId, questionKey}
// Neo4j form: the integer node id, as the Neo4j form of `answer_keys_in_range` returns it.
MATCH (q:Question)
WHERE q.dataset = $dataset
RETURN q.id AS questionId, id(q) AS questionKey
