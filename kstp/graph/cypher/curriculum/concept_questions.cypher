// name: concept_questions
// params: $conceptId: string
// returns: many {questionId, datasetId, localId, text, source, verified}
// The questions that assess one concept (ASSESSES), with their dataset and the link's
// source and verification, by dataset and question id.
MATCH (q:Question)-[a:ASSESSES]->(:Concept {id: $conceptId})
MATCH (q)-[:IN_DATASET]->(d:Dataset)
RETURN q.id AS questionId, d.id AS datasetId, q.localId AS localId, q.text AS text, a.source AS source,
       a.verified AS verified
ORDER BY datasetId, questionId
