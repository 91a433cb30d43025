// name: run_members
// params: $runId: string
// returns: many {label, id, shared}
// The nodes a run owns: its Responses (shared: the completion is also linked into
// another run, which keeps it), the CoT steps of the Responses it alone holds, and
// the non-human Learners that gave its Responses (shared: they gave Responses of
// another run too). What kstp runs delete removes, with the Run itself.
MATCH (r:Response)-[:IN_RUN]->(:Run {id: $runId})
RETURN 'Response' AS label, r.id AS id, EXISTS { MATCH (r)-[:IN_RUN]->(o:Run) WHERE o.id <> $runId } AS shared
UNION ALL
MATCH (r:Response)-[:IN_RUN]->(:Run {id: $runId})
WHERE NOT EXISTS { MATCH (r)-[:IN_RUN]->(o:Run) WHERE o.id <> $runId }
MATCH (r)-[:HAS_STEP]->(s:CotStep)
RETURN 'CotStep' AS label, s.id AS id, false AS shared
UNION ALL
MATCH (l:Learner)-[:GAVE]->(:Response)-[:IN_RUN]->(:Run {id: $runId})
WHERE l.kind <> 'human'
WITH DISTINCT l
RETURN 'Learner' AS label, l.id AS id,
       EXISTS { MATCH (l)-[:GAVE]->(:Response)-[:IN_RUN]->(o:Run) WHERE o.id <> $runId } AS shared
