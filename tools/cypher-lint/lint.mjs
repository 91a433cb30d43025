// kstp's Cypher check: Neo4j 5's own parser and semantic analysis (the official
// editor-support package), run offline over .cypher files.
// Usage: node lint.mjs --schema schema.json FILE.cypher ...
// Exit 1 on any error, and on any warning (with a schema, a misspelt label or
// relationship type is a warning in Neo4j's linter; here it fails the check), save one:
// the Neo4j forms of the bulk-read queries (*.neo4j.cypher) name nodes by `id()`, the
// integer node key kstp's Neo4j store reads and writes by (elementId() is a string of some
// 40 characters per answer, with no integer form), which Neo4j 5 marks deprecated.
import { readFileSync } from 'node:fs';
import { lintCypherQuery, isNotParamError } from '@neo4j-cypher/language-support';

const args = process.argv.slice(2);
let dbSchema = {};
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--schema') dbSchema = JSON.parse(readFileSync(args[++i], 'utf8'));
  else files.push(args[i]);
}
dbSchema = { defaultLanguage: 'CYPHER 5', ...dbSchema };

let failures = 0;
for (const file of files) {
  // Parameters are declared in the file header and checked by kstp's registry.
  const nodeKeys = (d) => file.endsWith('.neo4j.cypher') && /deprecated function\. \('id' has been replaced/.test(d.message);
  const diagnostics = lintCypherQuery(readFileSync(file, 'utf8'), dbSchema).diagnostics
    .filter(isNotParamError).filter((d) => !nodeKeys(d));
  for (const d of diagnostics) {
    failures++;
    const kind = d.severity === 1 ? 'error' : 'warning';
    const { line, character } = d.range.start;
    console.log(`${file}:${line + 1}:${character + 1}: ${kind}: ${d.message.replace(/\s+/g, ' ')}`);
  }
}
console.log(`cypher-lint: ${files.length} files, ${failures} problems`);
process.exitCode = failures ? 1 : 0;
