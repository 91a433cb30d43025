// name: datasets
// params: none
// returns: many {datasetId, name, questions, questionsWithConcepts, assesses, learners, answers, questionPrerequisites}
// Each dataset with its size: questions, questions with at least one concept, ASSESSES
// links, learners who answered, ANSWERED edges and derived question prerequisite
// (Eq. 1) edges, all counted in the engine (kstp db stats).
MATCH (d:Dataset)
RETURN d.id AS datasetId, d.name AS name,
       COUNT { MATCH (q:Question)-[:IN_DATASET]->(d) } AS questions,
       COUNT { MATCH (q:Question)-[:IN_DATASET]->(d) WHERE EXISTS { MATCH (q)-[:ASSESSES]->(:Concept) } } AS questionsWithConcepts,
       COUNT { MATCH (:Concept)<-[:ASSESSES]-(:Question)-[:IN_DATASET]->(d) } AS assesses,
       COUNT { MATCH (l:Learner) WHERE EXISTS { MATCH (l)-[:ANSWERED]->(:Question)-[:IN_DATASET]->(d) } } AS learners,
       COUNT { MATCH (:Learner)-[:ANSWERED]->(:Question)-[:IN_DATASET]->(d) } AS answers,
       COUNT { MATCH (:Question)-[:PREREQUISITE_OF]->(:Question)-[:IN_DATASET]->(d) } AS questionPrerequisites
ORDER BY datasetId
