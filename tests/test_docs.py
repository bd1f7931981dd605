"""The product's docs stand alone: every link of README.md and docs/ stays inside the repository and lands.

A relative link must name a file of the repository (not a folder beside it), and an anchor a heading
of its page; nothing may send the reader to the contract this project was built from.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "store-template" / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)|href=\"([^\"]+)\"")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def links(text: str) -> list[str]:
    text = FENCE.sub("", text)  # code blocks hold commands, not links
    return [a or b for a, b in LINK.findall(text)]


def anchors(text: str) -> set[str]:
    """GitHub's anchors for the headings of a page."""
    found = set()
    for heading in re.findall(r"^#+ (.+)$", FENCE.sub("", text), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


def problems(page: Path, text: str) -> list[str]:
    """What is wrong with the links of `text`, the content of `page`."""
    found = []
    for target in links(text):
        if re.match(r"[a-z]+:", target):  # https:, mailto:: outside on purpose
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.is_relative_to(ROOT) or ".git" in dest.relative_to(ROOT).parts:
            found.append(f"{target}: outside the repository")
        elif not dest.exists():
            found.append(f"{target}: no such file in the repository")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text(encoding="utf-8")):
            found.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    if re.search(r"\bSPEC\b|\.\./shared|shared/SPEC", text):
        found.append("names SPEC or ../shared: the docs say it in their own words (docs/reference.md)")
    return found


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_link_stays_inside_and_lands(page: Path) -> None:
    assert problems(page, page.read_text(encoding="utf-8")) == []


def test_the_check_catches_a_link_outside() -> None:
    page = ROOT / "docs" / "reference.md"
    text = "[c](../../shared/SPEC.md) [d](missing.md) [e](reference.md#nowhere) [f](https://example.com)\n"
    assert links(text) == ["../../shared/SPEC.md", "missing.md", "reference.md#nowhere", "https://example.com"]
    assert [p.split(":")[0] for p in problems(page, text)] == [
        "../../shared/SPEC.md", "missing.md", "reference.md#nowhere", "names SPEC or ../shared"]


def test_the_reference_is_linked_from_the_readme() -> None:
    assert "](docs/reference.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    reference = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    for rule in ("I1", "I2", "I3", "I4", "I5", "I6", "I7", "I8"):
        assert f"| {rule} |" in reference
    for schema in (ROOT / "schemas").glob("*.schema.json"):
        assert f"(../schemas/{schema.name})" in reference
