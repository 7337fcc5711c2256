"""The question-form classifier and the per-form weights (resolvers/recall/forms.py).

The phrasings are written here (never taken from an eval set): how people ask a memory.
"""

from __future__ import annotations

import pytest

from palimpsest.domain.ranking.fusion import Levers
from palimpsest.resolvers.recall.forms import Form, Weights, choose, classify

PHRASINGS: list[tuple[str, Form]] = [
    ("When did Priya start her new job?", Form.WHEN),
    ("when is the dentist appointment", Form.WHEN),
    ("What year did we move to Leeds?", Form.WHEN),
    ("Which month was the wedding in?", Form.WHEN),
    ("In which year did Tom graduate?", Form.WHEN),
    ("On what date is the rent due?", Form.WHEN),
    ("How long ago did Sam adopt the cat?", Form.WHEN),
    ("Who recommended the plumber?", Form.WHO),
    ("Whose car did Leo borrow last week?", Form.WHO),
    ("To whom did Ana send the invoice?", Form.WHO),
    ("Where does Marta keep the spare keys?", Form.WHERE),
    ("Which city did the team visit in spring?", Form.WHERE),
    ("In what country was the conference held?", Form.WHERE),
    ("How many dogs does Chen have?", Form.HOW_MANY),
    ("How much did the bike repair cost?", Form.HOW_MANY),
    ("How long has Noor been learning the violin?", Form.HOW_MANY),
    ("How often does Ben go running?", Form.HOW_MANY),
    ("For how long did the outage last?", Form.HOW_MANY),
    ("Why did Jo cancel the trip?", Form.WHY),
    ("What made Omar change his mind about the offer?", Form.WHY),
    ("What inspired the new logo?", Form.WHY),
    ("How did Ravi feel after the interview?", Form.HOW),
    ("How does Elena prepare for a race?", Form.HOW),
    ("Did Kim finish the report?", Form.YES_NO),
    ("Is the meeting still on for Friday?", Form.YES_NO),
    ("Would Dev enjoy a hiking holiday?", Form.YES_NO),
    ("Has anyone fixed the printer yet?", Form.YES_NO),
    ("What are some hobbies Lena picked up this year?", Form.LIST),
    ("What books has Aisha read lately?", Form.LIST),
    ("Which restaurants did we try in Lisbon?", Form.LIST),
    ("What kinds of plants does Yusuf grow?", Form.LIST),
    ("What did Mia bake for the party?", Form.WHAT),
    ("What is Carlos's favourite band?", Form.WHAT),
    ("Which laptop did Hana buy?", Form.WHAT),
    ("What does Felix do for a living?", Form.WHAT),
    ("According to Ines, what is the best route to the coast?", Form.WHAT),
    ("Based on the notes, when is the launch?", Form.WHEN),
    ("the quarterly budget spreadsheet", Form.OTHER),
    ("Vitamin D lowers the risk of fractures.", Form.OTHER),
    ("", Form.OTHER),
]


@pytest.mark.parametrize(("question", "form"), PHRASINGS)
def test_classify_reads_the_form_from_the_words(question: str, form: Form) -> None:
    assert classify(question) is form


def test_classify_ignores_case_spacing_and_curly_quotes() -> None:
    assert classify("  WHO   gave Jo the tickets?") is Form.WHO
    assert classify("What is Carlos\u2019s favourite band?") is Form.WHAT


def test_choose_applies_the_forms_row_over_the_settings() -> None:
    levers = Levers()
    table = {Form.WHEN: Weights(fulltext_weight=1.4, when_boost=1.6, absent_at_depth=False)}
    chosen = choose("When did Kim move?", 1.0, 0.5, levers, True, table=table)
    assert chosen.form is Form.WHEN
    assert chosen.vector_weight == 1.0
    assert chosen.fulltext_weight == pytest.approx(0.7)  # relative to the settings' weight
    assert chosen.levers.when_boost == 1.6
    assert chosen.levers.absent_at_depth is False
    assert chosen.levers.date_boost == levers.date_boost
    assert chosen.changed == ("absent_at_depth", "fulltext_weight", "when_boost")


def test_choose_keeps_the_settings_when_off_or_for_a_form_without_a_row() -> None:
    levers = Levers()
    table = {Form.WHEN: Weights(when_boost=1.6)}
    off = choose("When did Kim move?", 1.0, 1.0, levers, False, table=table)
    assert (off.form, off.levers, off.changed) == (Form.WHEN, levers, ())
    other = choose("Who moved?", 1.0, 1.0, levers, True, table=table)
    assert (other.form, other.levers, other.fulltext_weight) == (Form.WHO, levers, 1.0)


def test_choose_keeps_the_calls_own_weights() -> None:
    table = {Form.WHEN: Weights(fulltext_weight=2.0, when_boost=1.6)}
    chosen = choose("When did Kim move?", 0.3, 0.9, Levers(), True, True, table)
    assert (chosen.vector_weight, chosen.fulltext_weight) == (0.3, 0.9)
    assert chosen.levers.when_boost == 1.6
    assert chosen.changed == ("when_boost",)


def test_the_shipped_table_changes_why_questions_only() -> None:
    levers = Levers()
    why = choose("Why did Jo cancel the trip?", 1.0, 1.0, levers, True)
    assert (why.fulltext_weight, why.levers.speaker_boost) == (2.0, 1.3)
    for q in ("When did Jo cancel the trip?", "What did Jo cancel?", "Vitamin D helps."):
        plain = choose(q, 1.0, 1.0, levers, True)
        assert (plain.fulltext_weight, plain.levers) == (1.0, levers)
