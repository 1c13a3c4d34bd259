"""Tests for lab.tools.findings.

The evidence rule feeds the simulated models, so it feeds the reward: try to game it (hypothesis).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lab.tools.findings import finding
from lab.world.task import evidence_found

QUESTION = "Compute 431^5044 mod 8335."
numbers = st.integers(min_value=0, max_value=10**9).map(str)


@settings(max_examples=200, deadline=None)
@given(numbers, st.lists(numbers, min_size=1, max_size=6), st.sampled_from([", ", " or ", "\n", " / ", "; "]),
       st.booleans())
def test_candidates_beside_the_answer_are_never_evidence(answer, others, sep, one_finding):
    others = [o for o in dict.fromkeys(others) if o != answer]
    if not others:
        return
    candidates = [*others, answer] if len(answer) % 2 else [answer, *others]
    prompt = f"{QUESTION}\nFacts: {sep.join(candidates)}"
    # found by one program printing them all, or by one program per guess: either way, rivals
    findings = [sep.join(candidates)] if one_finding else [f"{c}\n" for c in candidates]
    assert not evidence_found([answer], prompt, findings, QUESTION)


@settings(max_examples=200, deadline=None)
@given(numbers, st.text(alphabet="abcdefghij .:", max_size=30))
def test_a_computed_answer_passed_on_alone_is_evidence_and_an_invented_one_is_not(answer, words):
    prompt = f"{QUESTION}\n{words} {answer}"
    assert evidence_found([answer], prompt, [f"{answer}\n"], QUESTION)
    assert not evidence_found([answer], prompt, [], QUESTION)  # in a rollout, nothing found it
    echoed = finding(f'No passages found for "{answer}".', {"query": answer})
    assert not evidence_found([answer], prompt, [echoed], QUESTION)  # a tool echoing a guess found nothing


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="abcdefghijklmnop ", min_size=5, max_size=30), min_size=1, max_size=4))
def test_text_facts_count_only_when_all_are_found_and_passed_on(facts):
    facts = [f.strip() for f in facts if f.strip()]
    if not facts:
        return
    prompt = "Who? " + " ".join(facts)
    assert evidence_found(facts, prompt, [" ".join(facts)], "Who?")
    assert not evidence_found(facts, "Who?", [" ".join(facts)], "Who?")  # found but not passed on
    if len(set(facts)) > 1 and not any(facts[-1] in f for f in facts[:-1]):
        assert not evidence_found(facts, prompt, [" ".join(facts[:-1])], "Who?")  # one hop missing
