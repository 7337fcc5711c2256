"""Every Cypher statement of the server, one module per plane, as named constants."""
