// name: datasets
// params: none
// returns: many {datasetId, name, questions, questionsWithConcepts, assesses, learners, answers, questionPrerequisites}
// Each dataset with its size (see datasets.cypher). Neo4j form: the edge counts are sums
// of each question's degree, which Neo4j keeps per node and type, instead of an expansion
// of every edge (the demo graph's 1.2 M Eq. 1 edges: 1.3 s -> 0.03 s). The answers of
// learners an unfinished ingest keeps out of sight (StagedLearner, kstp.graph.neo4j.STAGED)
// are taken off the degrees: read from those learners, nothing to read when there are none.
MATCH (d:Dataset)
CALL (d) {
  OPTIONAL MATCH (q:Question)-[:IN_DATASET]->(d)
  RETURN count(q) AS questions,
         count(CASE WHEN EXISTS { (q)-[:ASSESSES]->(:Concept) } THEN 1 END) AS questionsWithConcepts,
         sum(COUNT { (q)-[:ASSESSES]->() }) AS assesses,
         sum(COUNT { (q)<-[:ANSWERED]-() }) AS answers,
         sum(COUNT { (q)<-[:PREREQUISITE_OF]-() }) AS questionPrerequisites
}
CALL (d) {
  OPTIONAL MATCH (:StagedLearner)-[hidden:ANSWERED]->(:Question)-[:IN_DATASET]->(d)
  RETURN count(hidden) AS hidden
}
RETURN d.id AS datasetId, d.name AS name, questions, questionsWithConcepts, assesses,
       COUNT { MATCH (l:Learner) WHERE EXISTS { MATCH (l)-[:ANSWERED]->(:Question)-[:IN_DATASET]->(d) } } AS learners,
       answers - hidden AS answers, questionPrerequisites
ORDER BY datasetId
