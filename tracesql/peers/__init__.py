"""tracesql.peers."""
