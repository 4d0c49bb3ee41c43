"""tracesql.parallel."""
