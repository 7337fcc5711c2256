"""The processes beside the server: the consolidator, the sweeper, the re-embedder, document
ingest, export and import (``portability``) and the queue's metrics. Each drives the core
(``resolvers/``) over ``Services``; none is imported by the core."""
