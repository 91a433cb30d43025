"""The ground floor: settings, errors, graph stores, schema and the query registry."""
