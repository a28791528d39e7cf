"""Signature, key enrolment, nonce freshness and policy checks of a statement."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import secrets
import threading
import time
from typing import Any, Callable, Iterable, Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

#: Carrel never makes a longer statement (it must fit one Wayland event).
MAXIMUM_STATEMENT_BYTES = 3072
FORMAT = "carrel-attestation-1"


class Refused(Exception):
    """A statement the server must not accept: `reason` (a code) and why."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason = reason
        self.message = message


def fingerprint(raw_public_key: bytes) -> str:
    """SHA-256 of the raw 32-byte public key, hex: what statements name."""
    return hashlib.sha256(raw_public_key).hexdigest()


def canonical_bytes(value: Any) -> bytes:
    """The canonical encoding Carrel signs: sorted keys, no whitespace, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class NonceStore:
    """Nonces this server issued: each may be used once, within `ttl_seconds`.

    Bounded: a nonce issued more than twice `ttl_seconds` ago is forgotten,
    used or not, and from then on refused as unknown (it would be refused as
    expired anyway), so a server handing out nonces for days keeps only
    those of the last two periods."""

    def __init__(self, ttl_seconds: float = 600.0, nbytes: int = 32,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not 16 <= nbytes <= 256:
            raise ValueError("Carrel accepts nonces of 16 to 256 bytes")
        self.ttl = ttl_seconds
        self.nbytes = nbytes
        self.clock = clock
        self._issued: dict[str, float] = {}
        self._used: dict[str, float] = {}
        self._lock = threading.Lock()

    def issue(self) -> str:
        """A new nonce, hex, to hand to one exam app for one submission."""
        nonce = secrets.token_hex(self.nbytes)
        with self._lock:
            self._forget_old()
            self._issued[nonce] = self.clock()
        return nonce

    def record(self, nonce: str, issued_at: float | None = None) -> None:
        """Adds a nonce issued elsewhere (another process of the same server,
        a store kept on disk) as if `issue` had made it at `issued_at`."""
        with self._lock:
            self._forget_old()
            self._issued[nonce] = self.clock() if issued_at is None else issued_at

    def _forget_old(self) -> None:
        """Drops nonces issued more than two periods ago (the lock held)."""
        horizon = self.clock() - 2 * self.ttl
        for table in (self._issued, self._used):
            for old in [n for n, issued in table.items() if issued < horizon]:
                del table[old]

    def consume(self, nonce: str) -> None:
        """Marks `nonce` used; refuses one never issued, already used or too old."""
        with self._lock:
            if nonce in self._used:
                raise Refused("nonce_replayed", f"nonce {nonce[:16]}… was already used by an earlier submission: "
                              "this statement is a replay")
            issued = self._issued.pop(nonce, None)
            if issued is None:
                raise Refused("nonce_unknown", f"nonce {nonce[:16]}… was not issued by this server: "
                              "the statement was made for another server or request")
            self._used[nonce] = issued
            if self.clock() - issued > self.ttl:
                raise Refused("nonce_expired", f"nonce {nonce[:16]}… was issued {self.clock() - issued:.0f} s ago, "
                              f"more than the {self.ttl:.0f} s allowed: ask for a new one")


def _decode_key(text: str) -> Ed25519PublicKey:
    raw = base64.b64decode(text.strip(), validate=True)
    if len(raw) != 32:
        raise ValueError(f"an Ed25519 public key has 32 bytes, not {len(raw)}")
    return Ed25519PublicKey.from_public_bytes(raw)


class Verifier:
    """Accepts a statement only if every check passes; else raises Refused.

    enrolled_keys: the base64 public keys (attestation.pub lines) of machines
    enrolled for the exam. The other arguments are the exam's policy.
    """

    def __init__(self, enrolled_keys: Iterable[str], nonces: NonceStore, *,
                 require_no_waivers: bool = True,
                 required_configuration_digest: str | None = None,
                 require_not_interrupted: bool = True) -> None:
        self.keys: dict[str, Ed25519PublicKey] = {}
        for text in enrolled_keys:
            key = _decode_key(text)
            raw = base64.b64decode(text.strip())
            self.keys[fingerprint(raw)] = key
        self.nonces = nonces
        self.require_no_waivers = require_no_waivers
        self.required_configuration_digest = required_configuration_digest
        self.require_not_interrupted = require_not_interrupted

    def verify(self, envelope: Mapping[str, Any] | bytes | str) -> dict[str, Any]:
        """The statement's fields when accepted. `envelope` is
        {"statement": str, "signature": base64} (or its JSON text), or a
        submission with that object under "attestation"."""
        statement, signature = self._unpack(envelope)
        if len(statement) > MAXIMUM_STATEMENT_BYTES:
            raise Refused("oversized", f"the statement has {len(statement)} bytes; Carrel's are at most "
                          f"{MAXIMUM_STATEMENT_BYTES}")
        try:
            fields = json.loads(statement.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            fields = None
        named = fields.get("key_fingerprint") if isinstance(fields, dict) else None
        candidates = [self.keys[named]] if named in self.keys else []
        if named is not None and not candidates:
            raise Refused("unknown_key", f"the statement was signed by key {named}, which is not enrolled: "
                          "another machine, or a key that was rotated or revoked")
        if named is None:
            candidates = list(self.keys.values())
        if not any(self._signed_by(key, signature, statement) for key in candidates):
            raise Refused("bad_signature", "the signature does not match the statement's bytes: "
                          "the statement was changed or cut short after it was signed")
        if not isinstance(fields, dict) or fields.get("format") != FORMAT:
            raise Refused("malformed", f"signed, but not a {FORMAT} statement")
        if canonical_bytes(fields) != statement:
            raise Refused("not_canonical", "the statement is not in canonical form (sorted keys, no whitespace)")
        self.nonces.consume(str(fields.get("nonce", "")))
        waived = fields.get("preconditions", {}).get("waived", [])
        if self.require_no_waivers and waived:
            raise Refused("waived_preconditions", "the session ran with preconditions waived "
                          f"({', '.join(waived)}): a test set-up, not an exam machine")
        digest = fields.get("configuration_digest")
        if self.required_configuration_digest and digest != self.required_configuration_digest:
            raise Refused("configuration_mismatch", f"the session's configuration digest is {digest}, "
                          f"not the exam's {self.required_configuration_digest}")
        session = fields.get("session", {})
        if self.require_not_interrupted and session.get("interrupted") is not False:
            reasons = ", ".join(session.get("interruptions", [])) or "reason not given"
            raise Refused("interrupted", f"the session was interrupted ({reasons}): the answers were not "
                          "all written under whole restrictions")
        return fields

    @staticmethod
    def _signed_by(key: Ed25519PublicKey, signature: bytes, statement: bytes) -> bool:
        try:
            key.verify(signature, statement)
            return True
        except InvalidSignature:
            return False

    @staticmethod
    def _unpack(envelope: Mapping[str, Any] | bytes | str) -> tuple[bytes, bytes]:
        if isinstance(envelope, (bytes, str)):
            try:
                envelope = json.loads(envelope)
            except ValueError:
                raise Refused("malformed", "not JSON; expected {\"statement\": ..., \"signature\": ...}") from None
        if not isinstance(envelope, Mapping):
            raise Refused("malformed", "not a JSON object")
        if isinstance(envelope.get("attestation"), Mapping):
            envelope = envelope["attestation"]
        statement, signature = envelope.get("statement"), envelope.get("signature")
        if not isinstance(statement, str):
            raise Refused("malformed", "no \"statement\" string: the submission carries no attestation")
        try:
            raw_signature = base64.b64decode(signature or "", validate=True)
        except (binascii.Error, TypeError):
            raise Refused("malformed", "the signature is not base64") from None
        if len(raw_signature) != 64:
            raise Refused("malformed", f"the signature has {len(raw_signature)} bytes; an Ed25519 signature has 64")
        return statement.encode("utf-8"), raw_signature
