"""`git diff` text for memory files: records and facts as readable lines, not long JSON.

A fact is one line whose window reads `[from, to)`, so closing a fact shows in a
diff as the window that changed. An intake record is a header line and its
content, indented. Anything else is shown as it is.
"""

import orjson

from memstack.base.times import iso


def _when(ms: object) -> str:
    return iso(ms) if isinstance(ms, int) and not isinstance(ms, bool) else "open"


def window(fact: dict) -> str:
    """A fact's validity as a half-open window, `[from, to)`, `open` for no end."""
    return f"[{_when(fact.get('valid_from'))}, {_when(fact.get('valid_to'))})"


def fact_line(fact: dict) -> str:
    text = (f"fact {fact.get('id')} [{fact.get('table')}] {fact.get('subject')} | {fact.get('predicate')} | "
            f"{fact.get('object')}  valid {window(fact)}"
            f"  recorded {_when(fact.get('recorded_at'))}  by {fact.get('agent')} conf {fact.get('confidence')}")
    if fact.get("valid_to") is not None:
        text += f"  closed {_when(fact.get('expired_at'))} superseded_by {fact.get('superseded_by')}"
    return text


def intake_lines(record: dict) -> list[str]:
    head = (f"intake {record.get('id')} {record.get('created_at')} {record.get('agent')} "
            f"{record.get('tier')} conf {record.get('confidence')}")
    out = [head]
    if record.get("title"):
        out.append(f"  title: {record['title']}")
    if record.get("source"):
        out.append(f"  source: {record['source']}")
    if record.get("subject"):
        out.append(f"  claim: {record['subject']} | {record.get('predicate')} | {record.get('object')}")
    tags = [*(f"#{t}" for t in record.get("tags", [])), *record.get("keywords", [])]
    if tags:
        out.append("  tags: " + " ".join(tags))
    out += ["  | " + line for line in str(record.get("content", "")).splitlines()]
    return out


def convert(data: bytes) -> str:
    """Each JSON line by what it holds (git hands textconv a temporary copy, not the store path)."""
    if not data.lstrip().startswith(b"{") or data.lstrip().startswith(b"{\n"):
        return data.decode("utf-8", errors="replace")  # Markdown, pretty JSON: already readable
    out: list[str] = []
    for line in data.splitlines():
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            out.append(f"(not JSON) {line.decode('utf-8', errors='replace')}")
            continue
        try:
            if not isinstance(record, dict):
                raise TypeError
            if "valid_from" in record and "predicate" in record:
                out.append(fact_line(record))
            elif "content" in record and "tier" in record:
                out += intake_lines(record)
            else:
                out.append("  ".join(f"{k}={record[k]}" for k in sorted(record)))
        except (TypeError, ValueError, OverflowError, OSError):  # a malformed record: shown as it is
            out.append(line.decode("utf-8", errors="replace"))
    return "\n".join(out) + ("\n" if out else "")
