"""Bringing the linked agents up to date inside a command's session, for the commands that
must stay light (install, uninstall, enable, disable): with no agent linked there is nothing to
do, and the agents layer (~40 ms to import) is not loaded. The other commands call
plugman.agents.deploy.refresh directly."""

from __future__ import annotations

import os

from plugman.agents import links
from plugman.core import progress
from plugman.core.session import Session


def if_linked(work: Session) -> None:
    """Rewrite every linked agent's files as resolved now, when an agent is linked."""
    if links.every(work.paths):
        from plugman.agents import deploy  # lazy: ~67 ms, loaded only when an agent is linked

        progress.say("writing the linked agents' files")
        deploy.refresh(work, os.environ)
