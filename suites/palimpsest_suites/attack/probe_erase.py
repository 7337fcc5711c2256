"""Probe: eraseUser with ids that could name nobody, and with a token narrowed to USER memory.

Each case plants one member with a key/value entry, then tries to erase them the wrong way,
and checks that the member's entry is still there afterwards. Cases:

- ``unnameable_ids``: ids with a NUL, a zero-width character or surrounding white space,
  empty, or over the length limit are INVALID_ARGUMENT (they once got a DONE receipt that
  removed nothing);
- ``case_miss``: another case of the id names another user: DONE with ``matched`` false;
- ``narrowed_admin``: an admin whose token grants only USER memory is FORBIDDEN.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import httpx

from palimpsest.identity import Role, Scope
from palimpsest.identity.tokens import TokenKeys, mint

# Refusals are asked without ``matched``, so a server that lacks the field still answers them.
ERASE_PLAIN = """mutation($u: ID!) { eraseUser(userId: $u) { status removed { entries } } }"""
ERASE = """mutation($u: ID!) { eraseUser(userId: $u) { status matched removed { entries } } }"""
SET = """mutation($k: String!) { memorySet(scope: USER, key: $k, value: 1) { key } }"""
GET = """query($k: String!) { memory(scope: USER, key: $k) { key } }"""


async def run(url: str, keys: TokenKeys, tenants: tuple[str, str]) -> dict[str, dict[str, Any]]:
    tenant = tenants[0]
    user = f"ev{secrets.token_hex(4)}"
    member = mint(keys, tenant=tenant, user=user, agent="probe")
    admin = mint(keys, tenant=tenant, user="probe-admin", roles={Role.ADMIN})
    narrowed = mint(
        keys, tenant=tenant, user="probe-admin2", roles={Role.ADMIN}, memory_scopes={Scope.USER}
    )
    async with httpx.AsyncClient(base_url=url, timeout=30) as client:

        async def gql(query: str, token: str, **variables: Any) -> dict[str, Any]:
            headers = {"Authorization": f"Bearer {token}"}
            body = {"query": query, "variables": variables}
            response = await client.post("/graphql", json=body, headers=headers)
            found: dict[str, Any] = response.json()
            return found

        def code(body: dict[str, Any]) -> str | None:
            errors = body.get("errors")
            return str(errors[0].get("extensions", {}).get("code")) if errors else None

        async def still_there() -> bool:
            found = await gql(GET, member, k="canary")
            return bool((found.get("data") or {}).get("memory"))

        await gql(SET, member, k="canary")
        bad = [user + "\x00", "\u200b" + user, user + "\u200d", f" {user}", "", "x" * 257]
        started = time.perf_counter()
        codes = [code(await gql(ERASE_PLAIN, admin, u=b)) for b in bad]
        unnameable = {
            "passed": codes == ["INVALID_ARGUMENT"] * len(bad) and await still_there(),
            "ids": len(bad),
            "refused": codes.count("INVALID_ARGUMENT"),
            "seconds": round(time.perf_counter() - started, 3),
        }
        miss = (await gql(ERASE, admin, u=user.upper())).get("data") or {}
        receipt = miss.get("eraseUser") or {}
        case_miss = {
            "passed": receipt.get("status") == "DONE"
            and receipt.get("matched") is False
            and await still_there(),
            "matched": receipt.get("matched"),
        }
        narrowed_code = code(await gql(ERASE_PLAIN, narrowed, u=user))
        narrowed_admin = {
            "passed": narrowed_code == "FORBIDDEN" and await still_there(),
            "code": narrowed_code,
        }
    return {
        "unnameable_ids": unnameable,
        "case_miss": case_miss,
        "narrowed_admin": narrowed_admin,
    }
