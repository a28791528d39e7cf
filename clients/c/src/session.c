/* One assessment session: the client-side rules (AssessmentKit's, so that an
 * app's mistake is an error code, never a protocol error) and the events the
 * app hears, each exactly when the protocol allows it. */
#include <stdlib.h>
#include <string.h>

#include "private.h"

static void deliver(struct carrel_assessment_session *session, struct carrel_assessment_event event)
{
	/* A session the app destroyed hears nothing more, even later in the
	 * same wire event. */
	if (session->destroyed || !session->callback)
		return;
	if (!event.message)
		event.message = "";
	session->callback(session->data, session, &event);
}

static void deliver_simple(struct carrel_assessment_session *session, enum carrel_assessment_event_kind kind,
                           enum carrel_assessment_error error, const char *message)
{
	deliver(session, (struct carrel_assessment_event){.kind = kind, .error = error, .message = message});
}

static void drop_pending_updates(struct carrel_assessment_session *session)
{
	for (size_t i = 0; i < session->pending_update_count; i++)
		carrel_assessment_configuration_destroy(session->pending_updates[i]);
	session->pending_update_count = 0;
}

/* The oldest unanswered update, which the caller now owns; NULL if none. */
static struct carrel_assessment_configuration *take_oldest_update(struct carrel_assessment_session *session)
{
	if (session->pending_update_count == 0)
		return NULL;
	struct carrel_assessment_configuration *oldest = session->pending_updates[0];
	memmove(session->pending_updates, session->pending_updates + 1,
	        --session->pending_update_count * sizeof *session->pending_updates);
	return oldest;
}

/* Before a terminal event: requests still waiting will not be answered, and
 * the terminal event must be the last the app hears. */
static void fail_pending_attestations(struct carrel_assessment_session *session)
{
	while (session->pending_attestations > 0) {
		session->pending_attestations--;
		deliver_simple(session, CARREL_ASSESSMENT_EVENT_ATTESTATION_FAILED, CARREL_ASSESSMENT_ERROR_NOT_ACTIVE,
		               "the session ended before the statement arrived");
	}
}

static bool is_active(const struct carrel_assessment_session *session)
{
	return session->state == CARREL_ASSESSMENT_SESSION_ACTIVE ||
	       session->state == CARREL_ASSESSMENT_SESSION_INTERRUPTED;
}

static bool holds_restrictions(const struct carrel_assessment_session *session)
{
	return is_active(session) || session->state == CARREL_ASSESSMENT_SESSION_ENDING;
}

/* ---- Wire events. Events that do not fit the state (which a correct
 * compositor never sends) are dropped. ---- */

static void handle_began(void *data, struct carrel_assessment_session_v1 *proxy)
{
	(void)proxy;
	struct carrel_assessment_session *session = data;
	if (session->state != CARREL_ASSESSMENT_SESSION_BEGINNING)
		return;
	struct carrel_assessment *lockdown = session->lockdown;
	lockdown_enter(lockdown);
	session->state = CARREL_ASSESSMENT_SESSION_ACTIVE;
	deliver_simple(session, CARREL_ASSESSMENT_EVENT_BEGAN, CARREL_ASSESSMENT_OK, NULL);
	lockdown_leave(lockdown);
}

static void handle_failed(void *data, struct carrel_assessment_session_v1 *proxy, uint32_t reason,
                          const char *message)
{
	(void)proxy;
	struct carrel_assessment_session *session = data;
	if (session->state != CARREL_ASSESSMENT_SESSION_BEGINNING)
		return;
	struct carrel_assessment *lockdown = session->lockdown;
	lockdown_enter(lockdown);
	session->state = CARREL_ASSESSMENT_SESSION_FAILED;
	fail_pending_attestations(session);
	deliver_simple(session, CARREL_ASSESSMENT_EVENT_FAILED, carrel_assessment_error_from_failure_reason(reason),
	               message);
	lockdown_leave(lockdown);
}

static void handle_interrupted(void *data, struct carrel_assessment_session_v1 *proxy, uint32_t reason,
                               const char *message)
{
	(void)proxy;
	struct carrel_assessment_session *session = data;
	if (!holds_restrictions(session))
		return;
	struct carrel_assessment *lockdown = session->lockdown;
	lockdown_enter(lockdown);
	/* Sent before the compositor saw an end: the app still hears it, and
	 * stays ending. */
	if (session->state != CARREL_ASSESSMENT_SESSION_ENDING)
		session->state = CARREL_ASSESSMENT_SESSION_INTERRUPTED;
	deliver_simple(session, CARREL_ASSESSMENT_EVENT_INTERRUPTED,
	               carrel_assessment_error_from_interruption_reason(reason), message);
	lockdown_leave(lockdown);
}

static void handle_ended(void *data, struct carrel_assessment_session_v1 *proxy)
{
	(void)proxy;
	struct carrel_assessment_session *session = data;
	/* Also unasked, from active or interrupted: an administrator ended the
	 * session by force, and no end may follow (the state says so). */
	if (!holds_restrictions(session))
		return;
	struct carrel_assessment *lockdown = session->lockdown;
	lockdown_enter(lockdown);
	session->state = CARREL_ASSESSMENT_SESSION_ENDED;
	drop_pending_updates(session);
	fail_pending_attestations(session);
	deliver_simple(session, CARREL_ASSESSMENT_EVENT_ENDED, CARREL_ASSESSMENT_OK, NULL);
	lockdown_leave(lockdown);
}

static void handle_updated(void *data, struct carrel_assessment_session_v1 *proxy)
{
	(void)proxy;
	struct carrel_assessment_session *session = data;
	if (!holds_restrictions(session) || session->pending_update_count == 0)
		return;
	struct carrel_assessment *lockdown = session->lockdown;
	lockdown_enter(lockdown);
	carrel_assessment_configuration_destroy(session->configuration);
	session->configuration = take_oldest_update(session);
	deliver_simple(session, CARREL_ASSESSMENT_EVENT_UPDATED, CARREL_ASSESSMENT_OK, NULL);
	lockdown_leave(lockdown);
}

static void handle_update_failed(void *data, struct carrel_assessment_session_v1 *proxy, uint32_t reason,
                                 const char *message)
{
	(void)proxy;
	struct carrel_assessment_session *session = data;
	if (!holds_restrictions(session) || session->pending_update_count == 0)
		return;
	struct carrel_assessment *lockdown = session->lockdown;
	lockdown_enter(lockdown);
	carrel_assessment_configuration_destroy(take_oldest_update(session));
	deliver_simple(session, CARREL_ASSESSMENT_EVENT_UPDATE_FAILED,
	               carrel_assessment_error_from_failure_reason(reason), message);
	lockdown_leave(lockdown);
}

static void handle_attestation(void *data, struct carrel_assessment_session_v1 *proxy, const char *statement,
                               struct wl_array *signature)
{
	(void)proxy;
	struct carrel_assessment_session *session = data;
	if (session->pending_attestations == 0)
		return;
	struct carrel_assessment *lockdown = session->lockdown;
	lockdown_enter(lockdown);
	session->pending_attestations--;
	deliver(session, (struct carrel_assessment_event){
				 .kind = CARREL_ASSESSMENT_EVENT_ATTESTATION,
				 .error = CARREL_ASSESSMENT_OK,
				 .statement = statement ? statement : "",
				 .statement_length = statement ? strlen(statement) : 0,
				 .signature = signature ? signature->data : NULL,
				 .signature_length = signature ? signature->size : 0,
			 });
	lockdown_leave(lockdown);
}

static void handle_attestation_failed(void *data, struct carrel_assessment_session_v1 *proxy, uint32_t reason,
                                      const char *message)
{
	(void)proxy;
	struct carrel_assessment_session *session = data;
	if (session->pending_attestations == 0)
		return;
	struct carrel_assessment *lockdown = session->lockdown;
	lockdown_enter(lockdown);
	session->pending_attestations--;
	deliver_simple(session, CARREL_ASSESSMENT_EVENT_ATTESTATION_FAILED,
	               carrel_assessment_error_from_attestation_failure_reason(reason), message);
	lockdown_leave(lockdown);
}

static const struct carrel_assessment_session_v1_listener session_listener = {
	.began = handle_began,
	.failed = handle_failed,
	.interrupted = handle_interrupted,
	.ended = handle_ended,
	.updated = handle_updated,
	.update_failed = handle_update_failed,
	.attestation = handle_attestation,
	.attestation_failed = handle_attestation_failed,
};

void session_connection_lost(struct carrel_assessment_session *session, const char *message)
{
	switch (session->state) {
	case CARREL_ASSESSMENT_SESSION_BEGINNING:
		session->state = CARREL_ASSESSMENT_SESSION_FAILED;
		fail_pending_attestations(session);
		deliver_simple(session, CARREL_ASSESSMENT_EVENT_FAILED, CARREL_ASSESSMENT_ERROR_CONNECTION, message);
		break;
	case CARREL_ASSESSMENT_SESSION_ACTIVE:
	case CARREL_ASSESSMENT_SESSION_INTERRUPTED:
		/* The compositor ended the session when the connection closed. The
		 * app first hears the session is no longer whole, so it hides its
		 * content, then that it is over. */
		session->state = CARREL_ASSESSMENT_SESSION_INTERRUPTED;
		deliver_simple(session, CARREL_ASSESSMENT_EVENT_INTERRUPTED, CARREL_ASSESSMENT_ERROR_CONNECTION, message);
		/* fall through */
	case CARREL_ASSESSMENT_SESSION_ENDING:
		session->state = CARREL_ASSESSMENT_SESSION_ENDED;
		drop_pending_updates(session);
		fail_pending_attestations(session);
		deliver_simple(session, CARREL_ASSESSMENT_EVENT_ENDED, CARREL_ASSESSMENT_OK, NULL);
		break;
	default:
		break;
	}
}

/* ---- Requests ---- */

CARREL_PUBLIC struct carrel_assessment_session *carrel_assessment_session_create(
	struct carrel_assessment *lockdown, struct wl_surface *surface,
	const struct carrel_assessment_configuration *configuration, carrel_assessment_event_fn callback, void *data)
{
	if (!lockdown || !lockdown->manager || !surface || !callback)
		return NULL;
	struct carrel_assessment_session *session = calloc(1, sizeof *session);
	if (!session)
		return NULL;
	session->configuration = configuration_copy_or_default(configuration);
	if (!session->configuration) {
		free(session);
		return NULL;
	}
	session->lockdown = lockdown;
	session->surface = surface;
	session->callback = callback;
	session->data = data;
	session->state = CARREL_ASSESSMENT_SESSION_IDLE;
	lockdown->references++;
	wl_list_insert(lockdown->sessions.prev, &session->link);
	return session;
}

/* What the bound version cannot carry: participants before version 2 (it
 * could not say why one failed to start), network taken away before version
 * 3 (no request for it: fail rather than lock with more network than asked). */
static enum carrel_assessment_error version_refusal(const struct carrel_assessment_session *session,
                                                    const struct carrel_assessment_configuration *configuration)
{
	uint32_t version = session->lockdown->version;
	if (configuration->participant_count > 0 && version < 2)
		return CARREL_ASSESSMENT_ERROR_MULTIPLE_PARTICIPANTS_NOT_SUPPORTED;
	if (configuration_denies_network(configuration) && version < 3)
		return CARREL_ASSESSMENT_ERROR_UNSUPPORTED_CONFIGURATION;
	return CARREL_ASSESSMENT_OK;
}

CARREL_PUBLIC enum carrel_assessment_error carrel_assessment_session_begin(struct carrel_assessment_session *session)
{
	if (!session || session->destroyed)
		return CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT;
	if (session->state != CARREL_ASSESSMENT_SESSION_IDLE)
		return CARREL_ASSESSMENT_ERROR_ALREADY_BEGUN;
	struct carrel_assessment *lockdown = session->lockdown;
	if (!lockdown->manager)
		return CARREL_ASSESSMENT_ERROR_NOT_AVAILABLE;
	enum carrel_assessment_error refusal = version_refusal(session, session->configuration);
	if (refusal != CARREL_ASSESSMENT_OK) {
		/* One begin per session, as AssessmentKit: this one is spent. */
		session->state = CARREL_ASSESSMENT_SESSION_FAILED;
		return refusal;
	}
	struct carrel_assessment_configuration_v1 *object = configuration_send(lockdown, session->configuration);
	if (!object)
		return CARREL_ASSESSMENT_ERROR_NO_MEMORY;
	session->proxy = carrel_assessment_manager_v1_begin(lockdown->manager, session->surface, object);
	/* The compositor copies the configuration while it handles begin. */
	carrel_assessment_configuration_v1_destroy(object);
	if (!session->proxy) {
		lockdown_flush(lockdown);
		return CARREL_ASSESSMENT_ERROR_NO_MEMORY;
	}
	carrel_assessment_session_v1_add_listener(session->proxy, &session_listener, session);
	session->state = CARREL_ASSESSMENT_SESSION_BEGINNING;
	lockdown_flush(lockdown);
	return CARREL_ASSESSMENT_OK;
}

CARREL_PUBLIC enum carrel_assessment_error carrel_assessment_session_end(struct carrel_assessment_session *session)
{
	if (!session || session->destroyed)
		return CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT;
	struct carrel_assessment *lockdown = session->lockdown;
	switch (session->state) {
	case CARREL_ASSESSMENT_SESSION_ACTIVE:
	case CARREL_ASSESSMENT_SESSION_INTERRUPTED:
		session->state = CARREL_ASSESSMENT_SESSION_ENDING;
		carrel_assessment_session_v1_end(session->proxy);
		lockdown_flush(lockdown);
		return CARREL_ASSESSMENT_OK;
	case CARREL_ASSESSMENT_SESSION_BEGINNING:
		/* The protocol forbids end before began; destroying the object
		 * withdraws a pending session at once, without an event. */
		carrel_assessment_session_v1_destroy(session->proxy);
		session->proxy = NULL;
		lockdown_flush(lockdown);
		lockdown_enter(lockdown);
		session->state = CARREL_ASSESSMENT_SESSION_FAILED;
		fail_pending_attestations(session);
		deliver_simple(session, CARREL_ASSESSMENT_EVENT_FAILED, CARREL_ASSESSMENT_ERROR_CANCELLED,
		               "end was called before the session began, so the session was withdrawn");
		lockdown_leave(lockdown);
		return CARREL_ASSESSMENT_OK;
	default:
		return CARREL_ASSESSMENT_ERROR_NOT_ACTIVE;
	}
}

CARREL_PUBLIC enum carrel_assessment_error carrel_assessment_session_update(
	struct carrel_assessment_session *session, const struct carrel_assessment_configuration *configuration)
{
	if (!session || session->destroyed)
		return CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT;
	if (!is_active(session))
		return CARREL_ASSESSMENT_ERROR_NOT_ACTIVE;
	struct carrel_assessment *lockdown = session->lockdown;
	if (!lockdown->manager)
		return CARREL_ASSESSMENT_ERROR_NOT_AVAILABLE;
	struct carrel_assessment_configuration *copy = configuration_copy_or_default(configuration);
	if (!copy)
		return CARREL_ASSESSMENT_ERROR_NO_MEMORY;
	enum carrel_assessment_error refusal = version_refusal(session, copy);
	if (refusal != CARREL_ASSESSMENT_OK) {
		carrel_assessment_configuration_destroy(copy);
		return refusal;
	}
	struct carrel_assessment_configuration **grown =
		realloc(session->pending_updates, (session->pending_update_count + 1) * sizeof *grown);
	if (!grown) {
		carrel_assessment_configuration_destroy(copy);
		return CARREL_ASSESSMENT_ERROR_NO_MEMORY;
	}
	session->pending_updates = grown;
	struct carrel_assessment_configuration_v1 *object = configuration_send(lockdown, copy);
	if (!object) {
		carrel_assessment_configuration_destroy(copy);
		return CARREL_ASSESSMENT_ERROR_NO_MEMORY;
	}
	/* An interrupted session is still sent the update: the compositor
	 * refuses it (interrupted) in order with any earlier ones. */
	grown[session->pending_update_count++] = copy;
	carrel_assessment_session_v1_update(session->proxy, object);
	carrel_assessment_configuration_v1_destroy(object);
	lockdown_flush(lockdown);
	return CARREL_ASSESSMENT_OK;
}

CARREL_PUBLIC enum carrel_assessment_error carrel_assessment_session_request_attestation(
	struct carrel_assessment_session *session, const uint8_t *nonce, size_t nonce_length)
{
	if (!session || session->destroyed || (!nonce && nonce_length > 0))
		return CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT;
	if (!is_active(session))
		return CARREL_ASSESSMENT_ERROR_NOT_ACTIVE;
	if (session->lockdown->version < 3)
		return CARREL_ASSESSMENT_ERROR_ATTESTATION_UNAVAILABLE;
	if (nonce_length > NONCE_MAX)
		return CARREL_ASSESSMENT_ERROR_INVALID_NONCE;
	struct wl_array array = {.size = nonce_length, .alloc = nonce_length, .data = (void *)nonce};
	carrel_assessment_session_v1_request_attestation(session->proxy, &array);
	session->pending_attestations++;
	lockdown_flush(session->lockdown);
	return CARREL_ASSESSMENT_OK;
}

CARREL_PUBLIC enum carrel_assessment_error carrel_assessment_session_end_with_attestation(
	struct carrel_assessment_session *session, const uint8_t *nonce, size_t nonce_length)
{
	enum carrel_assessment_error requested = carrel_assessment_session_request_attestation(session, nonce, nonce_length);
	if (requested == CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT && (!session || session->destroyed))
		return requested;
	/* The session ends whatever became of the request; the request's
	 * refusal, if any, is what the caller hears. */
	enum carrel_assessment_error ended = carrel_assessment_session_end(session);
	return requested != CARREL_ASSESSMENT_OK ? requested : ended;
}

CARREL_PUBLIC enum carrel_assessment_session_state carrel_assessment_session_get_state(
	const struct carrel_assessment_session *session)
{
	return session ? session->state : CARREL_ASSESSMENT_SESSION_FAILED;
}

CARREL_PUBLIC const struct carrel_assessment_configuration *carrel_assessment_session_get_configuration(
	const struct carrel_assessment_session *session)
{
	return session ? session->configuration : NULL;
}

CARREL_PUBLIC void carrel_assessment_session_destroy(struct carrel_assessment_session *session)
{
	if (!session || session->destroyed)
		return;
	struct carrel_assessment *lockdown = session->lockdown;
	/* destroy ends a pending or active session at once, without events. */
	if (session->proxy) {
		carrel_assessment_session_v1_destroy(session->proxy);
		session->proxy = NULL;
		lockdown_flush(lockdown);
	}
	session->destroyed = true;
	/* Freed now, or when the callback the app is inside returns. */
	lockdown_enter(lockdown);
	lockdown_leave(lockdown);
}

void session_free(struct carrel_assessment_session *session)
{
	drop_pending_updates(session);
	free(session->pending_updates);
	carrel_assessment_configuration_destroy(session->configuration);
	free(session);
}
