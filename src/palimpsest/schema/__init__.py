"""Neo4j constraints and indexes, and the domain models."""
