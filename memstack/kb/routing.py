"""Where promotion sends an intake record: the rules of memstack.yaml, or an external classifier.

The rules are tried in this order (docs/reference.md: promotion), the first that matches wins:

1. jeles_atoms: an external citation (`source` is an http(s) URL, or tier
   `fetched`) with `relevance_score >= promotion.jeles_min_relevance`;
2. knowledge: tier `verified` or `ratified` with
   `confidence >= promotion.knowledge_min_confidence`;
3. opus_atoms: tagged `synthesis` by an agent in `promotion.opus_agents`;
4. binder: everything else waits for a human.
"""

import subprocess
from dataclasses import dataclass
from typing import Any

import orjson

from memstack.intake.log import check_confidence

SUB_TIERS = ("knowledge", "jeles_atoms", "opus_atoms", "binder")
BROKEN = "; not called again in this promotion"  # a classifier that cannot run or hangs is not retried
FACT_TABLES = ("knowledge", "jeles_atoms", "opus_atoms")


@dataclass(frozen=True)
class Rules:
    knowledge_min_confidence: float = 0.80
    jeles_min_relevance: float = 0.5
    opus_agents: frozenset[str] = frozenset()
    classifier: str | None = None

    @classmethod
    def from_config(cls, config: Any) -> "Rules":

        return cls(knowledge_min_confidence=check_confidence(config.get("promotion", "knowledge_min_confidence"),
                                                             "promotion.knowledge_min_confidence"),
                   jeles_min_relevance=check_confidence(config.get("promotion", "jeles_min_relevance"),
                                                        "promotion.jeles_min_relevance"),
                   opus_agents=frozenset(config.get("promotion", "opus_agents") or ()),
                   classifier=config.get("promotion", "classifier") or None)


def is_citation(record: dict[str, Any]) -> bool:
    source = str(record.get("source") or "").lower()
    return source.startswith(("http://", "https://")) or record.get("tier") == "fetched"


def by_rules(record: dict[str, Any], rules: Rules) -> str:
    relevance = record.get("relevance_score")
    if is_citation(record) and relevance is not None and relevance >= rules.jeles_min_relevance:
        return "jeles_atoms"
    if record["tier"] in ("verified", "ratified") and record["confidence"] >= rules.knowledge_min_confidence:
        return "knowledge"
    if "synthesis" in record.get("tags", ()) and record["agent"] in rules.opus_agents:
        return "opus_atoms"
    return "binder"


def by_classifier(record: dict[str, Any], command: str, cwd: Any) -> tuple[str | None, str]:
    """(sub-tier, how) from the classifier; (None, why) when it fails or answers nonsense."""
    try:
        proc = subprocess.run(command, shell=True, cwd=cwd, input=orjson.dumps(record), capture_output=True,
                              timeout=30)
    except subprocess.TimeoutExpired:
        return None, f"classifier timed out after 30 s{BROKEN}"
    answer = proc.stdout.decode(errors="replace").strip()
    if proc.returncode != 0:
        broken = BROKEN if proc.returncode in (126, 127) else ""  # the shell found no such command
        return None, f"classifier exited {proc.returncode}{broken}"
    if answer not in SUB_TIERS:
        return None, f"classifier answered {answer[:40]!r}, not one of {', '.join(SUB_TIERS)}"
    return answer, "classifier"


def route(record: dict[str, Any], rules: Rules, cwd: Any = None) -> tuple[str, str]:
    """(sub-tier, via): via is 'rules', 'classifier', or why the classifier was not used."""
    if rules.classifier:
        answer, how = by_classifier(record, rules.classifier, cwd)
        if answer is not None:
            return answer, how
        return by_rules(record, rules), f"rules ({how})"
    return by_rules(record, rules), "rules"
