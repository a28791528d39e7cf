/* What the library's files share; nothing here is public API. */
#ifndef CARREL_ASSESSMENT_PRIVATE_H
#define CARREL_ASSESSMENT_PRIVATE_H

#include <wayland-client.h>

#include "carrel/assessment.h"
#include "carrel-assessment-v1-client-protocol.h"

/* Built with -fvisibility=hidden: only what carries this is exported (and
 * the version script lists the same names, so nothing slips out). */
#define CARREL_PUBLIC __attribute__((visibility("default")))

/* The longest participant id sent: a Wayland message must fit in 4096 bytes,
 * and policy ids are short names. */
#define PARTICIPANT_ID_MAX 255
/* The protocol's nonce bound; a longer one is refused here, before it could
 * overflow a message. */
#define NONCE_MAX 256

struct participant {
	char *id;
	bool allows_network_access;
};

struct carrel_assessment_configuration {
	uint32_t allowed_features; /* bit n: feature n */
	struct participant *participants;
	size_t participant_count;
	uint32_t time_limit; /* 0: the policy's */
	bool owner_network;
};

struct carrel_assessment {
	struct wl_display *display;
	struct carrel_assessment_manager_v1 *manager; /* NULL once the app destroyed the lockdown */
	uint32_t version;
	enum carrel_assessment_enforcement enforcement[CARREL_ASSESSMENT_FEATURE_COUNT];
	enum carrel_assessment_lock_state lock_state;
	/* Manager events apply only at done. */
	enum carrel_assessment_enforcement announced[CARREL_ASSESSMENT_FEATURE_COUNT];
	bool features_announced;
	int announced_lock_state; /* -1: none since the last done */
	carrel_assessment_lock_state_fn lock_state_callback;
	void *lock_state_data;
	struct wl_list sessions; /* carrel_assessment_session.link */
	/* The app's handle (until carrel_assessment_destroy) plus one per session. */
	int references;
	/* Depth of callbacks into the app: what the app destroys meanwhile is
	 * freed when the outermost one returns, never under a caller's feet. */
	int delivering;
};

struct carrel_assessment_session {
	struct carrel_assessment *lockdown;
	struct wl_list link;
	struct wl_surface *surface;
	struct carrel_assessment_session_v1 *proxy; /* NULL before begin and once destroyed */
	struct carrel_assessment_configuration *configuration;
	/* Configurations sent with update and not answered yet, oldest first. */
	struct carrel_assessment_configuration **pending_updates;
	size_t pending_update_count;
	size_t pending_attestations;
	enum carrel_assessment_session_state state;
	carrel_assessment_event_fn callback;
	void *data;
	bool destroyed; /* by the app; freed at the next sweep */
};

/* lockdown.c */
void lockdown_enter(struct carrel_assessment *lockdown);
void lockdown_leave(struct carrel_assessment *lockdown);
void lockdown_unref(struct carrel_assessment *lockdown);
void lockdown_flush(struct carrel_assessment *lockdown);

/* session.c */
void session_free(struct carrel_assessment_session *session);
void session_connection_lost(struct carrel_assessment_session *session, const char *message);

/* configuration.c */
struct carrel_assessment_configuration *configuration_copy_or_default(
	const struct carrel_assessment_configuration *configuration);
bool configuration_denies_network(const struct carrel_assessment_configuration *configuration);
/* A configuration object carrying `configuration`, each setter sent at most
 * once as the protocol requires. */
struct carrel_assessment_configuration_v1 *configuration_send(struct carrel_assessment *lockdown,
                                                              const struct carrel_assessment_configuration *configuration);

#endif
