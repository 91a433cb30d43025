// name: verified_question_concepts
// params: $dataset: string
// returns: many {questionId, conceptId}
// The verified part of a dataset's Q-matrix: (question, concept) pairs whose ASSESSES link
// a person checked (verified = true); paper 1 §4, the XES-verified subset of Table 3.
MATCH (:Dataset {id: $dataset})<-[:IN_DATASET]-(q:Question)-[a:ASSESSES]->(c:Concept)
WHERE a.verified = true
RETURN q.id AS questionId, c.id AS conceptId
ORDER BY questionId, conceptId
