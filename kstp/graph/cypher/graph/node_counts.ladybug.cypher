// name: node_counts
// params: none
// returns: many {label, count}
// Ladybug: a node has exactly one label, read with label(n).
MATCH (n)
RETURN label(n) AS label, count(*) AS count
ORDER BY label
