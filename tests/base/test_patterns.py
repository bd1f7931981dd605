"""base/patterns.py: an expression made by `lazy` answers as `re.compile`'s does, and is compiled only when
first used."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstack.base import patterns
from memstack.base.patterns import lazy

_EXPRESSIONS = (r"(?P<word>[a-z]+)-(\d+)", r"\s+", r"^#+ (.*)$", r"[\x00-\x1f]")


@given(st.sampled_from(_EXPRESSIONS), st.sampled_from((0, re.IGNORECASE, re.MULTILINE)), st.text(max_size=60))
def test_a_lazy_expression_answers_as_the_compiled_one(expression: str, flags: int, text: str) -> None:
    compiled, delayed = re.compile(expression, flags), lazy(expression, flags)
    assert [m.span() for m in delayed.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    assert bool(delayed.search(text)) == bool(compiled.search(text))
    assert bool(delayed.match(text)) == bool(compiled.match(text))
    assert bool(delayed.fullmatch(text)) == bool(compiled.fullmatch(text))
    assert delayed.split(text) == compiled.split(text)
    assert delayed.findall(text) == compiled.findall(text)
    assert delayed.sub("_", text) == compiled.sub("_", text)
    assert (delayed.pattern, delayed.flags, delayed.groups) == (compiled.pattern, compiled.flags, compiled.groups)


def test_a_lazy_expression_is_compiled_on_first_use_only(monkeypatch: pytest.MonkeyPatch) -> None:
    made = []
    real = re.compile
    monkeypatch.setattr(patterns.re, "compile", lambda *given: made.append(given) or real(*given))
    delayed = lazy(rb"[0-9a-f]+")
    assert made == []  # defining it compiles nothing
    assert delayed.fullmatch(b"c0ffee") and not delayed.fullmatch(b"coffee")
    assert delayed.search(b"xx7") and delayed.groupindex == {}
    assert made == [(rb"[0-9a-f]+", 0)]  # once, on first use
