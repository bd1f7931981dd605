"""The repository's `.pre-commit-config.yaml`: memstack's hooks added to it, round-trip.

A store made in its own repository gets the template's configuration as it is. A
store made in a folder of a code repository joins that repository's configuration
(at its top, where pre-commit reads it): the file is created from the template when
absent, else edited with ruamel.yaml so the project's comments, order and hooks
survive, and memstack's local hooks are added once (an id already present is left
alone, so a rerun changes nothing).
"""

from io import StringIO
from pathlib import Path
from typing import Any

from memstack.base.config import parse
from memstack.base.errors import MemstackError
from memstack.base.resources import data_dir

NAME = ".pre-commit-config.yaml"


def _yaml() -> Any:
    from ruamel.yaml import YAML  # deferred: ~20-30 ms to import, needed only to read or edit YAML

    yaml = YAML()  # round-trip: comments, order and quoting survive
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096  # the launcher entry stays on its line
    return yaml


def template_text() -> str:
    return (data_dir("store-template") / NAME).read_text(encoding="utf-8")


def _dump(document: Any) -> str:
    buffer = StringIO()
    _yaml().dump(document, buffer)
    return buffer.getvalue()


def merged(existing: str | None) -> str | None:
    """The configuration with memstack's hooks in it, or None when it already has them all."""
    if existing is None:
        return template_text()
    document = parse(existing, NAME)
    if not isinstance(document, dict) or not isinstance(document.get("repos", []), list):
        raise MemstackError(f"{NAME}: expected a mapping with a `repos` list; add memstack's hooks by hand"
                            " (see memstack's README, 'Memory inside your code repository')")
    ours = parse(template_text(), NAME)
    present = {hook.get("id") for repo in document.get("repos") or [] if isinstance(repo, dict)
               for hook in repo.get("hooks") or [] if isinstance(hook, dict)}
    missing = [hook for hook in ours["repos"][0]["hooks"] if hook["id"] not in present]
    types = list(document.get("default_install_hook_types") or ["pre-commit"])
    more_types = [t for t in ours["default_install_hook_types"] if t not in types]
    if not missing and not more_types:
        return None
    if more_types:
        document["default_install_hook_types"] = types + more_types
    if missing:
        if "repos" not in document or document["repos"] is None:
            document["repos"] = []
        local = next((repo for repo in document["repos"] if isinstance(repo, dict) and repo.get("repo") == "local"),
                     None)
        if _flow(document, document["repos"], local, (local or {}).get("hooks")):
            missing = [{key: str(value) if isinstance(value, str) else value for key, value in hook.items()}
                       for hook in missing]  # ruamel writes a folded scalar's folds as BEL in flow style: plain
        if local is None:
            local = ours["repos"][0]
            local["hooks"] = missing
            document["repos"].append(local)
        else:
            local.setdefault("hooks", []).extend(missing)
    return _dump(document)


def _flow(*nodes: Any) -> bool:
    """Whether any of these YAML nodes is written in flow style (`[...]`, `{...}`): so is all inside it."""
    return any(getattr(getattr(node, "fa", None), "flow_style", lambda: False)() for node in nodes)


def add_hooks(top: Path) -> bool:
    """Write memstack's hooks into `top`/.pre-commit-config.yaml; False when they were all there."""
    path = top / NAME
    try:
        existing = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        existing = None
    text = merged(existing)
    if text is None:
        return False
    path.write_text(text, encoding="utf-8")
    return True
