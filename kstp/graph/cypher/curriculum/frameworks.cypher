// name: frameworks
// params: none
// returns: many {frameworkId, name, source}
// The curricula (concept frameworks) in the graph.
MATCH (f:Framework)
RETURN f.id AS frameworkId, f.name AS name, f.source AS source
ORDER BY frameworkId
