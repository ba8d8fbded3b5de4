"""`plugman key generate`: a signing key pair for `plugman publish --sign` and `plugman sign`.

PREFIX.key is the private key (PKCS#8 PEM, mode 0600, encrypted with PLUGMAN_SIGNING_PASSWORD
when it is set) and PREFIX.pub the public key (PEM, what a policy or a verifier is given);
neither is ever overwritten. The fingerprint is the signer plugman records.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

from plugman.core.errors import PlugmanError, UsageError
from plugman.plugins.supply_chain.signing import PASSWORD


class Generated(NamedTuple):
    private: Path
    public: Path
    fingerprint: str
    encrypted: bool


def generate(prefix: Path, env: Mapping[str, str]) -> Generated:
    """Write PREFIX.key and PREFIX.pub; refused when either exists."""
    # lazy: core.signatures takes ~21 ms to import, only this path needs it
    from plugman.core import signatures

    private, public = (prefix.with_name(prefix.name + ext) for ext in (".key", ".pub"))
    for path in (private, public):
        if path.exists() or path.is_symlink():
            raise UsageError(
                "a file is already there; plugman does not overwrite a key",
                where=str(path),
                hint="choose another prefix with --output PREFIX, or move the old key away",
            )
    if not private.parent.is_dir():
        raise UsageError(
            f"folder {private.parent} does not exist",
            hint="create it, or give --output PREFIX in an existing folder",
        )
    password = env.get(PASSWORD) or None
    pair = signatures.generate(password)
    written: list[Path] = []
    try:
        for path, data, mode in ((private, pair.private, 0o600), (public, pair.public, 0o644)):
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
            with os.fdopen(os.open(path, flags, mode), "wb") as out:
                written.append(path)
                out.write(data)
    except OSError as exc:
        for path in written:
            path.unlink(missing_ok=True)
        raise PlugmanError(
            f"cannot write the key: {exc.strerror}",
            where=str(exc.filename or private),
            hint="check the folder's permissions and free space",
        ) from None
    return Generated(private, public, pair.fingerprint, password is not None)
