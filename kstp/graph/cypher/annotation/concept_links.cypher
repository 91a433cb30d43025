// name: concept_links
// params: $dataset: string
// returns: many {questionId, conceptId, source, runId}
// Every (question, concept) link of a dataset with where it came from: a Q-matrix, a
// concept map, or an LLM annotation run (source "llm:<model>", paper 1 §3.2).
MATCH (:Dataset {id: $dataset})<-[:IN_DATASET]-(q:Question)-[a:ASSESSES]->(c:Concept)
RETURN q.id AS questionId, c.id AS conceptId, a.source AS source, a.runId AS runId
ORDER BY questionId, conceptId
