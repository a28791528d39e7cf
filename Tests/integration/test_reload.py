"""`carrelctl reload` against the real binary: a valid policy file applies from
the next session (a longer maximum time limit lets a begin through that was
refused before); a bad file is refused with its problems (file, line, key) and
the running policy stays; a changed table that needs a restart is named."""

from __future__ import annotations

from assessment_protocol import UNSUPPORTED_CONFIGURATION
from carrel_clients import EXIT_REFUSED, guided_world



def begin_with_limit(exam, name: str, seconds: int):
    exam.send(f"config {name} ; time_limit {name} {seconds}")
    exam.begin(name, config=name)
    return exam.expect(rf"session {name} (began|failed (\d+) (.*))", what=f"the answer to a {seconds} s begin")


def test_reload_applies_a_valid_policy_from_the_next_session_and_keeps_it_for_a_bad_one(
        carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols, control_dir, carrelctl):
    world, ctl = guided_world(carrel, procs, logdir, logs, tmp_path, client_python, pywayland_protocols,
                              control_dir, carrelctl, "[assessment]\nmaximum_time_limit_minutes = 1\n")
    policy = tmp_path / "policy.toml"
    exam = world.client("exam")
    exam.map()
    exam.bind()
    m = begin_with_limit(exam, "a", 61)
    assert m.group(1) != "began" and int(m.group(2)) == UNSUPPORTED_CONFIGURATION, m.group(0)

    policy.write_text("[assessment]\nmaximum_time_limit_minutes = 2\n")
    answer = ctl.json("reload")
    assert answer["reload"]["applied"] == ["assessment"] and answer["reload"]["need_restart"] == [], answer
    assert answer["reload"]["file"] == str(policy), answer
    m = begin_with_limit(exam, "b", 61)
    assert m.group(1) == "began", f"the reloaded maximum did not apply: {m.group(0)}"
    exam.send("end b")
    exam.expect("session b ended")

    # A bad file: refused with file, line and key; the running policy (2 min) stays.
    policy.write_text("[assessment]\nmaximum_time_limit_minutes = \"two\"\n")
    refused = ctl.json("reload", expect=EXIT_REFUSED)
    assert refused["error"]["code"] == "bad_policy", refused
    message = refused["error"]["message"]
    assert f"{policy}:2" in message and "assessment.maximum_time_limit_minutes" in message, message
    assert "running policy stays" in message, message
    m = begin_with_limit(exam, "c", 121)
    assert int(m.group(2)) == UNSUPPORTED_CONFIGURATION and "maximum of 120 s" in m.group(3), m.group(0)
    m = begin_with_limit(exam, "d", 90)
    assert m.group(1) == "began", m.group(0)
    exam.send("end d")
    exam.expect("session d ended")

    # What needs a restart is named, and does not change the running Carrel.
    policy.write_text("[assessment]\nmaximum_time_limit_minutes = 2\n"
                      "[capture]\nenabled_outside_sessions = true\nroles = [\"app\"]\n")
    answer = ctl.json("reload")
    assert answer["reload"]["need_restart"] == ["capture"] and answer["reload"]["applied"] == [], answer
    assert "policy reloaded from" in world.carrel.stderr_path.read_text()
    world.alive()
