// name: concepts_questions
// params: $conceptIds: list<string>
// returns: many {conceptId, questionId, datasetId, localId, text, source, verified}
// concept_questions of many concepts in one read (the explorer reads a framework's concept
// pages' questions at once): each concept's questions, by concept, then as concept_questions
// orders them.
MATCH (q:Question)-[a:ASSESSES]->(c:Concept)
WHERE c.id IN $conceptIds
MATCH (q)-[:IN_DATASET]->(d:Dataset)
RETURN c.id AS conceptId, q.id AS questionId, d.id AS datasetId, q.localId AS localId, q.text AS text,
       a.source AS source, a.verified AS verified
ORDER BY conceptId, datasetId, questionId
