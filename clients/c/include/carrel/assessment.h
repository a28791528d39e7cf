/*
 * libcarrel-assessment: assessment sessions for exam apps under Carrel, over
 * the Wayland protocol carrel-assessment-v1, on the app's own wl_display.
 *
 * The shape is Apple's AEAssessmentSession: make a configuration (most
 * restrictive by default), make a session with it for the exam window,
 * begin, and hear exactly one of BEGAN and FAILED; INTERRUPTED is not the
 * end (hide the exam, then end); END is answered by ENDED.
 *
 *     enum carrel_assessment_error error;
 *     struct carrel_assessment *lockdown = carrel_assessment_create(display, NULL, &error);
 *     if (!lockdown) { show_error(carrel_assessment_error_describe(error)); return; }
 *     struct carrel_assessment_configuration *configuration = carrel_assessment_configuration_create();
 *     carrel_assessment_configuration_allow_feature(configuration, CARREL_ASSESSMENT_FEATURE_SPELL_CHECK, true);
 *     carrel_assessment_configuration_set_time_limit(configuration, 90 * 60);
 *     struct carrel_assessment_session *session =
 *         carrel_assessment_session_create(lockdown, exam_wl_surface, configuration, on_event, app);
 *     carrel_assessment_configuration_destroy(configuration);   // the session keeps a copy
 *     carrel_assessment_session_begin(session);                  // show "locking…"
 *     // on_event is called from within the app's own dispatch of its queue.
 *
 * Rules the library keeps so that an app's mistake never becomes a protocol
 * error (which would close the app's connection, windows and all): every
 * call that can be misused returns an enum carrel_assessment_error, and a
 * refused call sends nothing. The library never aborts.
 *
 * Threading: not thread-safe. Call everything on the thread that dispatches
 * the queue given to carrel_assessment_create (the display's default queue
 * unless the app names one); events are delivered from within that dispatch.
 *
 * ABI: stable from soname libcarrel-assessment.so.1. Enum values are fixed
 * forever; new values and functions may be added. Structs the library hands
 * out (struct carrel_assessment_event) may grow at the end; the app never
 * allocates them.
 */
#ifndef CARREL_ASSESSMENT_H
#define CARREL_ASSESSMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct wl_display;
struct wl_event_queue;
struct wl_surface;

/** The highest carrel-assessment-v1 version this library speaks. */
#define CARREL_ASSESSMENT_PROTOCOL_VERSION 3

/**
 * Every outcome: results of calls, and the codes events carry.
 * 1-12: the protocol's failure_reason (failed, update_failed);
 * 20-23: interruption_reason (interrupted); 30-32: attestation_failure_reason;
 * 40-: arising in this library. A reason a newer compositor adds reaches
 * this library as OTHER, as the protocol prescribes.
 */
enum carrel_assessment_error {
	CARREL_ASSESSMENT_OK = 0,
	/** A reason not listed here, including reasons of later protocol versions. */
	CARREL_ASSESSMENT_ERROR_OTHER = 1,
	/** Another session, of this or another app, is pending or active. */
	CARREL_ASSESSMENT_ERROR_ALREADY_ACTIVE = 2,
	/** The compositor's policy does not entitle this app to begin sessions. */
	CARREL_ASSESSMENT_ERROR_NOT_ENTITLED = 3,
	/** A denied feature nobody can enforce, an unknown participant, or a
	 *  time limit above the policy's maximum. */
	CARREL_ASSESSMENT_ERROR_UNSUPPORTED_CONFIGURATION = 4,
	/** The exam window was not mapped when begin was handled: draw it first. */
	CARREL_ASSESSMENT_ERROR_SURFACE_NOT_READY = 5,
	/** No frame showing only the session's windows was presented in time. */
	CARREL_ASSESSMENT_ERROR_TIMEOUT = 6,
	/** A restriction could not be applied; everything applied was undone. */
	CARREL_ASSESSMENT_ERROR_RESTRICTION_FAILED = 7,
	CARREL_ASSESSMENT_ERROR_INTERNAL = 8,
	/** update_failed only: an interrupted session can only be ended. */
	CARREL_ASSESSMENT_ERROR_INTERRUPTED = 9,
	/** The compositor stopped beginning the session, or the app ended it before it began. */
	CARREL_ASSESSMENT_ERROR_CANCELLED = 10,
	/** The machine does not meet the administrator's preconditions (version 2). */
	CARREL_ASSESSMENT_ERROR_PRECONDITIONS_UNMET = 11,
	/** A participant the configuration names could not be started (version 2). */
	CARREL_ASSESSMENT_ERROR_PARTICIPANT_UNAVAILABLE = 12,

	/** A restriction stopped holding. */
	CARREL_ASSESSMENT_ERROR_INTEGRITY = 20,
	/** An administrator interrupted the session. */
	CARREL_ASSESSMENT_ERROR_ADMINISTRATIVE = 21,
	/** The session's time limit has passed. */
	CARREL_ASSESSMENT_ERROR_TIME_LIMIT = 22,
	/** The compositor is shutting down. */
	CARREL_ASSESSMENT_ERROR_SHUTDOWN = 23,

	/** This machine cannot sign statements (no key in the policy, or a
	 *  compositor older than version 3). */
	CARREL_ASSESSMENT_ERROR_ATTESTATION_UNAVAILABLE = 30,
	/** The nonce is shorter than 16 or longer than 256 bytes. */
	CARREL_ASSESSMENT_ERROR_INVALID_NONCE = 31,
	/** The statement would not fit in one event. */
	CARREL_ASSESSMENT_ERROR_TOO_LARGE = 32,

	/** The connection to the compositor failed; the compositor ended any session. */
	CARREL_ASSESSMENT_ERROR_CONNECTION = 40,
	/** The compositor does not offer carrel_assessment_manager_v1 to this app. */
	CARREL_ASSESSMENT_ERROR_NOT_AVAILABLE = 41,
	/** The call needs an active session (began, not ended), or the
	 *  session has already ended or failed. */
	CARREL_ASSESSMENT_ERROR_NOT_ACTIVE = 42,
	/** The configuration names participants, but the compositor speaks version 1. */
	CARREL_ASSESSMENT_ERROR_MULTIPLE_PARTICIPANTS_NOT_SUPPORTED = 43,
	/** begin was called on a session that was already begun: make a new session. */
	CARREL_ASSESSMENT_ERROR_ALREADY_BEGUN = 44,
	/** A NULL handle, a feature value outside the enum, an empty or too long
	 *  participant id. */
	CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT = 45,
	CARREL_ASSESSMENT_ERROR_NO_MEMORY = 46,
};

/** The protocol's feature enum (wire values). */
enum carrel_assessment_feature {
	CARREL_ASSESSMENT_FEATURE_SPELL_CHECK = 0,
	CARREL_ASSESSMENT_FEATURE_PREDICTIVE_TEXT = 1,
	CARREL_ASSESSMENT_FEATURE_AUTOCORRECT = 2,
	CARREL_ASSESSMENT_FEATURE_INPUT_METHOD = 3,
	CARREL_ASSESSMENT_FEATURE_ON_SCREEN_KEYBOARD = 4,
	CARREL_ASSESSMENT_FEATURE_KEYBOARD_SHORTCUTS = 5,
	CARREL_ASSESSMENT_FEATURE_SCREEN_MAGNIFIER = 6,
	CARREL_ASSESSMENT_FEATURE_SCREEN_READER = 7,
};
#define CARREL_ASSESSMENT_FEATURE_COUNT 8

/** Who keeps a denied feature off during a session. */
enum carrel_assessment_enforcement {
	/** The compositor did not announce the feature: leaving it denied fails the begin. */
	CARREL_ASSESSMENT_ENFORCEMENT_NOT_ANNOUNCED = -1,
	CARREL_ASSESSMENT_ENFORCEMENT_COMPOSITOR = 0,
	/** The app must keep the feature off in its own windows while it is denied. */
	CARREL_ASSESSMENT_ENFORCEMENT_CLIENT = 1,
};

enum carrel_assessment_lock_state {
	CARREL_ASSESSMENT_LOCK_INACTIVE = 0,
	/** Some app's session is pending or active: a begin now would fail. */
	CARREL_ASSESSMENT_LOCK_ACTIVE = 1,
};

enum carrel_assessment_session_state {
	/** Made, not begun. */
	CARREL_ASSESSMENT_SESSION_IDLE = 0,
	/** Begun; waiting for BEGAN or FAILED. */
	CARREL_ASSESSMENT_SESSION_BEGINNING = 1,
	/** Every restriction holds. */
	CARREL_ASSESSMENT_SESSION_ACTIVE = 2,
	/** Active, but a restriction stopped holding: hide the exam and end. */
	CARREL_ASSESSMENT_SESSION_INTERRUPTED = 3,
	/** End was sent; restrictions hold until ENDED. */
	CARREL_ASSESSMENT_SESSION_ENDING = 4,
	/** Terminal: everything is restored. */
	CARREL_ASSESSMENT_SESSION_ENDED = 5,
	/** Terminal: the session never began (or was withdrawn before it did). */
	CARREL_ASSESSMENT_SESSION_FAILED = 6,
};

enum carrel_assessment_event_kind {
	CARREL_ASSESSMENT_EVENT_BEGAN = 1,
	/** Terminal. `error` says why; nothing stays restricted. */
	CARREL_ASSESSMENT_EVENT_FAILED = 2,
	/** Not terminal: hide the exam content at once, save, then end. */
	CARREL_ASSESSMENT_EVENT_INTERRUPTED = 3,
	/** Terminal: everything is restored. Also comes unasked when an
	 *  administrator ends the session by force. */
	CARREL_ASSESSMENT_EVENT_ENDED = 4,
	/** The oldest unanswered update holds in full. */
	CARREL_ASSESSMENT_EVENT_UPDATED = 5,
	/** The oldest unanswered update was not applied; the previous configuration holds. */
	CARREL_ASSESSMENT_EVENT_UPDATE_FAILED = 6,
	/** The oldest unanswered attestation request: `statement` and `signature`. */
	CARREL_ASSESSMENT_EVENT_ATTESTATION = 7,
	/** The oldest unanswered attestation request got no statement; `error` says why. */
	CARREL_ASSESSMENT_EVENT_ATTESTATION_FAILED = 8,
};

/**
 * One event, valid only during the callback (copy what you keep).
 * May grow at the end in later releases.
 */
struct carrel_assessment_event {
	enum carrel_assessment_event_kind kind;
	/** OK for BEGAN, ENDED, UPDATED, ATTESTATION; the reason otherwise. */
	enum carrel_assessment_error error;
	/** For logs and people, never for decisions; "" when there is none. Never NULL. */
	const char *message;
	/** ATTESTATION: the statement's canonical JSON (UTF-8, NUL-terminated), as signed. */
	const char *statement;
	size_t statement_length;
	/** ATTESTATION: its Ed25519 signature (64 bytes). */
	const uint8_t *signature;
	size_t signature_length;
};

struct carrel_assessment;
struct carrel_assessment_configuration;
struct carrel_assessment_session;

typedef void (*carrel_assessment_event_fn)(void *data, struct carrel_assessment_session *session,
                                           const struct carrel_assessment_event *event);
typedef void (*carrel_assessment_lock_state_fn)(void *data, struct carrel_assessment *lockdown,
                                                enum carrel_assessment_lock_state state);

/* ---- The lockdown: carrel_assessment_manager_v1 on the app's connection ---- */

/**
 * Binds the assessment global on `display` and waits (on a private queue,
 * so none of the app's own handlers run) for the compositor's features and
 * lock state. Events of the lockdown and its sessions then go to `queue`,
 * or the display's default queue when `queue` is NULL.
 *
 * Returns NULL and sets *error (when error is not NULL) to NOT_AVAILABLE
 * when the compositor does not offer the global to this app (not Carrel, or
 * not started as its exam app), CONNECTION when the connection fails,
 * INVALID_ARGUMENT when display is NULL.
 */
struct carrel_assessment *carrel_assessment_create(struct wl_display *display, struct wl_event_queue *queue,
                                                   enum carrel_assessment_error *error);

/**
 * Destroys the manager proxy. Sessions made through it keep working until
 * they are destroyed themselves (as the protocol has it). NULL is ignored.
 */
void carrel_assessment_destroy(struct carrel_assessment *lockdown);

/** The protocol version bound: CARREL_ASSESSMENT_PROTOCOL_VERSION or what the compositor offers, if less. */
uint32_t carrel_assessment_get_version(const struct carrel_assessment *lockdown);

/** Who enforces `feature` while it is denied, as the compositor announced. */
enum carrel_assessment_enforcement carrel_assessment_get_enforcement(const struct carrel_assessment *lockdown,
                                                                     enum carrel_assessment_feature feature);

/** Whether some session (of any app) is pending or active, as last reported. A hint, not a promise. */
enum carrel_assessment_lock_state carrel_assessment_get_lock_state(const struct carrel_assessment *lockdown);

/** Calls `callback` (from within dispatch) when the lock state changes; NULL stops it. */
void carrel_assessment_set_lock_state_callback(struct carrel_assessment *lockdown,
                                               carrel_assessment_lock_state_fn callback, void *data);

/** Whether sessions may name participants (version 2 or later): Apple's supportsMultipleParticipants. */
bool carrel_assessment_supports_multiple_participants(const struct carrel_assessment *lockdown);

/**
 * Call when dispatching the display fails: the compositor has ended every
 * session of the connection. Sessions still beginning hear FAILED
 * (CONNECTION); active ones INTERRUPTED (CONNECTION), then ENDED.
 */
void carrel_assessment_connection_failed(struct carrel_assessment *lockdown);

/* ---- Configurations: plain values, copied when used ---- */

/** A new, most restrictive configuration: no feature, no participant, the policy's time limit. NULL without memory. */
struct carrel_assessment_configuration *carrel_assessment_configuration_create(void);
struct carrel_assessment_configuration *carrel_assessment_configuration_copy(
	const struct carrel_assessment_configuration *configuration);
void carrel_assessment_configuration_destroy(struct carrel_assessment_configuration *configuration);

/** Allows (or denies again) one feature. INVALID_ARGUMENT for a value outside the enum. */
enum carrel_assessment_error carrel_assessment_configuration_allow_feature(
	struct carrel_assessment_configuration *configuration, enum carrel_assessment_feature feature, bool allowed);
bool carrel_assessment_configuration_allows_feature(const struct carrel_assessment_configuration *configuration,
                                                    enum carrel_assessment_feature feature);

/**
 * Names a participant by the id the administrator's policy gives it (never
 * an app_id), with its network (true: as far as the policy allows; false:
 * none, which needs protocol version 3). Naming an id again changes only
 * its network. INVALID_ARGUMENT for an empty id or one over 255 bytes.
 */
enum carrel_assessment_error carrel_assessment_configuration_add_participant(
	struct carrel_assessment_configuration *configuration, const char *id, bool allows_network_access);
/** Stops naming a participant; INVALID_ARGUMENT if it is not named. */
enum carrel_assessment_error carrel_assessment_configuration_remove_participant(
	struct carrel_assessment_configuration *configuration, const char *id);
size_t carrel_assessment_configuration_get_participant_count(const struct carrel_assessment_configuration *configuration);
/** The index-th participant's id (in the order named), or NULL past the end. */
const char *carrel_assessment_configuration_get_participant(const struct carrel_assessment_configuration *configuration,
                                                            size_t index);

/** Seconds the session may stay active from BEGAN; 0 leaves it to the policy (the default). */
enum carrel_assessment_error carrel_assessment_configuration_set_time_limit(
	struct carrel_assessment_configuration *configuration, uint32_t seconds);
uint32_t carrel_assessment_configuration_get_time_limit(const struct carrel_assessment_configuration *configuration);

/** Whether the exam app itself keeps the network during the session (default true; false needs version 3). */
enum carrel_assessment_error carrel_assessment_configuration_set_owner_network(
	struct carrel_assessment_configuration *configuration, bool allows_network_access);

/* ---- Sessions ---- */

/**
 * A new session, not begun, for the exam window `surface` (an xdg_toplevel
 * of this connection, mapped before begin) with a copy of `configuration`
 * (NULL: most restrictive). `callback` hears every event of the session.
 * NULL when an argument is NULL (but configuration) or without memory.
 */
struct carrel_assessment_session *carrel_assessment_session_create(struct carrel_assessment *lockdown,
                                                                   struct wl_surface *surface,
                                                                   const struct carrel_assessment_configuration *configuration,
                                                                   carrel_assessment_event_fn callback, void *data);

/**
 * Asks the compositor to begin the session: exactly one of BEGAN and FAILED
 * follows. Refused (nothing sent) with ALREADY_BEGUN when called before on
 * this session; with MULTIPLE_PARTICIPANTS_NOT_SUPPORTED (participants, version 1) or
 * UNSUPPORTED_CONFIGURATION (network taken away, version < 3), after which
 * the session is FAILED without an event.
 */
enum carrel_assessment_error carrel_assessment_session_begin(struct carrel_assessment_session *session);

/**
 * Ends an active (or interrupted) session: ENDED follows once everything is
 * restored. Before BEGAN it withdraws the session instead: FAILED
 * (CANCELLED) is delivered before this returns. NOT_ACTIVE when the session
 * was never begun, is already ending, or is over (including after an ENDED
 * it did not ask for).
 */
enum carrel_assessment_error carrel_assessment_session_end(struct carrel_assessment_session *session);

/**
 * Asks to replace the configuration of an active session with a copy of
 * `configuration`: UPDATED or UPDATE_FAILED follows, in the order of the
 * calls. NOT_ACTIVE unless the session began and was not ended; version
 * refusals as for begin.
 */
enum carrel_assessment_error carrel_assessment_session_update(struct carrel_assessment_session *session,
                                                              const struct carrel_assessment_configuration *configuration);

/**
 * Asks for a statement about the session signed with the machine's key,
 * carrying the exam server's nonce (16 to 256 bytes): ATTESTATION or
 * ATTESTATION_FAILED follows, in the order of the calls. NOT_ACTIVE unless
 * the session is active or interrupted; ATTESTATION_UNAVAILABLE with a
 * compositor older than version 3; INVALID_NONCE over 256 bytes.
 */
enum carrel_assessment_error carrel_assessment_session_request_attestation(struct carrel_assessment_session *session,
                                                                           const uint8_t *nonce, size_t nonce_length);

/**
 * The closing statement: the request and end go out back to back, so the
 * compositor signs as it ends the session; ATTESTATION (or
 * ATTESTATION_FAILED) comes before ENDED.
 */
enum carrel_assessment_error carrel_assessment_session_end_with_attestation(struct carrel_assessment_session *session,
                                                                            const uint8_t *nonce, size_t nonce_length);

enum carrel_assessment_session_state carrel_assessment_session_get_state(const struct carrel_assessment_session *session);

/** The configuration in force: the one given at creation, then the last one UPDATED to. Owned by the session. */
const struct carrel_assessment_configuration *carrel_assessment_session_get_configuration(
	const struct carrel_assessment_session *session);

/**
 * Destroys the session: one pending or active ends at once, without any
 * further event. May be called from within the session's own callback.
 * NULL is ignored.
 */
void carrel_assessment_session_destroy(struct carrel_assessment_session *session);

/* ---- Names ---- */

/** The protocol's name for a code ("already_active", "time_limit", "not_active", ...); "unknown" outside the enum. */
const char *carrel_assessment_error_name(enum carrel_assessment_error error);
/** A sentence for people: what the code means and what to do. */
const char *carrel_assessment_error_describe(enum carrel_assessment_error error);
/** The protocol's name of a feature ("spell_check", ...), or NULL outside the enum. */
const char *carrel_assessment_feature_name(enum carrel_assessment_feature feature);

/** Codes for wire values, as the protocol says: unknown values are OTHER. */
enum carrel_assessment_error carrel_assessment_error_from_failure_reason(uint32_t wire_value);
enum carrel_assessment_error carrel_assessment_error_from_interruption_reason(uint32_t wire_value);
enum carrel_assessment_error carrel_assessment_error_from_attestation_failure_reason(uint32_t wire_value);

#ifdef __cplusplus
}
#endif

#endif
