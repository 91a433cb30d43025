// name: framework_concepts
// params: $framework: string
// returns: many {conceptId, localId, code}
// The concepts of one framework.
MATCH (c:Concept {framework: $framework})
RETURN c.id AS conceptId, c.localId AS localId, c.code AS code
ORDER BY conceptId
