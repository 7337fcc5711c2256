"""SQL Memory on PostgreSQL: a schema and a login role per scope (layer 2 is its privileges)."""
