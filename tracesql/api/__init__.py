"""tracesql.api."""
