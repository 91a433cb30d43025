// name: relationship_counts
// params: none
// returns: many {type, count}
// Ladybug: the relationship type is read with label(r).
MATCH ()-[r]->()
RETURN label(r) AS type, count(*) AS count
ORDER BY type
