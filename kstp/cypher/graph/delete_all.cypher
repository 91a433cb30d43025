// name: delete_all
// params: none
// returns: many {}
// Remove every node and relationship (the schema stays).
MATCH (n)
DETACH DELETE n
