// name: relationship_counts
// params: none
// returns: many {type, count}
// Number of relationships per type.
MATCH ()-[r]->()
RETURN type(r) AS type, count(*) AS count
ORDER BY type
