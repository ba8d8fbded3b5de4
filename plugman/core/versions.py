"""Version ranges: PEP 440 specifiers (parsed with packaging), and the npm-style semver ranges
plugin `dependencies` use (`^1.2`, `~1.2.3`, `1.x`, `>=1.2 <2`), translated to PEP 440."""

from __future__ import annotations

import re

from packaging.version import InvalidVersion, Version

from plugman.core.errors import PlugmanError, UsageError

_PARTIAL = re.compile(r"^v?(\d+)(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:[-+].*)?$")


def to_pep440(text: str) -> str:
    """A PEP 440 specifier for `text` ('' for any version); PlugmanError when unreadable."""
    text = text.strip()
    if text in ("", "*", "latest", "x", "X"):
        return ""
    if "||" in text:
        raise PlugmanError(
            f"version range {text!r} uses '||', which plugman does not support",
            hint="use one range, e.g. >=1.2,<3",
        )
    parts = [p for p in re.split(r"[,\s]+", text) if p]
    return ",".join(_one(part) for part in parts)


def _one(part: str) -> str:
    if part[0] == "^":
        return _caret(part[1:])
    if part[0] == "~" and not part.startswith("~="):
        return _tilde(part[1:])
    if part[0] in "<>=!~":
        return part.replace("v", "") if part[:2] != "==" else part
    match = _PARTIAL.match(part)
    if not match:
        raise PlugmanError(
            f"{part!r} is not a version or range",
            hint="use PEP 440 (>=1.2,<2) or semver (^1.2, ~1.2.3, 1.x)",
        )
    major, minor, patch = match.groups()
    if minor in (None, "x", "X", "*"):
        return f"=={major}.*"
    if patch in (None, "x", "X", "*"):
        return f"=={major}.{minor}.*"
    return f"=={part.lstrip('v')}"


def _numbers(text: str) -> list[int]:
    match = _PARTIAL.match(text)
    if not match:
        raise PlugmanError(f"{text!r} is not a version", hint="use numbers such as 1.2.3")
    return [int(n) for n in match.groups() if n is not None and n.isdigit()]


def _caret(text: str) -> str:
    numbers = _numbers(text)
    base = ".".join(map(str, numbers))
    upper = next((i for i, n in enumerate(numbers) if n != 0), len(numbers) - 1)
    bound = [*numbers[:upper], numbers[upper] + 1]
    return f">={base},<{'.'.join(map(str, bound))}"


def _tilde(text: str) -> str:
    numbers = _numbers(text)
    base = ".".join(map(str, numbers))
    bound = [numbers[0] + 1] if len(numbers) == 1 else [numbers[0], numbers[1] + 1]
    return f">={base},<{'.'.join(map(str, bound))}"


def satisfies(version: str, specifier: str) -> bool:
    """Whether `version` is in the range (PEP 440 or semver); an unreadable version is not."""
    pep440 = to_pep440(specifier)
    if not pep440:
        return True
    # lazy: packaging takes ~11 ms to import, only this path needs it
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return Version(version) in SpecifierSet(pep440, prereleases=True)
    except InvalidVersion:
        return False
    except InvalidSpecifier:
        raise PlugmanError(
            f"{specifier!r} is not a version range",
            hint="use PEP 440 (>=1.2,<2) or semver (^1.2, ~1.2.3)",
        ) from None


def check(specifier: str) -> None:
    """Raise UsageError when `specifier`, given on the command line, cannot be read."""
    try:
        satisfies("0", specifier)
    except PlugmanError as exc:
        raise UsageError(exc.message, hint=exc.hint) from None


_SEMVER = re.compile(
    r"^v?(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z.-]+)?$"
)


def order(new: str, old: str) -> int | None:
    """-1, 0 or 1 as `new` is older than, equal to or newer than `old`: by semver's precedence
    when both are semver (npm's; build metadata ignored), else by PEP 440; None when they cannot
    be compared (a version made from a commit or digest, or unreadable text)."""
    semver = [_SEMVER.match(v.strip()) for v in (new, old)]
    if semver[0] and semver[1]:
        keys = [_semver_key(m) for m in semver if m]
        return (keys[0] > keys[1]) - (keys[0] < keys[1])

    try:
        one, two = Version(new), Version(old)
    except InvalidVersion:
        return None
    return (one > two) - (one < two)


def _semver_key(match: re.Match[str]) -> tuple[tuple[int, ...], tuple[tuple[int, int, str], ...]]:
    """Semver 2.0 precedence: the numbers, then a release above any of its pre-releases, whose
    dot-separated parts compare numerically (below) or as text."""
    numbers = tuple(int(n) for n in match.groups()[:3])
    pre = match.group(4)
    if pre is None:
        return numbers, ((2, 0, ""),)
    parts = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return numbers, parts
