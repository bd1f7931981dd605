"""The MCP prompts: the ferrox seed's protocol around a piece of work, as prompts an agent's client offers.

`frame` (before planning): recall what was already decided about a subject and put those facts in the
prompt, so a settled decision is not re-litigated. `learn` (after the work): capture its decisions and
surprises, superseding a contradicted prior with `capture` and `contradicts=true`, then seal the handoff.

Like `tools.py`, this module knows nothing of the MCP SDK (`server.py` serves it). A prompt's text
names only tools the server has, with their argument names.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from memstack.base.errors import MemstackError
from memstack.base.times import iso
from memstack.kb.facts import RECALL_PREDICATES


@dataclass(frozen=True)
class Prompt:
    name: str
    title: str
    description: str
    arguments: Mapping[str, tuple[str, bool]]  # name -> (description, required)
    render: Callable[[dict[str, str], Callable[[str], list[dict[str, Any]]]], str]


def _facts(facts: list[dict[str, Any]]) -> list[str]:
    return [f"- {f['subject']} {f['predicate']} {f['object']} (since {iso(f['valid_from'])}, fact {f['id']}"
            + (f", disputed with {', '.join(f['disputed_with'])}" if f.get("disputed_with") else "") + ")"
            for f in facts]


def _frame(args: dict[str, str], recall: Callable[[str], list[dict[str, Any]]]) -> str:
    subject = args["subject"]
    found = recall(subject)
    lines = [f"Before you plan work on {subject!r}, here is what memstack holds as decided about it"
             f" (the facts valid now whose predicate is {', '.join(RECALL_PREDICATES)}, most recent first):", ""]
    lines += _facts(found) or [f"- nothing yet: no decision about {subject!r} is recorded."]
    lines += ["",
              "Treat these as settled: plan within them and do not re-open one without a reason you can state."
              " If your plan must contradict one, say which and why, and when the new decision is made record it"
              " with the capture tool (same subject and predicate, contradicts=true): the prior is closed, not"
              " deleted.",
              "For the other facts about the subject (any predicate), call fact_get_valid_at with ts=now and this"
              " subject; for how they changed over time, fact_history."]
    return "\n".join(lines)


def _learn(args: dict[str, str], recall: Callable[[str], list[dict[str, Any]]]) -> str:
    subject = args.get("subject") or ""
    lines = ["The work is done: record what it taught, so the next session starts from it.", "",
             "1. For each decision made (a choice, a pattern adopted, a preference), call capture with subject,"
             f" a predicate among {', '.join(RECALL_PREDICATES)}, object (the decision), valid_from=now. If it"
             " replaces a decision recorded earlier for the same subject and predicate, pass contradicts=true:"
             " the prior is closed at valid_from and kept for history.",
             "2. For each surprise (something that behaved otherwise than expected, a trap, a measured figure),"
             " call intake_write with content (what happened and why it matters), a title, keyword entries, and"
             " tier and confidence as sure as you are (tier verified with confidence >= 0.8 is promoted to"
             " knowledge; lower waits in the Binder for a human).",
             "3. Seal the session with handoff_write (a '## Open threads' list and a '## Capability table'), then"
             " call boot_rebuild so the next session boots from it."]
    if subject:
        found = recall(subject)
        lines += ["", f"Decisions already recorded about {subject!r} (supersede one with contradicts=true rather"
                      " than adding a second):", ""]
        lines += _facts(found) or ["- none yet."]
    return "\n".join(lines)


PROMPTS: dict[str, Prompt] = {p.name: p for p in (
    Prompt("frame", "Frame work by prior decisions",
           "Before planning work on a subject: the decisions already recorded about it (recalled now), to plan"
           " within them rather than re-litigate them.",
           {"subject": ("the subject the work is about, as facts name it (e.g. build, db)", True)}, _frame),
    Prompt("learn", "Learn from finished work",
           "After the work: capture its decisions (superseding a contradicted prior with contradicts=true) and"
           " its surprises, then seal the handoff.",
           {"subject": ("optional: the subject the work was about, to list the decisions it may supersede",
                        False)}, _learn),
)}


def render(name: str, arguments: Mapping[str, Any] | None,
           recall: Callable[[str], list[dict[str, Any]]]) -> tuple[Prompt, str]:
    """The prompt and its text; a MemstackError names an unknown prompt or a missing or unknown argument."""
    prompt = PROMPTS.get(name)
    if prompt is None:
        raise MemstackError(f"unknown prompt {name!r}: the prompts are {', '.join(sorted(PROMPTS))}")
    given = {k: v for k, v in (arguments or {}).items() if v is not None}
    unknown = sorted(set(given) - set(prompt.arguments))
    if unknown:
        raise MemstackError(f"unknown argument {unknown[0]!r}: {name} takes {', '.join(prompt.arguments)}")
    for key, (_, required) in prompt.arguments.items():
        if required and not str(given.get(key, "")).strip():
            raise MemstackError(f"missing argument {key!r}: {name} needs {key}")
    return prompt, prompt.render({k: str(v) for k, v in given.items()}, recall)
