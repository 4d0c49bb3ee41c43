"""tracesql.peers.tracelens."""
