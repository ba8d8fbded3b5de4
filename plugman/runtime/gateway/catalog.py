"""What the gateway offers: every backend's tools, resources and prompts, in one set.

- A backend that is up gives what it lists; one still starting gives what it listed in an
  earlier session (plugman.runtime.gateway.memory), its routes marked `recalled`.
- Tools and prompts are listed as `<server>__<name>` or `plugin_<plugin>_<server>__<name>`
  (plugman.runtime.gateway.naming.gateway_name: the agent adds its own `mcp__plugman__`), at most 50
  characters; a route maps each back to its backend, the backend's own name, and the name an
  agent connected to that server itself would use (`mcp__<server>__<name>`: what plugman's hook
  matchers are written against).
- Backends are taken in name order. When a name is taken (two servers whose names normalize
  alike, or a hash collision of shortened names), the later tool or prompt is listed under a
  salted name (`gateway_name(..., salt=1)`, 2, ...), reported in `conflicts`: two never share a
  name. Of two resources with the same URI (or two templates with the same URI template) the
  first keeps it and the others are reported.
- Tool descriptions over 2,048 characters are cut, ending in a marker
  (plugman.runtime.gateway.pool); annotations, schemas, titles and icons travel along unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from plugman.config.gateway_access import Grant
from plugman.runtime.gateway.backends import Backend
from plugman.runtime.gateway.memory import Offer, Recalled
from plugman.runtime.gateway.naming import free_name, gateway_name, tool_name
from plugman.runtime.gateway.pool import cut

MAX_SALT = 1000


@dataclass(frozen=True)
class Route:
    backend: Backend
    name: str  # the backend's own name (tool or prompt)
    item: Any  # what the gateway lists: mcp.types.Tool or Prompt, renamed
    agent: str = ""  # a tool's name for hooks: `mcp__<server>__<tool>`, as agents name it
    recalled: bool = False  # from an earlier session: the backend is not up yet


@dataclass
class Catalog:
    tools: dict[str, Route] = field(default_factory=dict)
    prompts: dict[str, Route] = field(default_factory=dict)
    resources: dict[str, Route] = field(default_factory=dict)  # by URI
    templates: list[tuple[re.Pattern[str], Route]] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # what a later backend lost, said plainly

    def resource_route(self, uri: str, grant: Grant | None = None) -> Route | None:
        """The backend serving `uri`: a listed resource, else the first matching template (of
        a server `grant` lets its caller use, when given)."""
        found = self.resources.get(uri)
        if found is not None and (grant is None or grant.server(found.backend.name)):
            return found
        return next(
            (
                route
                for pattern, route in self.templates
                if (grant is None or grant.server(route.backend.name)) and pattern.fullmatch(uri)
            ),
            None,
        )

    def listing(self, kind: str) -> list[Any]:
        """What `tools/list`, `prompts/list`, `resources/list` or `resources/templates/list`
        returns, in pool order."""
        if kind == "templates":
            return [route.item for _, route in self.templates]
        routes: dict[str, Route] = getattr(self, kind)
        return [route.item for route in routes.values()]

    def visible(self, kind: str, grant: Grant) -> list[Any]:
        """`listing(kind)` as a caller with `grant` sees it: the tools it may call, the prompts,
        resources and templates of the servers it may use."""
        if kind == "tools":
            return [r.item for r in self.tools.values() if grant.tool(r.backend.name, r.name)]
        routes = [r for _, r in self.templates] if kind == "templates" else self.routes(kind)
        return [route.item for route in routes if grant.server(route.backend.name)]

    def routes(self, kind: str) -> list[Route]:
        table: dict[str, Route] = getattr(self, kind)
        return list(table.values())


def build(backends: Iterable[Backend], recalled: Mapping[str, Recalled] | None = None) -> Catalog:
    """The catalog of the backends that are up, and of those still starting whose catalog is
    `recalled` (by backend name), taken in name order."""
    found = Catalog()
    for backend in sorted(backends, key=lambda b: b.name):
        offer: Offer | None = backend if backend.state == "up" else None
        if offer is None and recalled is not None:
            offer = recalled.get(backend.name)
        if offer is None:
            continue
        old = offer is not backend
        for tool in offer.tools:
            name = _free(found.tools, found, backend, tool.name, "tool")
            description = cut(tool.description) if tool.description else None
            item = tool.model_copy(update={"name": name, "description": description})
            agent = tool_name(backend.server, tool.name, backend.plugin)
            found.tools[name] = Route(backend, tool.name, item, agent, old)
        for prompt in offer.prompts:
            name = _free(found.prompts, found, backend, prompt.name, "prompt")
            item = prompt.model_copy(update={"name": name})
            found.prompts[name] = Route(backend, prompt.name, item, recalled=old)
        for resource in offer.resources:
            uri = str(resource.uri)
            _claim(found, found.resources, uri, Route(backend, uri, resource, recalled=old))
        _templates(found, backend, offer, old)
    return found


def _free(table: dict[str, Route], found: Catalog, backend: Backend, own: str, kind: str) -> str:
    """The name to list `own` of `backend` under: its gateway name, or a salted one if taken."""
    name, salt = free_name(backend.name, own, table, MAX_SALT)
    if salt:
        plain = gateway_name(backend.name, own)
        found.conflicts.append(
            f"{kind} {own} of {backend.name} is listed as {name}: {plain} was taken"
        )
    return name


def _claim(found: Catalog, table: dict[str, Route], key: str, route: Route) -> None:
    winner = table.get(key)
    if winner is None:
        table[key] = route
        return
    found.conflicts.append(
        f"resource {key} of {route.backend.name} is hidden: {winner.backend.name} has it too"
    )


def _templates(found: Catalog, backend: Backend, offer: Offer, old: bool) -> None:
    taken = {route.item.uri_template: route for _, route in found.templates}
    for template in offer.templates:
        winner = taken.get(template.uri_template)
        if winner is not None:
            found.conflicts.append(
                f"resource template {template.uri_template} of {backend.name} is hidden: "
                f"{winner.backend.name} has it too"
            )
            continue
        route = Route(backend, template.uri_template, template, recalled=old)
        found.templates.append((template_pattern(template.uri_template), route))


def template_pattern(template: str) -> re.Pattern[str]:
    """A URI template (RFC 6570) as a regex: `{name}` matches one path segment, an operator
    form (`{+path}`, `{/a,b}`, `{?q}`, ...) matches anything."""
    regex = ""
    for part in re.split(r"(\{[^}]*\})", template):
        if not part.startswith("{"):
            regex += re.escape(part)
        elif re.fullmatch(r"\{[A-Za-z0-9_.%]+\}", part):
            regex += "[^/]+"
        else:
            regex += ".*"
    return re.compile(regex)
