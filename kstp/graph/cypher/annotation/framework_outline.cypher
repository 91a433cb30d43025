// name: framework_outline
// params: $framework: string
// returns: many {clusterId, clusterName, domainName, grade, conceptId, code, description}
// Every concept of a framework with its cluster and domain: the menu of the two-stage
// LLM annotation (clusters first, then concepts inside the chosen clusters; paper 1
// §3.2). Concepts outside any cluster are not offered.
MATCH (c:Concept {framework: $framework})-[:PART_OF]->(k:Cluster)
OPTIONAL MATCH (k)-[:PART_OF]->(d:Domain)
RETURN k.id AS clusterId, k.name AS clusterName, d.name AS domainName, d.grade AS grade,
       c.id AS conceptId, c.code AS code, c.description AS description
ORDER BY clusterId, conceptId
