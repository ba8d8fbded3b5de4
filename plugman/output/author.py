"""Results of `plugman new`, `pack`, `tag` and `marketplace build`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from plugman.output.common import diagnostic_lines, display_path, envelope

if TYPE_CHECKING:
    from plugman.manifest.diagnostics import Diagnostic
    from plugman.plugins.authoring.market_build import Built
    from plugman.plugins.authoring.pack import Packed
    from plugman.plugins.authoring.publish import Published
    from plugman.plugins.authoring.scaffold import Scaffolded
    from plugman.plugins.authoring.tagging import Tagged


def plugin_warnings(found: Iterable[Diagnostic]) -> str:
    """Warnings a command went ahead despite, one per line (for stderr)."""
    return "\n".join(line for d in found for line in diagnostic_lines(d))


def _diagnostics(found: Iterable[Diagnostic]) -> list[dict[str, object]]:
    return [{**d._asdict(), "file": display_path(d.file)} for d in found]


def scaffolded(made: Scaffolded, as_json: bool) -> str:
    root = display_path(str(made.root))
    if as_json:
        return envelope(
            "new", kind=made.kind, name=made.name, root=str(made.root), files=list(made.files)
        )
    lines = [f"created {made.kind} {made.name} in {root}/"]
    lines += [f"  {file}" for file in made.files]
    if made.kind == "plugin":
        lines.append(f"next: edit it, then `plugman validate --strict {root}`")
    else:
        lines.append(
            f"next: `plugman new NAME --dir {root}/plugins/NAME`, "
            f"then `plugman marketplace build {root}`"
        )
    return "\n".join(lines)


def packed(result: Packed, as_json: bool) -> str:
    where = display_path(str(result.output)) if result.output else ""
    if as_json:
        return envelope(
            "pack",
            name=result.name,
            version=result.version,
            description=result.description,
            file=str(result.output) if result.output else None,
            sha256=result.sha256,
            size=result.size,
            files=list(result.files),
            warnings=_diagnostics(result.warnings),
        )
    version = f" {result.version}" if result.version else ""
    count = len(result.files)
    return "\n".join(
        [
            f"packed {result.name}{version} ({count} file{'s' * (count != 1)}) into {where}",
            f"  sha256  {result.sha256}",
            f"  size    {result.size} bytes",
        ]
    )


def published(result: Published, as_json: bool) -> str:
    packed = result.packed
    if as_json:
        return envelope(
            "publish",
            name=packed.name,
            version=packed.version,
            ref=result.ref,
            digest=result.digest,
            sha256=packed.sha256,
            size=packed.size,
            warnings=_diagnostics(packed.warnings),
            **({"signer": result.signed.signer} if result.signed else {}),
        )
    signed = [f"  signer  {result.signed.signer}"] if result.signed else []
    return "\n".join(
        [
            f"published {packed.name} {packed.version} to {result.ref}",
            f"  digest  {result.digest}",
            f"  size    {packed.size} bytes",
            *signed,
            f"install: plugman install oci://{result.ref}@{result.digest}",
        ]
    )


def tagged(result: Tagged, as_json: bool) -> str:
    if as_json:
        return envelope(
            "tag",
            tag=result.tag,
            name=result.name,
            version=result.version,
            commit=result.commit,
            repository=str(result.repository),
            action=result.action,
            annotated=result.annotated,
            warnings=_diagnostics(result.warnings),
        )
    kind = "annotated" if result.annotated else "lightweight"
    at = f"at {result.commit[:12]}"
    if result.action == "unchanged":
        return f"tag {result.tag} is already there ({at}, the same plugin content): nothing to do"
    if result.action == "planned":
        return f"would create {kind} tag {result.tag} {at} (dry run)"
    return f"created {kind} tag {result.tag} {at}\nnext: git push origin {result.tag}"


def built(result: Built, as_json: bool) -> str:
    if as_json:
        return envelope(
            "marketplace build",
            file=str(result.file),
            written=result.written,
            stale=result.stale,
            plugins=[change._asdict() for change in result.changes],
            missing=list(result.missing),
        )
    lines = []
    for change in result.changes:
        fields = f": {', '.join(change.fields)}" if change.fields else ""
        lines.append(f"{change.action:9} {change.name} ({change.source}){fields}")
    lines += [f"warning: the entry for {source} has no folder (kept)" for source in result.missing]
    file = display_path(str(result.file))
    if result.written:
        lines.append(f"wrote {file}")
    elif not result.stale:
        lines.append(f"{file} is up to date")
    return "\n".join(lines)
