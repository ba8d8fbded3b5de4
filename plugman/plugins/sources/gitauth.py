"""What a failed `git clone` says about credentials, in one clear error naming what to set.

plugman authenticates to a private git repository as git does, through the user's own
credential helpers (`git config credential.helper`) and SSH keys (ssh-agent, `~/.ssh`); it
never prompts and never takes a token in a URL (plugman.plugins.sources.giturl refuses one).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from plugman.core.errors import FetchError
from plugman.plugins.sources.giturl import SCHEME, SCP, shown

# stderr of git (and ssh) → what happened; the first that matches decides
NO_CREDENTIAL = ("terminal prompts disabled", "could not read username", "could not read password")
REFUSED = ("authentication failed", "http basic: access denied", "returned error: 401")
FORBIDDEN = ("returned error: 403",)
SSH_KEY = ("permission denied (publickey", "permission denied, please try again")
HOST_KEY = ("host key verification failed",)
HELPER_HINT = (
    "set a git credential helper that knows it (git config --global credential.helper "
    "'store' or your platform's helper, then git credential approve; see "
    "docs/private-sources.md), or use an ssh:// URL with a key in ssh-agent"
)


def auth_failure(url: str, stderr: str) -> FetchError | None:
    """The error for a clone that failed for want of credentials; None for any other failure."""
    text = stderr.lower()
    where = shown(url)
    if any(mark in text for mark in SSH_KEY):
        return FetchError(
            f"{where} refused your SSH key",
            hint=f"add a key that can read it to ssh-agent (ssh-add) or ~/.ssh, and check "
            f"with: ssh -T {_ssh_host(url)}",
        )
    if any(mark in text for mark in HOST_KEY):
        return FetchError(
            f"the SSH host key of {_ssh_host(url)} is not known or has changed",
            hint=f"check it and add it to ~/.ssh/known_hosts (ssh {_ssh_host(url)} once, or "
            "ssh-keyscan); plugman never answers ssh's questions for you",
        )
    if any(mark in text for mark in NO_CREDENTIAL):
        return FetchError(
            f"{where} needs credentials and no git credential helper gave any",
            hint=HELPER_HINT,
        )
    if any(mark in text for mark in REFUSED):
        return FetchError(
            f"{where} refused the credentials git gave it (HTTP 401)",
            hint="update the credential your git credential helper stores for "
            f"{_origin(url)} (git credential reject, then approve the new one), or "
            "check that the token may read the repository",
        )
    if any(mark in text for mark in FORBIDDEN):
        return FetchError(
            f"{where} refused access with these credentials (HTTP 403)",
            hint=f"the credential git uses for {_origin(url)} may not read this repository: "
            "give it read access, or store another with your git credential helper",
        )
    return None


def _origin(url: str) -> str:
    if SCHEME.match(url):
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.hostname or ''}" + (f":{parts.port}" if parts.port else "")
    return url


def _ssh_host(url: str) -> str:
    if SCHEME.match(url):
        parts = urlsplit(url)
        return f"{parts.username}@{parts.hostname}" if parts.username else parts.hostname or url
    scp = SCP.match(url)
    if scp:
        return f"{scp.group(1)}@{scp.group(2)}" if scp.group(1) else scp.group(2)
    return url
