/* Codes for wire reasons (unknown values are "other", as the protocol says)
 * and names and sentences for people. */
#include "private.h"

CARREL_PUBLIC enum carrel_assessment_error carrel_assessment_error_from_failure_reason(uint32_t wire_value)
{
	/* failure_reason 0 (other) .. 11 (participant_unavailable) are codes 1 .. 12. */
	if (wire_value > CARREL_ASSESSMENT_SESSION_V1_FAILURE_REASON_PARTICIPANT_UNAVAILABLE)
		return CARREL_ASSESSMENT_ERROR_OTHER;
	return (enum carrel_assessment_error)(wire_value + 1);
}

CARREL_PUBLIC enum carrel_assessment_error carrel_assessment_error_from_interruption_reason(uint32_t wire_value)
{
	switch (wire_value) {
	case CARREL_ASSESSMENT_SESSION_V1_INTERRUPTION_REASON_INTEGRITY: return CARREL_ASSESSMENT_ERROR_INTEGRITY;
	case CARREL_ASSESSMENT_SESSION_V1_INTERRUPTION_REASON_ADMINISTRATIVE: return CARREL_ASSESSMENT_ERROR_ADMINISTRATIVE;
	case CARREL_ASSESSMENT_SESSION_V1_INTERRUPTION_REASON_TIME_LIMIT: return CARREL_ASSESSMENT_ERROR_TIME_LIMIT;
	case CARREL_ASSESSMENT_SESSION_V1_INTERRUPTION_REASON_SHUTDOWN: return CARREL_ASSESSMENT_ERROR_SHUTDOWN;
	default: return CARREL_ASSESSMENT_ERROR_OTHER;
	}
}

CARREL_PUBLIC enum carrel_assessment_error carrel_assessment_error_from_attestation_failure_reason(uint32_t wire_value)
{
	switch (wire_value) {
	case CARREL_ASSESSMENT_SESSION_V1_ATTESTATION_FAILURE_REASON_UNAVAILABLE:
		return CARREL_ASSESSMENT_ERROR_ATTESTATION_UNAVAILABLE;
	case CARREL_ASSESSMENT_SESSION_V1_ATTESTATION_FAILURE_REASON_INVALID_NONCE:
		return CARREL_ASSESSMENT_ERROR_INVALID_NONCE;
	case CARREL_ASSESSMENT_SESSION_V1_ATTESTATION_FAILURE_REASON_NOT_ACTIVE:
		return CARREL_ASSESSMENT_ERROR_NOT_ACTIVE;
	case CARREL_ASSESSMENT_SESSION_V1_ATTESTATION_FAILURE_REASON_TOO_LARGE:
		return CARREL_ASSESSMENT_ERROR_TOO_LARGE;
	default:
		return CARREL_ASSESSMENT_ERROR_OTHER;
	}
}

struct code_text {
	const char *name;
	const char *sentence;
};

static struct code_text text_for(enum carrel_assessment_error error)
{
	switch (error) {
	case CARREL_ASSESSMENT_OK: return (struct code_text){"ok", "no error"};
	case CARREL_ASSESSMENT_ERROR_OTHER: return (struct code_text){"other", "the compositor gave a reason this library does not know; its message says more"};
	case CARREL_ASSESSMENT_ERROR_ALREADY_ACTIVE: return (struct code_text){"already_active", "another session, of this or another app, is pending or active; try again when the lock state is inactive"};
	case CARREL_ASSESSMENT_ERROR_NOT_ENTITLED: return (struct code_text){"not_entitled", "the compositor's policy does not entitle this app to begin sessions; ask the administrator (assessment.roles, [app_lock])"};
	case CARREL_ASSESSMENT_ERROR_UNSUPPORTED_CONFIGURATION: return (struct code_text){"unsupported_configuration", "the configuration cannot be honoured (a denied feature nobody enforces, a participant the policy does not know, a time limit above the maximum, or network taken away by an older compositor); change it"};
	case CARREL_ASSESSMENT_ERROR_SURFACE_NOT_READY: return (struct code_text){"surface_not_ready", "the exam window was not mapped when the compositor handled begin; begin after its first frame is drawn"};
	case CARREL_ASSESSMENT_ERROR_TIMEOUT: return (struct code_text){"timeout", "the compositor could not show the session in time; everything is restored, try again"};
	case CARREL_ASSESSMENT_ERROR_RESTRICTION_FAILED: return (struct code_text){"restriction_failed", "a restriction could not be applied and everything was undone; the message names it, tell the administrator"};
	case CARREL_ASSESSMENT_ERROR_INTERNAL: return (struct code_text){"internal", "the compositor met an internal error; its log says more"};
	case CARREL_ASSESSMENT_ERROR_INTERRUPTED: return (struct code_text){"interrupted", "the session was interrupted and can only be ended"};
	case CARREL_ASSESSMENT_ERROR_CANCELLED: return (struct code_text){"cancelled", "the session was stopped before it began (by an administrator, a shutdown, or end before began)"};
	case CARREL_ASSESSMENT_ERROR_PRECONDITIONS_UNMET: return (struct code_text){"preconditions_unmet", "the machine does not meet the administrator's preconditions for sessions; the message lists them"};
	case CARREL_ASSESSMENT_ERROR_PARTICIPANT_UNAVAILABLE: return (struct code_text){"participant_unavailable", "a participant the configuration names could not be started; the message names it"};
	case CARREL_ASSESSMENT_ERROR_INTEGRITY: return (struct code_text){"integrity", "a restriction stopped holding: hide the exam content, then end the session"};
	case CARREL_ASSESSMENT_ERROR_ADMINISTRATIVE: return (struct code_text){"administrative", "an administrator interrupted the session: hide the exam content, then end the session"};
	case CARREL_ASSESSMENT_ERROR_TIME_LIMIT: return (struct code_text){"time_limit", "the session's time limit has passed: hide the exam content, then end the session"};
	case CARREL_ASSESSMENT_ERROR_SHUTDOWN: return (struct code_text){"shutdown", "the compositor is shutting down: save progress and end the session"};
	case CARREL_ASSESSMENT_ERROR_ATTESTATION_UNAVAILABLE: return (struct code_text){"unavailable", "this machine cannot sign statements (no attestation key in the policy, or a compositor older than protocol version 3)"};
	case CARREL_ASSESSMENT_ERROR_INVALID_NONCE: return (struct code_text){"invalid_nonce", "the nonce must be 16 to 256 bytes, as the exam server issued it"};
	case CARREL_ASSESSMENT_ERROR_TOO_LARGE: return (struct code_text){"too_large", "the statement would not fit in one event (very many participants)"};
	case CARREL_ASSESSMENT_ERROR_CONNECTION: return (struct code_text){"connection", "the Wayland connection to the compositor failed; the compositor has ended every session of it"};
	case CARREL_ASSESSMENT_ERROR_NOT_AVAILABLE: return (struct code_text){"not_available", "the compositor does not offer carrel_assessment_manager_v1 to this app; run the app inside Carrel as its exam app (carrel -- APP)"};
	case CARREL_ASSESSMENT_ERROR_NOT_ACTIVE: return (struct code_text){"not_active", "the call needs an active session (after BEGAN, before end) and this one is not; begin a new session if it is over"};
	case CARREL_ASSESSMENT_ERROR_MULTIPLE_PARTICIPANTS_NOT_SUPPORTED: return (struct code_text){"multiple_participants_not_supported", "the configuration names participants but the compositor speaks protocol version 1; begin without participants or use a newer Carrel"};
	case CARREL_ASSESSMENT_ERROR_ALREADY_BEGUN: return (struct code_text){"already_begun", "this session was already begun; a session begins once, make a new one"};
	case CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT: return (struct code_text){"invalid_argument", "an argument was NULL or out of range (feature outside the enum, participant id empty or over 255 bytes); check the call"};
	case CARREL_ASSESSMENT_ERROR_NO_MEMORY: return (struct code_text){"no_memory", "out of memory"};
	}
	return (struct code_text){"unknown", "a code this library does not define"};
}

CARREL_PUBLIC const char *carrel_assessment_error_name(enum carrel_assessment_error error)
{
	return text_for(error).name;
}

CARREL_PUBLIC const char *carrel_assessment_error_describe(enum carrel_assessment_error error)
{
	return text_for(error).sentence;
}

CARREL_PUBLIC const char *carrel_assessment_feature_name(enum carrel_assessment_feature feature)
{
	static const char *const names[CARREL_ASSESSMENT_FEATURE_COUNT] = {
		"spell_check", "predictive_text", "autocorrect", "input_method",
		"on_screen_keyboard", "keyboard_shortcuts", "screen_magnifier", "screen_reader",
	};
	return (unsigned)feature < CARREL_ASSESSMENT_FEATURE_COUNT ? names[feature] : NULL;
}
