// name: concept_descriptions
// params: $framework: string
// returns: many {conceptId, code, description, clusterId}
// The concepts of one framework with their description and cluster: what a task
// catalogue built from a sub-curriculum (chosen by code prefix or cluster) needs.
MATCH (c:Concept {framework: $framework})
OPTIONAL MATCH (c)-[:PART_OF]->(k:Cluster)
RETURN c.id AS conceptId, c.code AS code, c.description AS description, k.id AS clusterId
ORDER BY conceptId
