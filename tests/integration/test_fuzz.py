"""Schema-driven fuzzing, bounded: whatever is sent, every error is coded and none INTERNAL.

`palimpsest bench fuzz --operations 10000` is the same code with more examples and a seed.
"""

from __future__ import annotations

import pytest

from palimpsest.config import Settings
from palimpsest.identity.tokens import load_keys
from palimpsest_suites.fuzz import run_fuzz

OPERATIONS = 500


# Open issue: Bolt sockets the neo4j driver opened for a read (cypher/driver/executor.py) are
# garbage collected unclosed during this run, most likely reads cancelled mid-connect when a
# recall's other leg fails (resolvers/recall/planner.py cancels it). Tolerated here only, until
# that is fixed.
@pytest.mark.filterwarnings("ignore:unclosed <socket.socket:ResourceWarning")
def test_generated_requests_get_coded_errors_only(live_server_url: str, settings: Settings) -> None:
    # Derandomized, so the examples follow from the schema: 300 of today's schema reach no
    # permission check, 500 do (a schema change can move that again; the codes below say so).
    r = run_fuzz(live_server_url, load_keys(settings), OPERATIONS, seed=None, derandomize=True)
    assert r["operations"] == OPERATIONS
    assert r["internal"] == 0, r["examples"]
    assert r["untyped_5xx"] == 0, r["examples"]
    assert r["uncoded_errors"] == 0, r["examples"]
    # The generators reach past validation: some requests run and some are refused for cause.
    assert r["succeeded"] > 0
    assert {"INVALID_ARGUMENT", "FORBIDDEN"} <= set(r["error_codes"])
