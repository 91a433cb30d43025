// name: space_lower_bound
// params: $dataset: string
// returns: one {questions, withoutPrerequisites, neededByNone}
// How many questions of a dataset have no stored prerequisite, and how many no question
// needs. Each group is an antichain of the surmise relation, so the knowledge space has
// at least 2 to the larger number of states: a bound read without reading the edges.
MATCH (q:Question)-[:IN_DATASET]->(:Dataset {id: $dataset})
OPTIONAL MATCH (p:Question)-[:PREREQUISITE_OF]->(q)
WITH q, count(p) AS prerequisites
OPTIONAL MATCH (q)-[:PREREQUISITE_OF]->(r:Question)
WITH q, prerequisites, count(r) AS dependants
RETURN count(q) AS questions,
       sum(CASE WHEN prerequisites = 0 THEN 1 ELSE 0 END) AS withoutPrerequisites,
       sum(CASE WHEN dependants = 0 THEN 1 ELSE 0 END) AS neededByNone
