"""Tenant shards (``PALIMPSEST_NEO4J_SHARDS``): several Neo4j servers, each holding whole
tenants; the directory that says which; the routing that runs each unit of work on its
tenant's shard (docs/decisions/0011-tenant-shards.md, docs/scale.md)."""

from palimpsest.cypher.shards.connect import connect_shards
from palimpsest.cypher.shards.directory import Directory
from palimpsest.cypher.shards.policy import place
from palimpsest.cypher.shards.router import RoutedExecutor, ShardedDatabase, ShardRouter
from palimpsest.cypher.shards.topology import ShardSpec, Topology, topology

__all__ = [
    "Directory",
    "RoutedExecutor",
    "ShardRouter",
    "ShardSpec",
    "ShardedDatabase",
    "Topology",
    "connect_shards",
    "place",
    "topology",
]
