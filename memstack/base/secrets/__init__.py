"""I8: no credential in memory. One detector for every write path, the checks and review.

The detection is Yelp's detect-secrets, limited to its plugins that recognise a
credential by its shape or its name (cloud keys, tokens with known prefixes,
private-key blocks, basic-auth URLs, password assignments). Its high-entropy
plugins are left out: they flag git hashes, UUIDs and memstack's hex ids, which
are everywhere in an agent's memory.

A cheap prefilter runs first, in two stages for each detector: the substrings
one of which it needs (`akia`, `ghp_`, `private key`, `pass`, `://`, ...),
searched in the lower-cased bytes; then, on the lines they hit, its shape (a
URL with `user:password@`, a password word followed by a quoted value, ...). A
line that fails either never reaches the library, so checking a 100,000-line
promotion commit costs a few substring searches.

What counts as a *password assignment* (detect-secrets' KeywordDetector, as it
reads source code): a secret-sounding name (password, passwd, pwd, secret,
api_key, auth_key, private_key, db_pass, ...) followed by `=`, `:`, `:=` or `=>`
and a quoted value, e.g. `password = "..."` or `"api_key": "..."`. memstack adds
one shape agents paste from `.env` files and YAML: a whole line `NAME=value` or
`NAME: value` whose value is a single unquoted token with a digit or a symbol
(`DB_PASSWORD=...`; `password_policy: strict` is a setting, not a secret). Prose
("the password is in the vault"), empty or templated values (`"${DB_PASSWORD}"`,
`"<password>"`) and indirect references (`password = os.environ["DB_PASSWORD"]`)
are not secrets.

An inline `pragma: allowlist secret` on the line (detect-secrets' convention,
here accepted anywhere on the line) marks a deliberate exception.

A store's `secrets:` block in memstack.yaml (a `Policy`) switches detectors off
(`disable`: their plugin names, PLUGINS) and adds patterns of its own
(`extra_patterns`: a name and a Python regular expression, searched on each line,
past the prefilter). The write paths read the store's block (`for_store`); the
checks read a state's, and where a change edits memstack.yaml, the base's too
(`Policy.both`), so one commit cannot switch a detector off and add what it finds.

Nothing here ever returns, prints or raises with the secret itself: a finding is
its kind, where it is (a field's JSON path, a line) and nothing more.


| module | holds |
|---|---|
| `detect` | the detectors, the prefilter, `Policy` |
| `settings` | a store's `secrets:` block read into a `Policy` |
| `scan` | records, text and added lines scanned; refusal |
| `redaction` | what read verbs show of a value that holds a credential |
| `screen` | many records screened at once: those `scan` may find a credential in |
"""

from memstack.base.secrets.detect import ALLOW, CHUNK, DEFAULT, KIND, PLUGINS, Policy, kinds, prefilter_hits, triggered
from memstack.base.secrets.redaction import redact
from memstack.base.secrets.scan import (
                                        FIX,
                                        Finding,
                                        added,
                                        flagged,
                                        message,
                                        refuse_secrets,
                                        refuse_secrets_in,
                                        scan,
                                        scan_text,
)
from memstack.base.secrets.screen import suspects
from memstack.base.secrets.settings import for_store, policy

__all__ = ["ALLOW", "CHUNK", "DEFAULT", "FIX", "KIND", "PLUGINS", "Finding", "Policy", "added", "flagged", "for_store",
           "kinds", "message", "policy", "prefilter_hits", "redact", "refuse_secrets", "refuse_secrets_in", "scan",
           "scan_text", "suspects", "triggered"]
