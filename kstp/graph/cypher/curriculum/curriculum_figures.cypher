// name: curriculum_figures
// params: $framework: string
// returns: one {domains, clusters, concepts, prerequisiteEdges, relatedEdges}
// Size of one framework as in paper 1 Table 1: domains, clusters, concepts, direct
// prerequisite edges and (non-directed, stored once) related edges.
MATCH (f:Framework {id: $framework})
RETURN COUNT { MATCH (d:Domain)-[:PART_OF]->(f) } AS domains,
       COUNT { MATCH (c:Cluster) WHERE EXISTS { MATCH (c)-[:PART_OF*1..2]->(f) } } AS clusters,
       COUNT { MATCH (c:Concept {framework: $framework}) } AS concepts,
       COUNT { MATCH (:Concept {framework: $framework})-[:PREREQUISITE_OF]->(:Concept {framework: $framework}) } AS prerequisiteEdges,
       COUNT { MATCH (:Concept {framework: $framework})-[:RELATED_TO]->(:Concept {framework: $framework}) } AS relatedEdges
