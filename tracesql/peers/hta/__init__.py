"""tracesql.peers.hta."""
