"""clients/python/carrel_attest on its own, with keys and statements made here
(no Carrel): the checks the end-to-end test cannot reach with Carrel's own,
always canonical, statements — a non-canonical statement, a statement with no
key fingerprint, a nonce store's single use and expiry."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))
import carrel_attest  # noqa: E402


def make_key():
    private = Ed25519PrivateKey.generate()
    raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return private, base64.b64encode(raw).decode(), carrel_attest.fingerprint(raw)


def envelope(private, text: str) -> dict:
    return {"statement": text, "signature": base64.b64encode(private.sign(text.encode())).decode()}


def fields(fingerprint, nonce, **extra):
    value = {"format": "carrel-attestation-1", "key_fingerprint": fingerprint, "nonce": nonce,
             "configuration_digest": "cd", "preconditions": {"waived": []},
             "session": {"interrupted": False, "interruptions": []}}
    value.update(extra)
    return value


def canonical(value) -> str:
    # Written out independently of carrel_attest.canonical_bytes.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_a_canonical_statement_is_accepted_and_a_reformatted_one_refused():
    private, public, fp = make_key()
    store = carrel_attest.NonceStore()
    nonce = store.issue()
    verifier = carrel_attest.Verifier([public], store)
    good = canonical(fields(fp, nonce))
    assert verifier.verify(envelope(private, good))["nonce"] == nonce
    second = store.issue()
    spaced = json.dumps(fields(fp, second), sort_keys=True)  # ", " and ": ": signed, but not canonical
    with pytest.raises(carrel_attest.Refused) as refused:
        verifier.verify(envelope(private, spaced))
    assert refused.value.reason == "not_canonical"


def test_without_a_fingerprint_every_enrolled_key_is_tried():
    a, a_public, _ = make_key()
    b, b_public, _ = make_key()
    store = carrel_attest.NonceStore()
    nonce = store.issue()
    statement = canonical({k: v for k, v in fields("x", nonce).items() if k != "key_fingerprint"})
    assert carrel_attest.Verifier([a_public, b_public], store).verify(envelope(b, statement))["nonce"] == nonce
    other, _, _ = make_key()
    with pytest.raises(carrel_attest.Refused) as refused:
        carrel_attest.Verifier([a_public, b_public], store).verify(envelope(other, statement))
    assert refused.value.reason == "bad_signature"


def test_nonces_are_single_use_and_expire():
    now = [100.0]
    store = carrel_attest.NonceStore(ttl_seconds=10, clock=lambda: now[0])
    nonce = store.issue()
    assert len(bytes.fromhex(nonce)) == 32
    store.consume(nonce)
    with pytest.raises(carrel_attest.Refused) as refused:
        store.consume(nonce)
    assert refused.value.reason == "nonce_replayed"
    late = store.issue()
    now[0] += 11
    with pytest.raises(carrel_attest.Refused) as refused:
        store.consume(late)
    assert refused.value.reason == "nonce_expired"
    with pytest.raises(carrel_attest.Refused) as refused:
        store.consume("00" * 16)
    assert refused.value.reason == "nonce_unknown"
    with pytest.raises(ValueError):
        carrel_attest.NonceStore(nbytes=8)


def test_the_nonce_store_forgets_what_is_two_periods_old_and_still_refuses_it():
    now = [100.0]
    store = carrel_attest.NonceStore(ttl_seconds=10, clock=lambda: now[0])
    used, unused = store.issue(), store.issue()
    store.consume(used)
    now[0] += 21
    store.issue()  # issuing forgets what is older than two periods
    assert len(store._issued) == 1 and not store._used, "old nonces were kept"
    for nonce in (used, unused):
        with pytest.raises(carrel_attest.Refused) as refused:
            store.consume(nonce)
        assert refused.value.reason == "nonce_unknown"


def test_malformed_envelopes_say_what_is_missing():
    private, public, fp = make_key()
    verifier = carrel_attest.Verifier([public], carrel_attest.NonceStore())
    cases = ["not json", json.dumps([1]), json.dumps({"answers": {}}),
             json.dumps({"statement": "{}", "signature": "***"}),
             json.dumps({"statement": "{}", "signature": base64.b64encode(b"short").decode()})]
    for text in cases:
        with pytest.raises(carrel_attest.Refused) as refused:
            verifier.verify(text)
        assert refused.value.reason == "malformed" and refused.value.message, text
