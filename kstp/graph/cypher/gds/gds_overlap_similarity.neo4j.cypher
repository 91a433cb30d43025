// name: gds_overlap_similarity
// params: $graph: string, $topK: integer
// returns: many {a, b, similarity}
// engine: neo4j
// Overlap coefficient |A ∩ B| / min(|A|, |B|) of every pair of learners with a correct
// answer in the projection $graph (GDS node similarity; the KOC of paper 1, Eq. 6).
CALL gds.nodeSimilarity.stream($graph, {similarityMetric: 'OVERLAP', topK: $topK})
YIELD node1, node2, similarity
RETURN gds.util.asNode(node1).id AS a, gds.util.asNode(node2).id AS b, similarity
