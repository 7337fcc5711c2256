"""Fusion per kind of question (recall lever 8; docs/reference/recall.md, Question forms).

``classify`` reads a question's form from its words alone (English rules, deterministic, no
model): when, who, where, how many, why, how, yes-no, list-like, what/which. Anything else
(a statement, a claim, a keyword query) is ``other`` and keeps the defaults.

``TABLE`` holds, per form, the fusion weights and boosts that differ from the settings. It
was chosen by leave-one-conversation-out on the dev conversations (``palimpsest eval locomo
--cv``; docs/notes/recall-quality.md); a form absent from it uses the settings unchanged.
``recall_question_forms = false`` switches the table off.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any, cast

from palimpsest.domain.ranking import fusion as pure

if TYPE_CHECKING:
    from palimpsest.resolvers.recall.request import RecallRequest


class Form(StrEnum):
    WHEN = "when"
    WHO = "who"
    WHERE = "where"
    HOW_MANY = "how_many"
    WHY = "why"
    HOW = "how"
    YES_NO = "yes_no"
    LIST = "list"
    WHAT = "what"
    OTHER = "other"


# A lead-in that does not change the form: "According to Ann, ...", "Based on the chat, ...".
_LEAD_IN = re.compile(r"^\s*(?:according to|based on|given|from)\b[^,?]{0,80},\s*", re.I)
_TIME_NOUN = r"(?:year|month|week|day|date|time|season|decade|century|weekday|period)"
_PLACE_NOUN = r"(?:city|country|state|town|place|location|region|continent|area|island)"
_AUX = (
    r"(?:is|are|was|were|am|do|does|did|has|have|had|can|could|would|will|should|shall|may|"
    r"might|must|isn't|aren't|wasn't|weren't|don't|doesn't|didn't|hasn't|haven't|won't)"
)
_AUXILIARIES = frozenset(_AUX[3:-1].split("|"))
# Nouns ending in "s" that are not plurals, after "what"/"which".
_NOT_PLURAL = frozenset(
    {"is", "was", "has", "does", "this", "status", "news", "process", "business", "series",
     "class", "address", "analysis", "basis", "crisis", "thesis", "bus", "gas", "virus"}
)  # fmt: skip
# A preposition before the question word ("In which year", "For how long", "To whom").
_PREPOSITION = re.compile(
    r"^(?:in|on|at|during|by|to|with|for|from|of|after|before|around|since|until) "
    r"(?=(?:what|which|how|whom|when|where)\b)"
)
_RULES: tuple[tuple[Form, re.Pattern[str]], ...] = (
    (Form.WHEN, re.compile(
        rf"^(?:when|how long ago|(?:what|which) {_TIME_NOUN}s?)\b"
    )),
    (Form.HOW_MANY, re.compile(
        r"^(?:how (?:many|much|long|often|old|far|frequently)|what (?:number|amount|percentage))"
        r"\b"
    )),
    (Form.WHERE, re.compile(rf"^(?:where|(?:what|which) {_PLACE_NOUN})\b")),
    (Form.WHO, re.compile(r"^(?:who|whom|whose)\b")),
    (Form.WHY, re.compile(r"^(?:why|what (?:made|motivated|inspired|caused|prompted|led)|"
                          r"for what reason|how come)\b")),
    (Form.LIST, re.compile(
        r"^(?:(?:what|which) (?:are|were) (?:some|the)|list|name (?:some|all|the)|"
        r"(?:what|which) (?:kinds?|types?|sorts?) of \w+s\b|what all)\b"
    )),
    (Form.HOW, re.compile(r"^how\b")),
    (Form.YES_NO, re.compile(rf"^{_AUX}\b")),
    (Form.WHAT, re.compile(r"^(?:what|which)\b")),
)  # fmt: skip
_WH_WORDS = re.compile(r"^(?:what|which) ([\w'+-]+)(?: ([\w'+-]+))?")


def classify(question: str) -> Form:
    """The question's form from its words. Deterministic; never raises."""
    text = _LEAD_IN.sub("", " ".join(question.lower().replace("\u2019", "'").split()))
    text = _PREPOSITION.sub("", text)
    for form, rule in _RULES:
        if not rule.match(text):
            continue
        if form is Form.WHAT and _plural_object(text):
            return Form.LIST
        return form
    return Form.OTHER


def _plural_object(text: str) -> bool:
    """``what activities ...``, ``which new books ...``: the answer is a list of things."""
    m = _WH_WORDS.match(text)
    if m is None:
        return False
    return any(_plural(w) for w in (m[1], m[2]) if w is not None and w not in _AUXILIARIES)


def _plural(word: str) -> bool:
    return word.endswith("s") and not word.endswith(("ss", "'s")) and word not in _NOT_PLURAL


@dataclass(frozen=True, slots=True)
class Weights:
    """What a form changes: the legs' weights (full-text relative to vector) and the boosts.
    ``None`` keeps the setting."""

    fulltext_weight: float | None = None
    date_boost: float | None = None
    when_boost: float | None = None
    year_boost: float | None = None
    time_boost: float | None = None
    time_when_boost: float | None = None
    speaker_boost: float | None = None
    absent_at_depth: bool | None = None

    def changes(self) -> dict[str, float | bool]:
        return {f.name: v for f in fields(self) if (v := getattr(self, f.name)) is not None}


# The per-form table (docs/notes/recall-quality.md, Fusion per kind of question): only the
# rows chosen alike in at least 4 of the 5 leave-one-conversation-out folds whose held-out
# gain held in at least 4 of them. "why" was chosen identically in all 5 and raised held-out
# nDCG@10 of its questions in all 5 (recall@10 up in 2, never down); every other form's choice
# varied by fold or lost held out, so it keeps the settings. The lever is off by default: the
# row lowers recall@10 of LoCoMo's adversarial questions (category 5, outside the headline the
# folds chose on) from 0.776 to 0.713.
TABLE: dict[Form, Weights] = {
    Form.WHY: Weights(fulltext_weight=2.0, speaker_boost=1.3),
}


@dataclass(frozen=True, slots=True)
class Chosen:
    """The form read from a question and the weights recall used for it (shown in explain)."""

    form: Form
    vector_weight: float
    fulltext_weight: float
    levers: pure.Levers
    changed: tuple[str, ...] = ()  # the settings the table replaced for this form


def apply(req: RecallRequest) -> RecallRequest:
    """The request with its question's form and that form's weights (the planner's first
    step); unchanged, and no form shown, when the lever is off."""
    if not req.levers.question_forms:
        return req
    c = choose(
        req.query, req.vector_weight, req.fulltext_weight, req.levers, True, req.weights_given
    )
    return replace(
        req,
        vector_weight=c.vector_weight,
        fulltext_weight=c.fulltext_weight,
        levers=c.levers,
        form=c.form.value,
    )


def choose(
    question: str,
    vector_weight: float,
    fulltext_weight: float,
    levers: pure.Levers,
    enabled: bool,
    weights_given: bool = False,
    table: dict[Form, Weights] | None = None,
) -> Chosen:
    """The weights for ``question``: the settings, with its form's row of ``table`` (by default
    ``TABLE``) over them when ``enabled``. The full-text weight of a row is relative: the
    settings' full-text weight times it; a call that gave its own weights keeps them."""
    form = classify(question)
    row = (TABLE if table is None else table).get(form) if enabled else None
    if row is None:
        return Chosen(form, vector_weight, fulltext_weight, levers)
    change = row.changes()
    ratio = change.pop("fulltext_weight", None)
    if weights_given:
        ratio = None
    weight = fulltext_weight if ratio is None else fulltext_weight * float(ratio)
    changed = tuple(sorted([*change, *(["fulltext_weight"] if ratio is not None else [])]))
    return Chosen(form, vector_weight, weight, replace(levers, **cast(Any, change)), changed)
