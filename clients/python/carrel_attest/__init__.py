"""Checks Carrel's signed session statements on an exam server.

An exam app running under Carrel sends, with its answers, a statement about
its session signed with the machine's Ed25519 attestation key (see
docs/ATTESTATION.md). This package checks one the way a server should:

    nonces = NonceStore(ttl_seconds=600)
    verifier = Verifier(enrolled_keys=[pub_b64], nonces=nonces,
                        required_configuration_digest=EXAM_CONFIG_DIGEST)
    nonce = nonces.issue()            # GET /nonce → give this to the app
    ...
    statement = verifier.verify(submission["attestation"])   # raises Refused

Every refusal is a `Refused` whose `reason` is a short code and whose
message says what was wrong and what it means.
"""

from .verifier import (MAXIMUM_STATEMENT_BYTES, NonceStore, Refused, Verifier,
                       canonical_bytes, fingerprint)

__all__ = ["MAXIMUM_STATEMENT_BYTES", "NonceStore", "Refused", "Verifier", "canonical_bytes", "fingerprint"]
