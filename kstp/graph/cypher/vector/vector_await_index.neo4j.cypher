// name: vector_await_index
// params: $name: string, $seconds: integer
// returns: many {}
// engine: neo4j
// Waits until the index $name is ONLINE, failing after $seconds.
CALL db.awaitIndex($name, $seconds)
