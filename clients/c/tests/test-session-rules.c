/* libcarrel-assessment against a fake compositor (fake-compositor.c): the
 * client-side rules (AssessmentKit's), every event order the XML allows,
 * reasons newer than the library, an older compositor, a connection that
 * dies, an app that destroys things from inside its callbacks, and a long
 * begin/update/end loop for the AddressSanitizer build. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wayland-client.h>

#include "carrel/assessment.h"
#include "fake-compositor.h"

static int failures;

#define EXPECT(condition)                                                                  \
	do {                                                                               \
		if (!(condition)) {                                                        \
			fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #condition); \
			failures++;                                                        \
		}                                                                          \
	} while (0)

#define EXPECT_CODE(call, code)                                                                          \
	do {                                                                                             \
		enum carrel_assessment_error got_ = (call);                                              \
		if (got_ != (code)) {                                                                    \
			fprintf(stderr, "%s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #call, \
			        carrel_assessment_error_name(got_), carrel_assessment_error_name(code)); \
			failures++;                                                                      \
		}                                                                                        \
	} while (0)

#define EXPECT_LOG(recorder, expected)                                                                \
	do {                                                                                          \
		if (strcmp((recorder)->log, (expected)) != 0) {                                       \
			fprintf(stderr, "%s:%d: events were \"%s\", expected \"%s\"\n", __FILE__, __LINE__, \
			        (recorder)->log, (expected));                                         \
			failures++;                                                                   \
		}                                                                                     \
	} while (0)

/* The events a session delivered, as "began failed:already_active ..." */
struct recorder {
	char log[2048];
	char last_message[256];
	char statement[256];
	size_t signature_length;
	enum carrel_assessment_session_state state_seen; /* the state during the last callback */
	bool destroy_on_terminal;
};

static const char *kind_name(enum carrel_assessment_event_kind kind)
{
	switch (kind) {
	case CARREL_ASSESSMENT_EVENT_BEGAN: return "began";
	case CARREL_ASSESSMENT_EVENT_FAILED: return "failed";
	case CARREL_ASSESSMENT_EVENT_INTERRUPTED: return "interrupted";
	case CARREL_ASSESSMENT_EVENT_ENDED: return "ended";
	case CARREL_ASSESSMENT_EVENT_UPDATED: return "updated";
	case CARREL_ASSESSMENT_EVENT_UPDATE_FAILED: return "update_failed";
	case CARREL_ASSESSMENT_EVENT_ATTESTATION: return "attestation";
	case CARREL_ASSESSMENT_EVENT_ATTESTATION_FAILED: return "attestation_failed";
	}
	return "?";
}

static void record(void *data, struct carrel_assessment_session *session, const struct carrel_assessment_event *event)
{
	struct recorder *r = data;
	char entry[128];
	if (event->error == CARREL_ASSESSMENT_OK)
		snprintf(entry, sizeof entry, "%s%s", *r->log ? " " : "", kind_name(event->kind));
	else
		snprintf(entry, sizeof entry, "%s%s:%s", *r->log ? " " : "", kind_name(event->kind),
		         carrel_assessment_error_name(event->error));
	strncat(r->log, entry, sizeof r->log - strlen(r->log) - 1);
	snprintf(r->last_message, sizeof r->last_message, "%s", event->message);
	if (event->kind == CARREL_ASSESSMENT_EVENT_ATTESTATION) {
		snprintf(r->statement, sizeof r->statement, "%.*s", (int)event->statement_length, event->statement);
		r->signature_length = event->signature_length;
	}
	r->state_seen = carrel_assessment_session_get_state(session);
	bool terminal = event->kind == CARREL_ASSESSMENT_EVENT_FAILED || event->kind == CARREL_ASSESSMENT_EVENT_ENDED;
	if (terminal && r->destroy_on_terminal)
		carrel_assessment_session_destroy(session);
}

struct world {
	struct fake *fake;
	struct carrel_assessment *lockdown;
};

static struct fake_options current(void)
{
	return (struct fake_options){.offer_manager = true, .version = 3, .feature_count = 8,
	                             .client_enforced = 0x87 /* spell, predictive, autocorrect, reader */};
}

static struct world open_world(struct fake_options options)
{
	struct world w = {.fake = fake_start(options)};
	enum carrel_assessment_error error = CARREL_ASSESSMENT_ERROR_OTHER;
	w.lockdown = carrel_assessment_create(fake_display(w.fake), NULL, &error);
	EXPECT(w.lockdown != NULL);
	EXPECT_CODE(error, CARREL_ASSESSMENT_OK);
	return w;
}

static void close_world(struct world *w)
{
	carrel_assessment_destroy(w->lockdown);
	fake_stop(w->fake);
}

static struct carrel_assessment_session *make_session(struct world *w, const struct carrel_assessment_configuration *c,
                                                      struct recorder *r)
{
	struct carrel_assessment_session *s =
		carrel_assessment_session_create(w->lockdown, fake_surface(w->fake), c, record, r);
	EXPECT(s != NULL);
	return s;
}

/* ---- tests ---- */

static void test_bind_reads_features_lock_state_and_version(void)
{
	struct fake_options options = current();
	options.lock_state = 1;
	struct world w = open_world(options);
	EXPECT(carrel_assessment_get_version(w.lockdown) == 3);
	EXPECT(carrel_assessment_get_enforcement(w.lockdown, CARREL_ASSESSMENT_FEATURE_SPELL_CHECK) ==
	       CARREL_ASSESSMENT_ENFORCEMENT_CLIENT);
	EXPECT(carrel_assessment_get_enforcement(w.lockdown, CARREL_ASSESSMENT_FEATURE_INPUT_METHOD) ==
	       CARREL_ASSESSMENT_ENFORCEMENT_COMPOSITOR);
	EXPECT(carrel_assessment_get_enforcement(w.lockdown, CARREL_ASSESSMENT_FEATURE_SCREEN_READER) ==
	       CARREL_ASSESSMENT_ENFORCEMENT_CLIENT);
	EXPECT(carrel_assessment_get_enforcement(w.lockdown, (enum carrel_assessment_feature)99) ==
	       CARREL_ASSESSMENT_ENFORCEMENT_NOT_ANNOUNCED);
	EXPECT(carrel_assessment_get_lock_state(w.lockdown) == CARREL_ASSESSMENT_LOCK_ACTIVE);
	EXPECT(carrel_assessment_supports_multiple_participants(w.lockdown));
	EXPECT(fake_manager_binds(w.fake) == 1);
	close_world(&w);
}

static void test_without_the_global_create_says_not_available(void)
{
	struct fake_options options = current();
	options.offer_manager = false;
	struct fake *fake = fake_start(options);
	enum carrel_assessment_error error = CARREL_ASSESSMENT_OK;
	EXPECT(carrel_assessment_create(fake_display(fake), NULL, &error) == NULL);
	EXPECT_CODE(error, CARREL_ASSESSMENT_ERROR_NOT_AVAILABLE);
	EXPECT(carrel_assessment_create(NULL, NULL, &error) == NULL);
	EXPECT_CODE(error, CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT);
	fake_stop(fake);
}

static void test_begin_sends_the_configuration_once_and_end_is_answered_by_ended(void)
{
	struct world w = open_world(current());
	struct carrel_assessment_configuration *c = carrel_assessment_configuration_create();
	EXPECT_CODE(carrel_assessment_configuration_allow_feature(c, CARREL_ASSESSMENT_FEATURE_SPELL_CHECK, true), CARREL_ASSESSMENT_OK);
	EXPECT_CODE(carrel_assessment_configuration_allow_feature(c, CARREL_ASSESSMENT_FEATURE_SPELL_CHECK, true), CARREL_ASSESSMENT_OK);
	EXPECT_CODE(carrel_assessment_configuration_allow_feature(c, CARREL_ASSESSMENT_FEATURE_INPUT_METHOD, true), CARREL_ASSESSMENT_OK);
	EXPECT_CODE(carrel_assessment_configuration_add_participant(c, "calculator", true), CARREL_ASSESSMENT_OK);
	EXPECT_CODE(carrel_assessment_configuration_add_participant(c, "dictionary", true), CARREL_ASSESSMENT_OK);
	/* Named again: only its network changes, and it is sent once. */
	EXPECT_CODE(carrel_assessment_configuration_add_participant(c, "dictionary", false), CARREL_ASSESSMENT_OK);
	EXPECT_CODE(carrel_assessment_configuration_set_time_limit(c, 5400), CARREL_ASSESSMENT_OK);
	EXPECT_CODE(carrel_assessment_configuration_set_owner_network(c, false), CARREL_ASSESSMENT_OK);
	struct recorder r = {0};
	struct carrel_assessment_session *s = make_session(&w, c, &r);
	/* The session holds a copy. */
	carrel_assessment_configuration_destroy(c);
	EXPECT(carrel_assessment_session_get_state(s) == CARREL_ASSESSMENT_SESSION_IDLE);
	EXPECT_CODE(carrel_assessment_session_begin(s), CARREL_ASSESSMENT_OK);
	EXPECT(carrel_assessment_session_get_state(s) == CARREL_ASSESSMENT_SESSION_BEGINNING);
	fake_sync(w.fake);
	EXPECT(fake_session_count(w.fake) == 1);
	struct fake_session sent = fake_session(w.fake, 0);
	EXPECT(sent.configuration.allowed_features == ((1u << 0) | (1u << 3)));
	EXPECT(sent.configuration.participant_count == 2);
	EXPECT(strcmp(sent.configuration.participants[0], "calculator") == 0);
	EXPECT(strcmp(sent.configuration.participants[1], "dictionary") == 0);
	EXPECT(sent.configuration.network_denied_count == 1);
	EXPECT(strcmp(sent.configuration.network_denied[0], "dictionary") == 0);
	EXPECT(sent.configuration.owner_network_denied);
	EXPECT(sent.configuration.time_limit == 5400);
	EXPECT(sent.configuration.setter_repeats == 0);

	fake_send_began(w.fake, 0);
	fake_sync(w.fake);
	EXPECT_LOG(&r, "began");
	EXPECT(r.state_seen == CARREL_ASSESSMENT_SESSION_ACTIVE);
	EXPECT_CODE(carrel_assessment_session_end(s), CARREL_ASSESSMENT_OK);
	EXPECT(carrel_assessment_session_get_state(s) == CARREL_ASSESSMENT_SESSION_ENDING);
	/* A second end is refused here, never sent (already_ended would close the connection). */
	EXPECT_CODE(carrel_assessment_session_end(s), CARREL_ASSESSMENT_ERROR_NOT_ACTIVE);
	fake_sync(w.fake);
	EXPECT(fake_session(w.fake, 0).ends == 1);
	fake_send_ended(w.fake, 0);
	fake_sync(w.fake);
	EXPECT_LOG(&r, "began ended");
	EXPECT(carrel_assessment_session_get_state(s) == CARREL_ASSESSMENT_SESSION_ENDED);
	EXPECT_CODE(carrel_assessment_session_end(s), CARREL_ASSESSMENT_ERROR_NOT_ACTIVE);
	carrel_assessment_session_destroy(s);
	fake_sync(w.fake);
	EXPECT(fake_session(w.fake, 0).destroyed);
	EXPECT(fake_session(w.fake, 0).ends == 1);
	close_world(&w);
}

static void test_misuse_is_an_error_code_and_sends_nothing(void)
{
	struct world w = open_world(current());
	struct recorder r = {0};
	struct carrel_assessment_session *s = make_session(&w, NULL, &r);
	/* Before begin: nothing to end, update or attest. */
	EXPECT_CODE(carrel_assessment_session_end(s), CARREL_ASSESSMENT_ERROR_NOT_ACTIVE);
	EXPECT_CODE(carrel_assessment_session_update(s, NULL), CARREL_ASSESSMENT_ERROR_NOT_ACTIVE);
	EXPECT_CODE(carrel_assessment_session_request_attestation(s, (const uint8_t *)"0123456789abcdef", 16),
	            CARREL_ASSESSMENT_ERROR_NOT_ACTIVE);
	EXPECT_CODE(carrel_assessment_session_begin(s), CARREL_ASSESSMENT_OK);
	EXPECT_CODE(carrel_assessment_session_begin(s), CARREL_ASSESSMENT_ERROR_ALREADY_BEGUN);
	/* Pending: update would be the not_begun protocol error. */
	EXPECT_CODE(carrel_assessment_session_update(s, NULL), CARREL_ASSESSMENT_ERROR_NOT_ACTIVE);
	fake_sync(w.fake);
	EXPECT(fake_session_count(w.fake) == 1);
	EXPECT(fake_session(w.fake, 0).request_count == 0);
	/* end before began withdraws: the object is destroyed, failed(cancelled) at once. */
	EXPECT_CODE(carrel_assessment_session_end(s), CARREL_ASSESSMENT_OK);
	EXPECT_LOG(&r, "failed:cancelled");
	EXPECT(carrel_assessment_session_get_state(s) == CARREL_ASSESSMENT_SESSION_FAILED);
	fake_sync(w.fake);
	EXPECT(fake_session(w.fake, 0).destroyed);
	EXPECT(fake_session(w.fake, 0).ends == 0);
	EXPECT_CODE(carrel_assessment_session_begin(s), CARREL_ASSESSMENT_ERROR_ALREADY_BEGUN);
	EXPECT_CODE(carrel_assessment_session_end(s), CARREL_ASSESSMENT_ERROR_NOT_ACTIVE);
	carrel_assessment_session_destroy(s);

	/* Arguments. */
	struct carrel_assessment_configuration *c = carrel_assessment_configuration_create();
	EXPECT_CODE(carrel_assessment_configuration_allow_feature(c, (enum carrel_assessment_feature)8, true),
	            CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT);
	EXPECT_CODE(carrel_assessment_configuration_add_participant(c, "", true), CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT);
	EXPECT_CODE(carrel_assessment_configuration_add_participant(c, NULL, true), CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT);
	char long_id[300];
	memset(long_id, 'x', sizeof long_id - 1);
	long_id[sizeof long_id - 1] = 0;
	EXPECT_CODE(carrel_assessment_configuration_add_participant(c, long_id, true), CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT);
	EXPECT_CODE(carrel_assessment_configuration_remove_participant(c, "absent"), CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT);
	EXPECT_CODE(carrel_assessment_configuration_add_participant(c, "a", true), CARREL_ASSESSMENT_OK);
	EXPECT_CODE(carrel_assessment_configuration_add_participant(c, "b", true), CARREL_ASSESSMENT_OK);
	EXPECT_CODE(carrel_assessment_configuration_remove_participant(c, "a"), CARREL_ASSESSMENT_OK);
	EXPECT(carrel_assessment_configuration_get_participant_count(c) == 1);
	EXPECT(strcmp(carrel_assessment_configuration_get_participant(c, 0), "b") == 0);
	EXPECT(carrel_assessment_configuration_get_participant(c, 1) == NULL);
	carrel_assessment_configuration_destroy(c);
	EXPECT_CODE(carrel_assessment_session_begin(NULL), CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT);
	EXPECT_CODE(carrel_assessment_session_end(NULL), CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT);
	EXPECT(carrel_assessment_session_create(w.lockdown, NULL, NULL, record, &r) == NULL);
	EXPECT(carrel_assessment_session_create(w.lockdown, fake_surface(w.fake), NULL, NULL, NULL) == NULL);
	carrel_assessment_session_destroy(NULL);
	carrel_assessment_destroy(NULL);

	/* Attestation: a nonce too long for the protocol is refused here. */
	struct recorder r2 = {0};
	struct carrel_assessment_session *s2 = make_session(&w, NULL, &r2);
	EXPECT_CODE(carrel_assessment_session_begin(s2), CARREL_ASSESSMENT_OK);
	fake_sync(w.fake);
	fake_send_began(w.fake, 1);
	fake_sync(w.fake);
	uint8_t nonce[300] = {0};
	EXPECT_CODE(carrel_assessment_session_request_attestation(s2, nonce, sizeof nonce), CARREL_ASSESSMENT_ERROR_INVALID_NONCE);
	EXPECT_CODE(carrel_assessment_session_request_attestation(s2, NULL, 5), CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT);
	fake_sync(w.fake);
	EXPECT(fake_session(w.fake, 1).attestation_requests == 0);
	carrel_assessment_session_destroy(s2);
	close_world(&w);
}

static void test_reasons_newer_than_the_library_are_other(void)
{
	EXPECT(carrel_assessment_error_from_failure_reason(1) == CARREL_ASSESSMENT_ERROR_ALREADY_ACTIVE);
	EXPECT(carrel_assessment_error_from_failure_reason(11) == CARREL_ASSESSMENT_ERROR_PARTICIPANT_UNAVAILABLE);
	EXPECT(carrel_assessment_error_from_failure_reason(12) == CARREL_ASSESSMENT_ERROR_OTHER);
	EXPECT(carrel_assessment_error_from_interruption_reason(3) == CARREL_ASSESSMENT_ERROR_TIME_LIMIT);
	EXPECT(carrel_assessment_error_from_interruption_reason(5) == CARREL_ASSESSMENT_ERROR_OTHER);
	EXPECT(carrel_assessment_error_from_attestation_failure_reason(3) == CARREL_ASSESSMENT_ERROR_NOT_ACTIVE);
	EXPECT(carrel_assessment_error_from_attestation_failure_reason(5) == CARREL_ASSESSMENT_ERROR_OTHER);

	struct world w = open_world(current());
	struct recorder r = {0};
	struct carrel_assessment_session *s = make_session(&w, NULL, &r);
	carrel_assessment_session_begin(s);
	fake_sync(w.fake);
	fake_send_began(w.fake, 0);
	fake_sync(w.fake);
	EXPECT_CODE(carrel_assessment_session_update(s, NULL), CARREL_ASSESSMENT_OK);
	EXPECT_CODE(carrel_assessment_session_request_attestation(s, (const uint8_t *)"0123456789abcdef", 16),
	            CARREL_ASSESSMENT_OK);
	fake_sync(w.fake);
	fake_send_update_failed(w.fake, 0, 4000, "a reason of version 9");
	fake_send_attestation_failed(w.fake, 0, 77, "another");
	fake_send_interrupted(w.fake, 0, 99, "from the future");
	fake_sync(w.fake);
	EXPECT_LOG(&r, "began update_failed:other attestation_failed:other interrupted:other");
	EXPECT(strcmp(r.last_message, "from the future") == 0);
	EXPECT(carrel_assessment_session_get_state(s) == CARREL_ASSESSMENT_SESSION_INTERRUPTED);
	carrel_assessment_session_destroy(s);

	struct recorder r2 = {0};
	struct carrel_assessment_session *s2 = make_session(&w, NULL, &r2);
	carrel_assessment_session_begin(s2);
	fake_sync(w.fake);
	fake_send_failed(w.fake, 1, 12345, "newer");
	fake_sync(w.fake);
	EXPECT_LOG(&r2, "failed:other");
	carrel_assessment_session_destroy(s2);
	close_world(&w);
}

static void test_event_orders(void)
{
	struct world w = open_world(current());
	/* failed is terminal: a began after it is dropped, end is refused. */
	struct recorder r = {0};
	struct carrel_assessment_session *s = make_session(&w, NULL, &r);
	carrel_assessment_session_begin(s);
	fake_sync(w.fake);
	fake_send_failed(w.fake, 0, 1, "another session is active");
	fake_send_began(w.fake, 0);
	fake_sync(w.fake);
	EXPECT_LOG(&r, "failed:already_active");
	EXPECT(strcmp(r.last_message, "another session is active") == 0);
	EXPECT_CODE(carrel_assessment_session_end(s), CARREL_ASSESSMENT_ERROR_NOT_ACTIVE);
	carrel_assessment_session_destroy(s);

	/* interrupted is not terminal; an ended nobody asked for (forced) is,
	 * and no end may follow it. */
	struct recorder r2 = {0};
	s = make_session(&w, NULL, &r2);
	carrel_assessment_session_begin(s);
	fake_sync(w.fake);
	fake_send_began(w.fake, 1);
	fake_send_interrupted(w.fake, 1, 2, "fire alarm");
	fake_send_interrupted(w.fake, 1, 1, "a second cause");
	fake_sync(w.fake);
	EXPECT(carrel_assessment_session_get_state(s) == CARREL_ASSESSMENT_SESSION_INTERRUPTED);
	fake_send_ended(w.fake, 1);
	fake_send_updated(w.fake, 1); /* nothing pending: dropped */
	fake_sync(w.fake);
	EXPECT_LOG(&r2, "began interrupted:administrative interrupted:integrity ended");
	EXPECT_CODE(carrel_assessment_session_end(s), CARREL_ASSESSMENT_ERROR_NOT_ACTIVE);
	fake_sync(w.fake);
	EXPECT(fake_session(w.fake, 1).ends == 0);
	carrel_assessment_session_destroy(s);

	/* Updates are answered in order; the configuration in force follows
	 * the updated ones only. An interrupted session may still send one. */
	struct recorder r3 = {0};
	s = make_session(&w, NULL, &r3);
	carrel_assessment_session_begin(s);
	fake_sync(w.fake);
	fake_send_began(w.fake, 2);
	fake_sync(w.fake);
	struct carrel_assessment_configuration *first = carrel_assessment_configuration_create();
	carrel_assessment_configuration_set_time_limit(first, 60);
	struct carrel_assessment_configuration *second = carrel_assessment_configuration_create();
	carrel_assessment_configuration_set_time_limit(second, 120);
	EXPECT_CODE(carrel_assessment_session_update(s, first), CARREL_ASSESSMENT_OK);
	EXPECT_CODE(carrel_assessment_session_update(s, second), CARREL_ASSESSMENT_OK);
	carrel_assessment_configuration_destroy(first);
	carrel_assessment_configuration_destroy(second);
	fake_sync(w.fake);
	EXPECT(fake_session(w.fake, 2).updates == 2);
	EXPECT(fake_session(w.fake, 2).last_update.time_limit == 120);
	fake_send_updated(w.fake, 2);
	fake_send_update_failed(w.fake, 2, 3, "time limit above the maximum");
	fake_sync(w.fake);
	EXPECT(carrel_assessment_configuration_get_time_limit(carrel_assessment_session_get_configuration(s)) == 60);
	fake_send_interrupted(w.fake, 2, 3, "time is up");
	fake_sync(w.fake);
	EXPECT_CODE(carrel_assessment_session_update(s, NULL), CARREL_ASSESSMENT_OK);
	/* end while an update is outstanding: ended is the last event, the update unanswered. */
	EXPECT_CODE(carrel_assessment_session_end(s), CARREL_ASSESSMENT_OK);
	fake_sync(w.fake);
	fake_send_interrupted(w.fake, 2, 4, "sent before the compositor saw end");
	fake_send_ended(w.fake, 2);
	fake_send_update_failed(w.fake, 2, 8, "too late");
	fake_sync(w.fake);
	EXPECT_LOG(&r3, "began updated update_failed:unsupported_configuration interrupted:time_limit "
	                "interrupted:shutdown ended");
	struct fake_session sent = fake_session(w.fake, 2);
	EXPECT(sent.request_count == 4 && memcmp(sent.requests, "uuue", 4) == 0);
	carrel_assessment_session_destroy(s);

	/* Attestation: the statement and signature reach the app; the closing
	 * one goes out right before end, and is answered before ended. */
	struct recorder r4 = {0};
	s = make_session(&w, NULL, &r4);
	carrel_assessment_session_begin(s);
	fake_sync(w.fake);
	fake_send_began(w.fake, 3);
	fake_sync(w.fake);
	const uint8_t nonce[16] = "0123456789abcdef";
	EXPECT_CODE(carrel_assessment_session_request_attestation(s, nonce, sizeof nonce), CARREL_ASSESSMENT_OK);
	EXPECT_CODE(carrel_assessment_session_end_with_attestation(s, nonce, sizeof nonce), CARREL_ASSESSMENT_OK);
	fake_sync(w.fake);
	sent = fake_session(w.fake, 3);
	EXPECT(sent.request_count == 3 && memcmp(sent.requests, "aae", 3) == 0);
	EXPECT(sent.last_nonce_length == 16);
	uint8_t signature[64] = {1};
	fake_send_attestation(w.fake, 3, "{\"nonce\":\"30\"}", signature, sizeof signature);
	fake_send_ended(w.fake, 3); /* the second request left unanswered: the app still hears of it, before ended */
	fake_sync(w.fake);
	EXPECT_LOG(&r4, "began attestation attestation_failed:not_active ended");
	EXPECT(strcmp(r4.statement, "{\"nonce\":\"30\"}") == 0);
	EXPECT(r4.signature_length == 64);
	carrel_assessment_session_destroy(s);
	close_world(&w);
}

static void test_an_older_compositor_gets_only_what_it_can_carry(void)
{
	struct fake_options options = current();
	options.version = 1;
	struct world w = open_world(options);
	EXPECT(carrel_assessment_get_version(w.lockdown) == 1);
	EXPECT(!carrel_assessment_supports_multiple_participants(w.lockdown));
	struct carrel_assessment_configuration *c = carrel_assessment_configuration_create();
	carrel_assessment_configuration_add_participant(c, "calculator", true);
	struct recorder r = {0};
	struct carrel_assessment_session *s = make_session(&w, c, &r);
	EXPECT_CODE(carrel_assessment_session_begin(s), CARREL_ASSESSMENT_ERROR_MULTIPLE_PARTICIPANTS_NOT_SUPPORTED);
	EXPECT(carrel_assessment_session_get_state(s) == CARREL_ASSESSMENT_SESSION_FAILED);
	EXPECT_CODE(carrel_assessment_session_begin(s), CARREL_ASSESSMENT_ERROR_ALREADY_BEGUN);
	carrel_assessment_session_destroy(s);
	carrel_assessment_configuration_destroy(c);
	fake_sync(w.fake);
	EXPECT(fake_session_count(w.fake) == 0);
	EXPECT_LOG(&r, "");

	/* Version 1 can begin a plain session, but cannot take network away or sign. */
	s = make_session(&w, NULL, &r);
	EXPECT_CODE(carrel_assessment_session_begin(s), CARREL_ASSESSMENT_OK);
	fake_sync(w.fake);
	fake_send_began(w.fake, 0);
	fake_sync(w.fake);
	c = carrel_assessment_configuration_create();
	carrel_assessment_configuration_set_owner_network(c, false);
	EXPECT_CODE(carrel_assessment_session_update(s, c), CARREL_ASSESSMENT_ERROR_UNSUPPORTED_CONFIGURATION);
	carrel_assessment_configuration_destroy(c);
	EXPECT_CODE(carrel_assessment_session_request_attestation(s, (const uint8_t *)"0123456789abcdef", 16),
	            CARREL_ASSESSMENT_ERROR_ATTESTATION_UNAVAILABLE);
	EXPECT(carrel_assessment_session_get_state(s) == CARREL_ASSESSMENT_SESSION_ACTIVE);
	fake_sync(w.fake);
	EXPECT(fake_session(w.fake, 0).request_count == 0);
	carrel_assessment_session_destroy(s);
	close_world(&w);
}

static void test_a_connection_that_dies(void)
{
	struct world w = open_world(current());
	struct recorder pending = {0}, active = {0};
	struct carrel_assessment_session *a = make_session(&w, NULL, &active);
	carrel_assessment_session_begin(a);
	fake_sync(w.fake);
	fake_send_began(w.fake, 0);
	fake_sync(w.fake);
	/* The second is refused by the compositor in real life; here it is
	 * left pending so both states meet the dead connection. */
	struct carrel_assessment_session *p = make_session(&w, NULL, &pending);
	carrel_assessment_session_begin(p);
	fake_sync(w.fake);
	fake_disconnect_client(w.fake);
	EXPECT(wl_display_roundtrip(fake_display(w.fake)) < 0);
	carrel_assessment_connection_failed(w.lockdown);
	EXPECT_LOG(&active, "began interrupted:connection ended");
	EXPECT_LOG(&pending, "failed:connection");
	EXPECT(strstr(pending.last_message, "connection to the compositor failed") != NULL);
	/* Requests on a dead connection are refused by state, not sent. */
	EXPECT_CODE(carrel_assessment_session_end(a), CARREL_ASSESSMENT_ERROR_NOT_ACTIVE);
	carrel_assessment_session_destroy(a);
	carrel_assessment_session_destroy(p);
	close_world(&w);
}

static void lock_state_changed(void *data, struct carrel_assessment *lockdown, enum carrel_assessment_lock_state state)
{
	(void)lockdown;
	int *seen = data;
	*seen = *seen * 10 + (int)state + 1;
}

static void test_callbacks_may_destroy_and_queues_are_the_apps(void)
{
	/* Destroying the session from inside its terminal callback. */
	struct world w = open_world(current());
	struct recorder r = {.destroy_on_terminal = true};
	struct carrel_assessment_session *s = make_session(&w, NULL, &r);
	carrel_assessment_session_begin(s);
	fake_sync(w.fake);
	fake_send_began(w.fake, 0);
	fake_send_ended(w.fake, 0);
	fake_sync(w.fake);
	EXPECT_LOG(&r, "began ended");
	fake_sync(w.fake);
	EXPECT(fake_session(w.fake, 0).destroyed);

	/* Lock state changes reach the callback, once per change. */
	int seen = 0;
	carrel_assessment_set_lock_state_callback(w.lockdown, lock_state_changed, &seen);
	fake_send_lock_state(w.fake, 1);
	fake_send_lock_state(w.fake, 1);
	fake_send_lock_state(w.fake, 0);
	fake_sync(w.fake);
	EXPECT(seen == 21);
	/* The lockdown destroyed under a live session: the session keeps working. */
	struct recorder r2 = {0};
	s = make_session(&w, NULL, &r2);
	carrel_assessment_session_begin(s);
	carrel_assessment_destroy(w.lockdown);
	fake_sync(w.fake);
	fake_send_began(w.fake, 1);
	fake_sync(w.fake);
	EXPECT_LOG(&r2, "began");
	EXPECT_CODE(carrel_assessment_session_end(s), CARREL_ASSESSMENT_OK);
	carrel_assessment_session_destroy(s); /* frees the lockdown too */
	fake_stop(w.fake);

	/* Events go to the queue the app names, not the default one. */
	struct fake *fake = fake_start(current());
	struct wl_event_queue *queue = wl_display_create_queue(fake_display(fake));
	struct carrel_assessment *lockdown = carrel_assessment_create(fake_display(fake), queue, NULL);
	EXPECT(lockdown != NULL);
	struct recorder r3 = {0};
	s = carrel_assessment_session_create(lockdown, fake_surface(fake), NULL, record, &r3);
	carrel_assessment_session_begin(s);
	fake_sync(fake);
	fake_send_began(fake, 0);
	fake_sync(fake); /* the default queue */
	EXPECT_LOG(&r3, "");
	wl_display_roundtrip_queue(fake_display(fake), queue);
	EXPECT_LOG(&r3, "began");
	carrel_assessment_session_destroy(s);
	carrel_assessment_destroy(lockdown);
	wl_event_queue_destroy(queue);
	fake_stop(fake);
}

static void test_a_long_begin_update_end_loop(void)
{
	/* For the AddressSanitizer build: every allocation of a session's life,
	 * many times over, with leaks reported at exit. */
	struct world w = open_world(current());
	struct carrel_assessment_configuration *c = carrel_assessment_configuration_create();
	carrel_assessment_configuration_add_participant(c, "calculator", false);
	carrel_assessment_configuration_allow_feature(c, CARREL_ASSESSMENT_FEATURE_AUTOCORRECT, true);
	int rounds = 0;
	for (int round = 0; round < 8; round++) {
		for (int inner = 0; inner < 40; inner++) {
			struct recorder r = {0};
			struct carrel_assessment_session *s = make_session(&w, c, &r);
			carrel_assessment_session_begin(s);
			carrel_assessment_session_destroy(s);
		}
		struct recorder r = {0};
		struct carrel_assessment_session *s = make_session(&w, c, &r);
		carrel_assessment_session_begin(s);
		fake_sync(w.fake);
		int index = fake_session_count(w.fake) - 1;
		fake_send_began(w.fake, index);
		fake_sync(w.fake);
		for (int update = 0; update < 20; update++)
			carrel_assessment_session_update(s, c);
		fake_sync(w.fake);
		for (int update = 0; update < 10; update++)
			fake_send_updated(w.fake, index);
		carrel_assessment_session_request_attestation(s, (const uint8_t *)"0123456789abcdef", 16);
		carrel_assessment_session_end(s);
		fake_sync(w.fake);
		fake_send_ended(w.fake, index);
		fake_sync(w.fake);
		rounds += strcmp(r.log, "began updated updated updated updated updated updated updated updated updated "
		                        "updated attestation_failed:not_active ended") == 0;
		carrel_assessment_session_destroy(s);
	}
	EXPECT(rounds == 8);
	carrel_assessment_configuration_destroy(c);
	close_world(&w);
}

int main(void)
{
	static const struct {
		const char *name;
		void (*run)(void);
	} tests[] = {
		{"bind reads features, lock state and version", test_bind_reads_features_lock_state_and_version},
		{"without the global, create says not_available", test_without_the_global_create_says_not_available},
		{"begin sends the configuration once; end is answered by ended", test_begin_sends_the_configuration_once_and_end_is_answered_by_ended},
		{"misuse is an error code and sends nothing", test_misuse_is_an_error_code_and_sends_nothing},
		{"reasons newer than the library are other", test_reasons_newer_than_the_library_are_other},
		{"event orders the protocol allows", test_event_orders},
		{"an older compositor gets only what it can carry", test_an_older_compositor_gets_only_what_it_can_carry},
		{"a connection that dies", test_a_connection_that_dies},
		{"callbacks may destroy; queues are the app's", test_callbacks_may_destroy_and_queues_are_the_apps},
		{"a long begin/update/end loop", test_a_long_begin_update_end_loop},
	};
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		int before = failures;
		tests[i].run();
		printf("%s: %s\n", failures == before ? "ok" : "FAILED", tests[i].name);
	}
	if (failures)
		fprintf(stderr, "test-session-rules: %d expectation(s) failed\n", failures);
	return failures ? 1 : 0;
}
