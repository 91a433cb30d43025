// name: question_concepts
// params: $dataset: string
// returns: many {questionId, conceptId}
// The Q-matrix of a dataset as (question, concept) pairs from ASSESSES.
MATCH (:Dataset {id: $dataset})<-[:IN_DATASET]-(q:Question)-[:ASSESSES]->(c:Concept)
RETURN q.id AS questionId, c.id AS conceptId
ORDER BY questionId, conceptId
