// name: node_counts
// params: none
// returns: many {label, count}
// Number of nodes per label.
MATCH (n)
UNWIND labels(n) AS label
RETURN label, count(*) AS count
ORDER BY label
