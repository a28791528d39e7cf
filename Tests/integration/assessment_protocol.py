"""carrel-assessment-v1's wire values, and the small helpers over a Driver that
read or send them: what the tests of the protocol share (test_assessment.py and
the tests that begin sessions with its pywayland client)."""

from __future__ import annotations

import assessment_client
import carrel_harness as h
from carrel_clients import EVENT_TIMEOUT, Driver

# Wire values, from the enums pywayland's scanner generates from
# protocols/carrel-assessment-v1.xml (the contract), never literals.
WIRE = assessment_client.wire()
MANAGER_WIRE, CONFIGURATION_WIRE, SESSION_WIRE = (WIRE.CarrelAssessmentManagerV1, WIRE.CarrelAssessmentConfigurationV1,
                                                 WIRE.CarrelAssessmentSessionV1)
FEATURES = {f.value for f in MANAGER_WIRE.feature}  # spell_check .. screen_reader
CLIENT_ENFORCEMENT = MANAGER_WIRE.enforcement.client.value
ENFORCEMENTS = {e.value for e in MANAGER_WIRE.enforcement}
# A compositor cannot switch off an app's own spell checker, prediction or
# autocorrection: the XML's example of a client-enforced feature.
TEXT_ASSISTANCE = {MANAGER_WIRE.feature.spell_check.value, MANAGER_WIRE.feature.predictive_text.value,
                   MANAGER_WIRE.feature.autocorrect.value}
INACTIVE, ACTIVE = MANAGER_WIRE.lock_state.inactive.value, MANAGER_WIRE.lock_state.active.value
_FAILURE = SESSION_WIRE.failure_reason
OTHER, ALREADY_ACTIVE, NOT_ENTITLED = _FAILURE.other.value, _FAILURE.already_active.value, _FAILURE.not_entitled.value
UNSUPPORTED_CONFIGURATION, SURFACE_NOT_READY = _FAILURE.unsupported_configuration.value, _FAILURE.surface_not_ready.value
RESTRICTION_FAILED, CANCELLED = _FAILURE.restriction_failed.value, _FAILURE.cancelled.value
FAILED_INTERRUPTED, PRECONDITIONS_UNMET = _FAILURE.interrupted.value, _FAILURE.preconditions_unmet.value
_INTERRUPTION = SESSION_WIRE.interruption_reason
INTEGRITY, ADMINISTRATIVE = _INTERRUPTION.integrity.value, _INTERRUPTION.administrative.value
TIME_LIMIT = _INTERRUPTION.time_limit.value
MANAGER, CONFIGURATION, SESSION = MANAGER_WIRE.name, CONFIGURATION_WIRE.name, SESSION_WIRE.name
# Protocol error codes.
BAD_SURFACE = MANAGER_WIRE.error.bad_surface.value
ALREADY_SET, INVALID_FEATURE = CONFIGURATION_WIRE.error.already_set.value, CONFIGURATION_WIRE.error.invalid_feature.value
INVALID_TIME_LIMIT = CONFIGURATION_WIRE.error.invalid_time_limit.value
NOT_BEGUN, ALREADY_ENDED = SESSION_WIRE.error.not_begun.value, SESSION_WIRE.error.already_ended.value
NOT_A_FEATURE = max(FEATURES) + 1
ALL_FEATURES = sorted(FEATURES)


def lock_states(driver: Driver, manager: str = "m") -> list[int]:
    return [int(line.split()[-1]) for line in driver.matching(f"manager {manager} lock_state \\d+")]


def wait_lock_state(driver: Driver, state: int, manager: str = "m",
                    timeout: float = EVENT_TIMEOUT) -> None:
    """Waits until the last lock_state the manager heard is state."""
    def settled():
        driver.sync()
        return lock_states(driver, manager)[-1:] == [state]

    assert h.wait_until(settled, timeout, interval=0.1), \
        f"{driver.name}: lock state did not settle at {state}\n{driver.evidence()}"


def expect_lock_state(driver: Driver, state: int, manager: str = "m") -> None:
    driver.expect(f"manager {manager} lock_state {state}", what=f"lock_state {state} broadcast")
    driver.expect(f"manager {manager} done", what="done after lock_state")


def lock_only(driver, config: str = "c", time_limit: int | None = None) -> None:
    commands = [f"config {config}"] + [f"allow {config} {f}" for f in ALL_FEATURES]
    if time_limit is not None:
        commands.append(f"time_limit {config} {time_limit}")
    driver.send(" ; ".join(commands))
