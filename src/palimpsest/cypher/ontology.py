"""The tenant ontology: one ``:Ontology`` node in the tenant scope holding its Markdown."""

from palimpsest.cypher.driver.executor import Statement

GET_ONTOLOGY = Statement(
    "GET_ONTOLOGY",
    """
MATCH (o:Ontology {scope_key: $scope_key})
RETURN o.markdown AS markdown, o.status AS status, o.updated_at AS updated_at,
       o.agent_name AS agent_name
""",
)

SET_ONTOLOGY = Statement(
    "SET_ONTOLOGY",
    """
MERGE (o:Ontology {scope_key: $scope_key})
ON CREATE SET o.tenant_id = $tenant_id, o.scope = $scope, o.owner_id = $owner_id,
              o.created_at = $now
SET o.markdown = $markdown, o.status = $status, o.updated_at = $now,
    o.session_id = $session_id, o.run_id = $run_id, o.agent_name = $agent_name,
    o.model = $model, o.origin = $origin
RETURN o.markdown AS markdown, o.status AS status, o.updated_at AS updated_at,
       o.agent_name AS agent_name
""",
)
