"""tracesql.store."""
