// name: concept_examples
// params: $framework: string
// returns: many {conceptId, localId, code, exampleProblem}
// The concepts of a framework that carry an example problem: gold (problem, concept)
// pairs for judging an LLM annotator (paper 1 Appendix B; 326 in the Coherence Map).
MATCH (c:Concept {framework: $framework})
WHERE c.exampleProblem IS NOT NULL AND c.exampleProblem <> ''
RETURN c.id AS conceptId, c.localId AS localId, c.code AS code, c.exampleProblem AS exampleProblem
ORDER BY conceptId
