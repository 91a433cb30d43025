// name: gds_project_correct_answers
// params: $learnerIds: list<string>, $questionIds: list<string>, $graph: string
// returns: one {name}
// engine: neo4j
// Projects the bipartite graph of the learners' correct answers on the given questions
// as the GDS graph $graph, for node similarity (KOC, paper 1, Eq. 6).
MATCH (source:Learner)-[r:ANSWERED]->(target:Question)
WHERE source.id IN $learnerIds AND target.id IN $questionIds AND r.correct
WITH gds.graph.project($graph, source, target) AS g
RETURN g.graphName AS name
