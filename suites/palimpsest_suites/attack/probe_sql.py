"""Attack-matrix probe of SQL Memory: work built inside one function call, and existence oracles.

Each case runs against a live server over GraphQL and reports ``passed`` with its figures:

- ``printf_padding``: ``printf('%.*c', 2000000000, 'x')`` (SQLite) or ``format('%2000000000s')``
  (PostgreSQL), once and four at once; passes when every call ends in a coded refusal or limit
  (never INTERNAL, never a value) within ``_ENDS_WITHIN_S``.
- ``built_values``: the other builders of big values (``zeroblob``, ``randomblob``, ``repeat``,
  ``lpad``, a huge recursive CTE or ``generate_series``) and work inside one call (``instr`` or
  ``replace`` with a long needle, ``LIKE``/``GLOB`` with a long computed pattern, 2,000
  ``upper()`` of 1 MB in one row), one at a time, same rule; a case that ended late is asked
  again, up to three times in all (``retried`` counts them), so a call the machine's load
  delayed is told from one that outlives the limit.
- ``catalog_oracle``: casts and functions that look names up in the catalogs, asked about the
  other tenant's SQL scope (written first, so its schema and role exist) and about a scope that
  exists nowhere; passes when the two answers are the same.

Both backends answer every statement here (SQLite and PostgreSQL spellings are tried; a
statement the backend cannot parse is a coded refusal, which counts as ended).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from typing import Any

import httpx

from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key
from palimpsest.identity.tokens import TokenKeys, mint

_ENDS_WITHIN_S = 5.0  # far above any sane sqlTimeoutMs, far below the 15 s a printf once took
_CODED = frozenset({"INVALID_ARGUMENT", "QUOTA_EXCEEDED"})
# Work built in one call may also finish under the limit on a fast machine: rows then, no
# bypass; a call that outlives the limit is one.
_ENDED = _CODED | {"rows"}
_ATTEMPTS = 3  # for a case that ended late: see ``_built``
QUERY = (
    "query($s: Scope!, $q: String!, $a: JSON) "
    "{ sqlQuery(scope: $s, statement: $q, args: $a) { rows } }"
)
EXEC = (
    "mutation($s: Scope!, $b: [SqlStatementInput!]!) "
    "{ sqlExec(scope: $s, statements: $b) { results { rowsAffected } } }"
)
# 2,000 upper() calls of a 1 MB value in one row: fewer VM steps than one progress check.
_UPPER_COLUMN = "length(max(" + ", ".join(["upper(x)"] * 100) + "))"
_UPPER_COLUMNS = ", ".join([_UPPER_COLUMN] * 20)
_UPPER_MANY = f"WITH a(x) AS (SELECT hex(zeroblob(500000))) SELECT {_UPPER_COLUMNS} FROM a"  # noqa: S608
PRINTF = [
    "SELECT printf('%.*c', 2000000000, 'x')",
    "SELECT length(format('%2000000000s', 'x'))",
]
BUILT = [
    "SELECT zeroblob(2000000000)",
    "SELECT randomblob(2000000000)",
    "SELECT length(repeat('x', 2000000000))",
    "SELECT length(lpad('x', 2000000000))",
    "SELECT length(format('%*s', 2000000000, 'x'))",
    "SELECT count(*) FROM generate_series(1, 1000000000000)",
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT count(*) FROM c",
    # Work inside one call that no time check between steps stops (SQLite kills its worker;
    # PostgreSQL refuses the computed pattern and the oversized build before they run).
    "SELECT instr(hex(zeroblob(250000)) || 'b', hex(zeroblob(125000)) || 'b')",
    "SELECT length(replace(hex(zeroblob(250000)), hex(zeroblob(125000)) || 'b', 'x'))",
    "SELECT instr(zeroblob(500000), CAST(CAST(zeroblob(250000) AS TEXT) || char(1) AS BLOB))",
    "SELECT hex(zeroblob(100000)) LIKE '%' || hex(zeroblob(4998)) || 'b%'",
    "SELECT hex(zeroblob(100000)) GLOB '*' || hex(zeroblob(4998)) || 'b*'",
    _UPPER_MANY,
    "SELECT repeat('a', 500000) LIKE '%' || repeat('a', 250000) || 'b%'",
    "SELECT repeat('a', 500000) ILIKE '%' || repeat('a', 250000) || 'b%'",
    "SELECT length(repeat('xxxxxxxxxx', 100000000))",
    "SELECT length(lpad('x', 260000000, 'é'))",
]
ORACLES = [
    "SELECT 'sqlmem_s_{key}'::regnamespace",
    "SELECT CAST('sqlmem_r_{key}' AS regrole)",
    "SELECT 'sqlmem_s_{key}.t'::regclass",
    "SELECT nextval('sqlmem_s_{key}.t_id_seq')",
    "SELECT to_regnamespace('sqlmem_s_{key}')",
]


async def run(url: str, keys: TokenKeys, tenants: tuple[str, str]) -> dict[str, dict[str, Any]]:
    attacker = mint(keys, tenant=tenants[0], user="probe-sql-attacker", agent="probe")
    victim_user = "probe-sql-victim"
    victim = mint(keys, tenant=tenants[1], user=victim_user, agent="probe")
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        printf = await _printf(client, attacker)
        built = await _built(client, attacker)
        oracle = await _oracle(
            client, attacker, victim, scope_key(tenants[1], Scope.USER, victim_user)
        )
    return {"printf_padding": printf, "built_values": built, "catalog_oracle": oracle}


async def _call(
    client: httpx.AsyncClient, token: str, query: str, variables: dict[str, Any]
) -> tuple[float, str]:
    """Seconds taken, and the answer: an error code, or ``rows``."""
    started = time.monotonic()
    response = await client.post(
        "/graphql",
        json={"query": query, "variables": variables},
        headers={"Authorization": f"Bearer {token}"},
    )
    elapsed = time.monotonic() - started
    body = response.json()
    errors = body.get("errors") or []
    if errors:
        code = (errors[0].get("extensions") or {}).get("code", "NO_CODE")
        return elapsed, f"{code}: {errors[0].get('message', '')}"
    return elapsed, "rows"


async def _ends(client: httpx.AsyncClient, token: str, sql: str) -> tuple[float, str]:
    return await _call(client, token, QUERY, {"s": "USER", "q": sql, "a": None})


def _ended(answers: list[tuple[float, str]], allowed: frozenset[str] = _CODED) -> bool:
    """Each call ended in time with an answer in ``allowed``."""
    return all(s < _ENDS_WITHIN_S and _code(answer) in allowed for s, answer in answers)


def _code(answer: str) -> str:
    return answer.split(":", 1)[0]


async def _printf(client: httpx.AsyncClient, token: str) -> dict[str, Any]:
    single = [await _ends(client, token, sql) for sql in PRINTF]
    together = await asyncio.gather(*(_ends(client, token, PRINTF[0]) for _ in range(4)))
    return {
        "passed": _ended(single) and _ended(list(together)),
        "single_max_s": round(max(s for s, _ in single), 3),
        "four_at_once_max_s": round(max(s for s, _ in together), 3),
        "codes": sorted({_code(a) for _, a in single + list(together)}),
    }


async def _built(client: httpx.AsyncClient, token: str) -> dict[str, Any]:
    answers, retried = [], 0
    for sql in BUILT:
        answer = await _ends(client, token, sql)
        # A bounded call that a starved machine answered late ends in time when asked again;
        # a call that outlives the limit by its nature outlives it every time.
        for _ in range(_ATTEMPTS - 1):
            if _ended([answer], _ENDED):
                break
            retried += 1
            answer = await _ends(client, token, sql)
        answers.append(answer)
    return {
        "passed": _ended(answers, _ENDED),
        "max_s": round(max(s for s, _ in answers), 3),
        "cases": len(answers),
        "retried": retried,
        "codes": sorted({_code(a) for _, a in answers}),
    }


async def _oracle(
    client: httpx.AsyncClient, attacker: str, victim: str, victim_key: str
) -> dict[str, Any]:
    table = "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, a TEXT)"
    await _call(client, victim, EXEC, {"s": "USER", "b": [{"statement": table}]})
    differ = 0
    for probe in ORACLES:
        # The key anyone can compute for the victim, and one that names nothing.
        answers = []
        for key in (victim_key, uuid.uuid4().hex):
            _, answer = await _ends(client, attacker, probe.format(key=key))
            answers.append(answer.replace(key, "<key>"))
        differ += answers[0] != answers[1]
    return {"passed": differ == 0, "probes": len(ORACLES), "answers_that_differ": differ}
