"""What makes an install trustworthy and accountable: signatures and keys, the lock file and
what a lock may ask for, the SBOM (CycloneDX, SPDX) and the capability diff shown
before consent.

The face: the modules other packages may import (`__all__`); the rest are this
package's own."""

__all__ = [
    "capabilities",
    "keys",
    "lock_trust",
    "lockfile",
    "sbom",
    "sbom_servers",
    "signing",
]
