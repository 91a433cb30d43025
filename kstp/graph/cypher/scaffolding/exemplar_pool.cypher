// name: exemplar_pool
// params: $dataset: string
// returns: many {questionId, text, answer, answerType, solution, position, embeddingModel, embedding}
// The questions of a dataset with what an in-context exemplar shows (problem, solution,
// answer), its item type and its stored sentence embedding (paper 1 §3.3.1, NB2).
MATCH (q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
RETURN q.id AS questionId, q.text AS text, q.answer AS answer, q.answerType AS answerType,
       q.solution AS solution, q.position AS position, q.embeddingModel AS embeddingModel,
       q.embedding AS embedding
ORDER BY q.position, questionId
