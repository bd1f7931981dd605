"""The invariants' corpus (tests/integrity/corpus/, its README says the format): for each of I1-I8, changes
that must pass and changes that must be refused, kept as data.

Each case is applied to a real store made by `memstack init` (agents alice and bob) and judged twice, as
users meet the checks: a real `git commit` through the installed pre-commit hook, and `memstack check
--range` on the same change committed with `--no-verify` (what CI sees from a clone without hooks). A
positive case must be accepted by both; a negative one refused by both, each naming the case's rule with
its message fragment on the file's line, and no rule but the case's (and the ones it lists in `also`).

Batching: one store per invariant and test process; a case resets it with git to its `before` state,
committed once per process (through the hook, so the corpus's own states are valid, unless the case asks
for --no-verify) and reused by every case that shares it.
"""

import base64
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from check_support import commit, copy_store, head, run_check, sneak
from helpers import git, memstack
from secret_corpus import SECRETS

CORPUS = Path(__file__).resolve().parent / "corpus"
RULES = [f"I{n}" for n in range(1, 9)]
SUMMARY = re.compile(r"^memstack check: \d+ violations? \(([^)]*)\)", re.M)
SECRET = re.compile(r"\$\{secret:([^}]+)\}")
NO_BEFORE = json.dumps([None, False])  # the before_key of a case with no `before`: the store as init made it


@dataclass(frozen=True)
class Case:
    """One folder of the corpus: `<rule>/<positive|negative>/<name>/` holding change.yaml (and, for a
    negative case, expect.json)."""

    rule: str
    kind: str
    name: str
    change: dict[str, Any] = field(hash=False)
    expect: dict[str, Any] | None = field(hash=False)

    @property
    def id(self) -> str:
        return f"{self.rule}/{self.kind}/{self.name}"

    @property
    def before_key(self) -> str:
        return json.dumps([self.change.get("before"), bool(self.change.get("before_no_verify"))], sort_keys=True)

    def rules(self) -> set[str]:
        """Every rule the refusal must name, and no other."""
        assert self.expect is not None
        return {self.expect["rule"], *self.expect.get("also", [])}


def load(folder: Path) -> list[Case]:
    found = []
    for path in sorted(folder.glob("I*/*/*/change.yaml")):
        case_dir = path.parent
        rule, kind = case_dir.parent.parent.name, case_dir.parent.name
        expect_path = case_dir / "expect.json"
        expect = json.loads(expect_path.read_text(encoding="utf-8")) if expect_path.is_file() else None
        found.append(Case(rule, kind, case_dir.name, YAML(typ="safe").load(path.read_text(encoding="utf-8")), expect))
    return found


CASES = load(CORPUS)


def expand(path: str, text: str) -> bytes:
    """`${secret:NAME}`: the credential line NAME of tests/secret_corpus.py, joined at run time so that no
    file of this repository holds one (test_secrets scans them); JSON-escaped in a .json/.jsonl file."""
    def secret(match: re.Match[str]) -> str:
        value = SECRETS[match.group(1)][0]
        return json.dumps(value)[1:-1] if path.endswith((".json", ".jsonl")) else value

    return SECRET.sub(secret, text).encode("utf-8")


def apply(root: Path, files: dict[str, Any]) -> None:
    """Write a case's files into the work tree: content, or one operation (corpus/README.md)."""
    for path, content in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if content is None:
            target.unlink()
            continue
        if isinstance(content, str):
            target.write_bytes(expand(path, content))
            continue
        [(operation, value)] = content.items()
        if operation == "append":
            with target.open("ab") as handle:
                handle.write(expand(path, value))
        elif operation == "replace":
            old, new = value
            text = target.read_text(encoding="utf-8")
            assert old in text, f"{path}: {old!r} is not in the file to replace"
            target.write_bytes(expand(path, text.replace(old, new, 1)))
        elif operation == "moved_from":
            os.replace(root / value, target)
        elif operation == "symlink":
            if target.exists() or target.is_symlink():
                target.unlink()
            os.symlink(value, target)
        elif operation == "base64":
            target.write_bytes(base64.b64decode(value))
        elif operation == "mode":
            target.chmod(int(value, 8))
        else:
            raise AssertionError(f"{path}: unknown operation {operation!r} (corpus/README.md)")


def reset(root: Path, sha: str) -> None:
    git(root, "reset", "-q", "--hard", sha)
    git(root, "clean", "-ffdqx")  # untracked and ignored files too: .memstack/ holds only caches and locks


class Stores:
    """One store per invariant in this test process, reset with git between cases."""

    def __init__(self, template: Path, factory: pytest.TempPathFactory) -> None:
        self.template, self.factory = template, factory
        self.roots: dict[str, Path] = {}
        self.befores: dict[tuple[str, str], str] = {}

    def ready(self, case: Case) -> Path:
        """The invariant's store, reset to the case's `before` state (committed once, then reused)."""
        root = self.roots.get(case.rule)
        if root is None:
            root = self.roots[case.rule] = copy_store(self.template, self.factory.mktemp(case.rule))
            self.befores[case.rule, NO_BEFORE] = head(root)
        sha = self.befores.get((case.rule, case.before_key))
        if sha is None:
            reset(root, self.befores[case.rule, NO_BEFORE])
            apply(root, case.change["before"])
            for argv in case.change.get("before_run", []):
                ran = memstack(*argv, cwd=root)
                assert ran.returncode == 0, ran.stdout + ran.stderr
            made = commit(root, f"before {case.id}", verify=not case.change.get("before_no_verify"))
            assert made.returncode == 0, f"the case's before state was refused:\n{made.stdout}{made.stderr}"
            sha = self.befores[case.rule, case.before_key] = head(root)
        reset(root, sha)
        return root


@pytest.fixture(scope="session")
def stores(store_template: Path, tmp_path_factory: pytest.TempPathFactory) -> Stores:  # noqa: F811
    return Stores(store_template, tmp_path_factory)


def refusal_lines(output: str, case: Case) -> list[str]:
    """The lines `path[:line]: <rule> …` of a check's text output that carry the case's fragment."""
    assert case.expect is not None
    path = re.escape(case.expect["path"]) if "path" in case.expect else r"\S.*?"
    pattern = re.compile(rf"^{path}(?::\d+)?: {case.expect['rule']} .*$", re.M)
    return [line for line in pattern.findall(output) if case.expect["message"] in line]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_the_hook_and_the_range_check_judge_each_case_as_the_corpus_says(case: Case, stores: Stores) -> None:
    root = stores.ready(case)
    base = head(root)
    apply(root, case.change["after"])
    for argv in case.change.get("run", []):
        ran = memstack(*argv, cwd=root)
        assert ran.returncode == 0, ran.stdout + ran.stderr
    hooked = commit(root, f"the change of {case.id}")
    output = hooked.stdout + hooked.stderr
    if case.kind == "positive":
        assert hooked.returncode == 0, output
        assert head(root) != base
    else:
        assert hooked.returncode != 0, f"the hook let it through:\n{output}"
        assert head(root) == base
        assert refusal_lines(output, case), f"no {case.expect} line in the hook's output:\n{output}"  # type: ignore[union-attr]
        summary = SUMMARY.search(output)
        assert summary and set(summary.group(1).split(", ")) == case.rules(), output
        sneak(root, f"the change of {case.id}, --no-verify")
    # A positive case's range is the commit the hook accepted: the same tree a --no-verify commit makes.
    ranged = run_check(root, "--range", f"{base}..HEAD", "--format", "json")
    document = json.loads(ranged.stdout)
    if case.kind == "positive":
        assert ranged.returncode == 0 and document["ok"] is True, ranged.stdout
        return
    assert ranged.returncode == 1, ranged.stdout + ranged.stderr
    expect = case.expect
    assert expect is not None
    assert any(v["rule"] == expect["rule"] and expect["message"] in v["what"]
               and v["path"] == expect.get("path", v["path"]) for v in document["violations"]), ranged.stdout
    assert {v["rule"] for v in document["violations"]} == case.rules(), ranged.stdout


def test_the_corpus_has_two_positive_and_three_negative_cases_per_invariant_each_well_formed() -> None:
    for rule in RULES:
        kinds = [c.kind for c in CASES if c.rule == rule]
        assert kinds.count("positive") >= 2 and kinds.count("negative") >= 3, (rule, kinds)
    assert {c.rule for c in CASES} == set(RULES)
    for case in CASES:
        assert case.kind in ("positive", "negative"), case.id
        assert set(case.change) <= {"about", "before", "before_no_verify", "before_run", "after", "run"}, case.id
        assert case.change.get("about") and case.change.get("after"), f"{case.id}: needs `about` and `after`"
        if case.kind == "positive":
            assert case.expect is None, f"{case.id}: a positive case has no expect.json"
            continue
        assert case.expect is not None, f"{case.id}: a negative case needs expect.json"
        assert set(case.expect) <= {"rule", "message", "path", "also"}, case.id
        assert case.expect["rule"] == case.rule and case.expect["message"], case.id
        assert set(case.expect.get("also", [])) <= set(RULES) - {case.rule}, case.id

