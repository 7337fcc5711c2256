"""Where each message of a run sits, for runtimes whose messages carry no id (Hermes).

A message's harvest ``sourceId`` must tell two equal messages apart (a "Yes." now and another
"Yes." later in the run are two spans) and yet be the same when one message is sent twice (by
the turn's sync and again when the runtime compresses its context). Role and text alone do
the second but not the first; a place in the run does both.

``Positions`` numbers the messages of completed turns 0, 1, 2, ... in the order they are
synced. A list handed over at compression is matched against them in order (a runtime
compresses its own history, so the list is the run's messages with some left out and some
added: a summary, tool calls and results no turn sync carried); a matched message takes its
number, another one is placed after the last matched one, as ``<number>.<n>`` (``start.<n>``
before any), and kept, so the next compression finds it there too. A turn synced after a
compression already placed its messages (the runtime synced late) takes those places.
The label goes into the key with the text (``key``), so a provider started again, which
counts from 0, takes a new message at an old number as new unless its text is the same too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from palimpsest.integrations.banking import message_key

Message = tuple[str, str]  # (role, text)


@dataclass(slots=True)
class _Placed:
    role: str
    text: str
    label: str
    synced: bool  # numbered by a turn's sync (else placed by a compression)


class Positions:
    """The run's messages in order, as one provider has seen them."""

    def __init__(self) -> None:
        self._placed: list[_Placed] = []
        self._next = 0

    def turn(self, messages: Sequence[Message]) -> list[str]:
        """The labels of one completed turn's messages, numbered after the last turn's."""
        start = max((i + 1 for i, p in enumerate(self._placed) if p.synced), default=0)
        labels: list[str] = []
        for role, text in messages:
            found = self._find(role, text, start, synced=False)
            if found is None:
                placed = _Placed(role, text, str(self._next), synced=True)
                self._next += 1
                self._placed.append(placed)
                start = len(self._placed)
            else:
                placed = self._placed[found]
                placed.synced = True
                start = found + 1
            labels.append(placed.label)
        return labels

    def compressed(self, messages: Sequence[Message]) -> list[str]:
        """The labels of the messages a compression hands over, in the run's order."""
        labels: list[str] = []
        at, anchor, extra = 0, "start", 0
        for role, text in messages:
            found = self._find(role, text, at, synced=None)
            if found is None:
                extra += 1
                placed = _Placed(role, text, f"{anchor}.{extra}", synced=False)
                self._placed.insert(at, placed)
                at += 1
            else:
                placed = self._placed[found]
                at, anchor, extra = found + 1, placed.label, 0
            labels.append(placed.label)
        return labels

    def _find(self, role: str, text: str, start: int, synced: bool | None) -> int | None:
        for i in range(start, len(self._placed)):
            p = self._placed[i]
            if p.role == role and p.text == text and (synced is None or p.synced == synced):
                return i
        return None


def key(run: str, label: str, role: str, text: str) -> str:
    """The ``sourceId`` of the message at ``label`` in ``run``."""
    return message_key(run, label, role, text)
