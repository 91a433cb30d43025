// name: dataset_questions
// params: $dataset: string
// returns: many {questionId, localId, text, answer}
// The questions (items) of a dataset: the domain Q of its knowledge structure.
MATCH (q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
RETURN q.id AS questionId, q.localId AS localId, q.text AS text, q.answer AS answer
ORDER BY q.position, questionId
