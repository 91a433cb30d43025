// name: vector_indexes
// params: none
// returns: many {name, dimensions, similarity}
// engine: neo4j
// The vector indexes on Question.embedding, with their dimension (null: any) and
// similarity function.
SHOW VECTOR INDEXES YIELD name, labelsOrTypes, properties, options
WHERE labelsOrTypes = ['Question'] AND properties = ['embedding']
RETURN name, options.indexConfig.`vector.dimensions` AS dimensions,
       options.indexConfig.`vector.similarity_function` AS similarity
