"""What the development machine and CI run beside the API, fetched from package registries and
checked against pinned hashes: the managed Neo4j (``neo4j``), the managed PostgreSQL
(``postgres``) and GraphiQL's offline files (``graphiql``)."""
