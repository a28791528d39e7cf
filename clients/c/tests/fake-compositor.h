/* A fake compositor for the library's unit tests: libwayland-server on a
 * thread of the test process, speaking carrel-assessment-v1 over a socketpair
 * to the library on the test's thread. It records every request and sends
 * only the events a test tells it to, so a test can play any event order the
 * XML allows (and a few it does not), unknown reasons, an older version, or
 * a connection that dies. */
#ifndef CARREL_FAKE_COMPOSITOR_H
#define CARREL_FAKE_COMPOSITOR_H

#include <stdbool.h>
#include <stdint.h>

struct wl_display;
struct wl_surface;
struct wl_resource;

#define FAKE_MAX_SESSIONS 512
#define FAKE_MAX_MANAGERS 8
#define FAKE_MAX_PARTICIPANTS 8
#define FAKE_MAX_RECORD 64

/* What the library sent, as the fake saw it. */
struct fake_configuration {
	uint32_t allowed_features; /* bit per allow_feature */
	char participants[FAKE_MAX_PARTICIPANTS][64];
	int participant_count;
	char network_denied[FAKE_MAX_PARTICIPANTS][64];
	int network_denied_count;
	bool owner_network_denied;
	uint32_t time_limit;
	int setter_repeats; /* a setter sent twice: a protocol error in Carrel */
};

struct fake_session {
	struct wl_resource *resource;
	struct fake_configuration configuration; /* as begun */
	int ends;
	bool destroyed;
	int updates;
	struct fake_configuration last_update;
	int attestation_requests;
	uint32_t last_nonce_length;
	char requests[FAKE_MAX_RECORD]; /* 'e' end, 'u' update, 'a' attestation, in order */
	int request_count;
};

struct fake_options {
	bool offer_manager;         /* false: no carrel global at all */
	uint32_t version;           /* the manager version offered */
	int feature_count;          /* features announced on bind, 0.. */
	uint32_t client_enforced;   /* bit per feature announced as client-enforced */
	uint32_t lock_state;        /* sent on bind */
};

struct fake;

struct fake *fake_start(struct fake_options options);
/* Stops the server thread and frees everything, the client display too. */
void fake_stop(struct fake *fake);
/* The test's (the app's) connection to the fake. */
struct wl_display *fake_display(struct fake *fake);
/* A wl_surface of the app's connection (the fake does not check roles). */
struct wl_surface *fake_surface(struct fake *fake);

/* Runs fn(fake, arg) on the server thread, then flushes its clients. */
void fake_call(struct fake *fake, void (*fn)(struct fake *fake, void *arg), void *arg);

/* Requests the library has sent so far (after fake_sync). */
int fake_session_count(struct fake *fake);
struct fake_session fake_session(struct fake *fake, int index);
int fake_manager_binds(struct fake *fake);

/* Every request sent before this call has been handled and every event sent
 * before it dispatched on the default queue. */
void fake_sync(struct fake *fake);

/* Events, sent on the server thread; index is the order of begins. */
void fake_send_began(struct fake *fake, int index);
void fake_send_failed(struct fake *fake, int index, uint32_t reason, const char *message);
void fake_send_interrupted(struct fake *fake, int index, uint32_t reason, const char *message);
void fake_send_ended(struct fake *fake, int index);
void fake_send_updated(struct fake *fake, int index);
void fake_send_update_failed(struct fake *fake, int index, uint32_t reason, const char *message);
void fake_send_attestation(struct fake *fake, int index, const char *statement, const uint8_t *signature,
                           uint32_t signature_length);
void fake_send_attestation_failed(struct fake *fake, int index, uint32_t reason, const char *message);
void fake_send_lock_state(struct fake *fake, uint32_t state);
/* Closes the app's connection from the compositor's side. */
void fake_disconnect_client(struct fake *fake);

#endif
