"""Signing keys and Sigstore bundles: the cryptography of plugman's signatures, no I/O.

A key pair is ECDSA P-256 (Sigstore's `PKIX_ECDSA_P256_SHA_256`, cosign's default): the
private key PKCS#8 PEM (encrypted when a password is given), the public key a PEM
SubjectPublicKeyInfo, as `cosign.pub` is. A key's fingerprint, the signer plugman records, is
`sha256:` and the hex SHA-256 of its DER SubjectPublicKeyInfo.

A signature is a Sigstore bundle v0.3 (`application/vnd.dev.sigstore.bundle.v0.3+json`) with
a `messageSignature`: an ECDSA-SHA256 signature (DER) over the signed bytes (a plugin
artifact's OCI manifest), their SHA-256 as `messageDigest`, and the key's fingerprint as
`verificationMaterial.publicKey.hint`; no transparency log entry, no timestamp (the key is
the trust root: a verifier passes thresholds of 0, as `@sigstore/verify` allows).

This module is where `cryptography` (~45 ms to import) is loaded: the modules that sign or
verify import this one inside the functions that need it, so no other command loads it.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any, NamedTuple

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ec import (
    EllipticCurvePrivateKey,
    EllipticCurvePublicKey,
)

from plugman.core.errors import PlugmanError, UsageError

BUNDLE = "application/vnd.dev.sigstore.bundle.v0.3+json"
MAX_BUNDLE = 1024 * 1024


class Verified(NamedTuple):
    """A bundle that verifies: who signed (the key's fingerprint) and the key (PEM)."""

    signer: str
    public_key: bytes


class KeyPair(NamedTuple):
    private: bytes  # PKCS#8 PEM, encrypted when a password was given
    public: bytes  # SubjectPublicKeyInfo PEM
    fingerprint: str


def generate(password: str | None) -> KeyPair:
    """A new P-256 key pair, the private key encrypted with `password` when given."""
    key = ec.generate_private_key(ec.SECP256R1())
    encryption: serialization.KeySerializationEncryption = (
        serialization.BestAvailableEncryption(password.encode())
        if password
        else serialization.NoEncryption()
    )
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )
    public = public_pem(key.public_key())
    return KeyPair(private, public, fingerprint(key.public_key()))


def public_pem(key: EllipticCurvePublicKey) -> bytes:

    return key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def fingerprint(key: EllipticCurvePublicKey) -> str:
    """`sha256:<hex>` of the key's DER SubjectPublicKeyInfo: the signer plugman records."""
    der = key.public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return "sha256:" + hashlib.sha256(der).hexdigest()


def load_private(data: bytes, password: str | None, where: str) -> EllipticCurvePrivateKey:
    """A private key from PEM; a clear error for a wrong or missing password, or another kind."""
    encrypted = b"ENCRYPTED" in data.split(b"\n", 1)[0]
    if encrypted and not password:
        raise UsageError(
            "the signing key is encrypted and no password was given",
            where=where,
            hint="set PLUGMAN_SIGNING_PASSWORD to the key's password",
        )
    try:
        key = serialization.load_pem_private_key(
            data, (password or "").encode() if encrypted else None
        )
    except (ValueError, TypeError) as exc:
        wrong = (encrypted and "password" in str(exc).lower()) or "decrypt" in str(exc).lower()
        raise UsageError(
            "wrong password for the signing key" if wrong else "not a PEM private key",
            where=where,
            hint="check PLUGMAN_SIGNING_PASSWORD"
            if wrong
            else "give the .key file plugman key generate wrote",
        ) from None
    if not isinstance(key, ec.EllipticCurvePrivateKey) or key.curve.name != "secp256r1":
        raise UsageError(
            "the signing key is not an ECDSA P-256 key",
            where=where,
            hint="make one with: plugman key generate",
        )
    return key


def load_public(data: bytes, where: str) -> EllipticCurvePublicKey:
    """A P-256 public key from PEM (SubjectPublicKeyInfo); PlugmanError otherwise."""
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError):
        key = None
    if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
        raise PlugmanError(
            "not an ECDSA P-256 public key in PEM form",
            where=where,
            hint="a signer's key is the .pub file plugman key generate wrote",
        )
    return key


def sign(key: EllipticCurvePrivateKey, message: bytes) -> bytes:
    """A Sigstore bundle (JSON bytes) signing `message` with `key`."""
    signature = key.sign(message, ec.ECDSA(hashes.SHA256()))
    bundle = {
        "mediaType": BUNDLE,
        "verificationMaterial": {
            "publicKey": {"hint": fingerprint(key.public_key())},
            "tlogEntries": [],
            "timestampVerificationData": {"rfc3161Timestamps": []},
        },
        "messageSignature": {
            "messageDigest": {
                "algorithm": "SHA2_256",
                "digest": _b64(hashlib.sha256(message).digest()),
            },
            "signature": _b64(signature),
        },
    }
    return json.dumps(bundle, separators=(",", ":")).encode()


def verify(bundle: bytes, message: bytes, public_key: bytes) -> Verified | str:
    """Whether `bundle` signs `message` with `public_key` (PEM): who signed, else why not
    (one line)."""
    try:
        key = load_public(public_key, "the signature's public key")
    except PlugmanError as exc:
        return exc.message
    found = _content(bundle)
    if isinstance(found, str):
        return found
    hint, algorithm, digest, signature = found
    signer = fingerprint(key)
    if hint and hint != signer:
        return f"the bundle names key {hint}, but the key given with it is {signer}"
    if algorithm != "SHA2_256" or digest != hashlib.sha256(message).digest():
        return "the bundle's message digest is not the artifact's"
    try:
        key.verify(signature, message, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return "the signature does not verify with its key"
    return Verified(signer, public_pem(key))


def _content(bundle: bytes) -> tuple[str, str, bytes, bytes] | str:
    """(hint, digest algorithm, digest, signature) of a bundle, or what is wrong with it."""
    try:
        data: Any = json.loads(bundle)
        if data.get("mediaType") != BUNDLE:
            return f"not a Sigstore bundle v0.3 (media type {data.get('mediaType')!r})"
        signed = data["messageSignature"]
        material = data.get("verificationMaterial") or {}
        hint = str((material.get("publicKey") or {}).get("hint") or "")
        digest = signed["messageDigest"]
        return (
            hint,
            str(digest.get("algorithm")),
            base64.b64decode(digest["digest"], validate=True),
            base64.b64decode(signed["signature"], validate=True),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return "the signature bundle cannot be read (not a Sigstore message-signature bundle)"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
