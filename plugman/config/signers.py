"""Policy on signatures: `requiredSignatures` in managed-settings.toml, and in the user's own
plugman.toml (a user can only refuse more; a project's or local plugman.toml holds no policy).

    [[requiredSignatures]]
    sources = ["ghcr.io/acme/*"]            # optional: every plugin source when left out
    signers = ["sha256:<hex>", "acme.pub"]  # optional: any valid signature when left out

A plugin whose source matches a rule's `sources` (shell-style patterns over an OCI reference
`REGISTRY/REPOSITORY:TAG`, with or without `oci://`, matched with and without its tag; over
the location of any other source, which cannot be signed) must be signed, by one of the rule's
`signers` when it names any: a key fingerprint (`sha256:` and 64 hex digits) or the path of a
public key (.pub, PEM), relative to the file. Every matching rule, of both files, must be met.

Fail closed, as the other policy rules: a rule plugman cannot read (not a table, a value of
the wrong type, a key file it cannot read) matches every source and admits no signer, so it
refuses every plugin until it is fixed, saying so.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, NamedTuple

from plugman.config.declarations import read
from plugman.config.policy import managed_settings
from plugman.core import identity
from plugman.core.errors import PlugmanError
from plugman.core.fs import present
from plugman.core.paths import Paths

KEY = "requiredSignatures"
FINGERPRINT = re.compile(r"^sha256:[0-9a-f]{64}$")


class SignatureRule(NamedTuple):
    file: Path
    position: int
    sources: tuple[str, ...] | None  # None: every source
    signers: tuple[str, ...] | None  # fingerprints; None: any signer
    broken: str = ""  # why plugman cannot read it: it refuses everything


def rules(paths: Paths) -> list[SignatureRule]:
    """The `requiredSignatures` rules of the managed settings, then of the user's plugman.toml
    (none when unset)."""
    found = []
    user = read(paths.user_config) if present(paths.user_config) else {}
    for file, settings in (
        (paths.managed_settings, managed_settings(paths)),
        (paths.user_config, user),
    ):
        value = settings.get(KEY)
        if value is None:
            continue
        if not isinstance(value, list):
            found.append(SignatureRule(file, 0, None, (), f"{KEY} must be a list of tables"))
            continue
        found += [_rule(file, index, rule) for index, rule in enumerate(value)]
    return found


def _rule(file: Path, index: int, rule: Any) -> SignatureRule:
    base = file.parent
    if not isinstance(rule, dict):
        return SignatureRule(file, index, None, (), "a rule must be a table")
    stray = sorted(set(rule) - {"sources", "signers"})
    if stray:
        return SignatureRule(file, index, None, (), f"unknown key {stray[0]!r} (sources, signers)")
    found: dict[str, tuple[str, ...] | None] = {}
    for key in ("sources", "signers"):
        listed = rule.get(key)
        if listed is not None and (
            not isinstance(listed, list) or not all(isinstance(v, str) for v in listed)
        ):
            return SignatureRule(file, index, None, (), f"{key} must be a list of strings")
        found[key] = tuple(listed) if listed is not None else None
    signers = found["signers"]
    if signers is not None:
        keys = [_signer(text, base) for text in signers]
        bad = next((k for k in keys if not FINGERPRINT.match(k)), None)
        if bad is not None:
            return SignatureRule(file, index, None, (), bad)
        signers = tuple(keys)
    sources = tuple(s.removeprefix("oci://") for s in found["sources"] or ())  # and canonical
    return SignatureRule(file, index, sources if found["sources"] is not None else None, signers)


def _signer(text: str, base: Path) -> str:
    """A fingerprint, or the fingerprint of the .pub file `text` names; else why not."""
    if FINGERPRINT.match(text.lower()):
        return text.lower()
    # lazy: core.signatures takes ~28 ms to import, only this path needs it
    from plugman.core import signatures

    path = (base / text).expanduser()
    try:
        return signatures.fingerprint(signatures.load_public(path.read_bytes(), str(path)))
    except OSError as exc:
        return f"signer {text!r}: cannot read {path} ({exc.strerror})"
    except PlugmanError as exc:
        return f"signer {text!r}: {path} is {exc.message}"


def refusal(paths: Paths, source: str, signer: str | None) -> str | None:
    """Why a signature policy refuses a plugin from `source` (an OCI reference or another
    source's location) signed by `signer` (None: unsigned), or None."""
    for rule in rules(paths):
        where = f"{KEY}[{rule.position}] in {rule.file}"
        if rule.broken:
            return (
                f"{where} cannot be read ({rule.broken}): until it is fixed it refuses every plugin"
            )
        if rule.sources is not None and not any(_matches(p, source) for p in rule.sources):
            continue
        if signer is None:
            return f"{where} requires a signature, and it is not signed"
        if rule.signers is not None and signer not in rule.signers:
            named = ", ".join(rule.signers) or "none"
            return f"{where} requires a signature by {named}, and it is signed by {signer}"
    return None


def _matches(pattern: str, source: str) -> bool:
    """Whether `source` fits `pattern`, both as written and as canonical identities
    (`plugman.core.identity`: an OCI reference as the registry reads it, a git URL as git
    resolves it), so another spelling of a source a rule names still needs its signature."""
    base = identity.github_base()
    sources = {source, identity.oci(source), identity.git(source, base)}
    patterns = {pattern, identity.oci(pattern), identity.git(pattern, base)}
    return any(fnmatchcase(text, wanted) for text in _untagged(sources) for wanted in patterns)


def _untagged(sources: set[str]) -> set[str]:
    """Each source with and without its digest and its tag."""
    found = set(sources)
    for source in sources:
        bare = source.split("@", 1)[0]
        last = bare.rsplit("/", 1)
        found |= {bare, bare.rsplit(":", 1)[0] if len(last) == 2 and ":" in last[1] else bare}
    return found
