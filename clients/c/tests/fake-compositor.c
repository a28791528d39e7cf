#define _GNU_SOURCE
#include "fake-compositor.h"

#include <stdio.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <wayland-client.h>
#include <wayland-server.h>

#include "carrel-assessment-v1-server-protocol.h"

/* Not assert(): these calls must run whatever NDEBUG says. */
#define require(condition) \
	do { \
		if (!(condition)) { \
			fprintf(stderr, "%s:%d: fake compositor: %s failed\n", __FILE__, __LINE__, #condition); \
			abort(); \
		} \
	} while (0)

struct fake {
	struct fake_options options;
	struct wl_display *server;
	struct wl_client *client; /* the app, on the server side; NULL once disconnected */
	struct wl_display *display; /* the app's connection */
	struct wl_compositor *compositor;
	struct wl_surface *surface;
	pthread_t thread;
	pthread_mutex_t lock; /* guards what both threads read: sessions, binds */
	int call_pipe[2];     /* test -> server: a struct call * */
	int ack_pipe[2];      /* server -> test: one byte per call done */
	struct wl_event_source *calls;
	struct wl_resource *managers[FAKE_MAX_MANAGERS];
	int manager_count;
	int binds;
	struct fake_session sessions[FAKE_MAX_SESSIONS];
	int session_count;
	bool stopping;
};

struct call {
	void (*fn)(struct fake *fake, void *arg);
	void *arg;
};

/* ---- wl_compositor: just enough to hand out surfaces ---- */

static void surface_destroy(struct wl_client *client, struct wl_resource *resource)
{
	(void)client;
	wl_resource_destroy(resource);
}

/* The library never sends the other wl_surface requests; the test does not either. */
static const struct wl_surface_interface surface_implementation = {.destroy = surface_destroy};

static void compositor_create_surface(struct wl_client *client, struct wl_resource *resource, uint32_t id)
{
	struct wl_resource *surface = wl_resource_create(client, &wl_surface_interface, wl_resource_get_version(resource), id);
	wl_resource_set_implementation(surface, &surface_implementation, NULL, NULL);
}

static const struct wl_compositor_interface compositor_implementation = {.create_surface = compositor_create_surface};

static void bind_compositor(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	(void)data;
	struct wl_resource *resource = wl_resource_create(client, &wl_compositor_interface, version, id);
	wl_resource_set_implementation(resource, &compositor_implementation, NULL, NULL);
}

/* ---- carrel_assessment_configuration_v1: recorded ---- */

static struct fake_configuration *configuration_of(struct wl_resource *resource)
{
	return wl_resource_get_user_data(resource);
}

static void configuration_destroy(struct wl_client *client, struct wl_resource *resource)
{
	(void)client;
	wl_resource_destroy(resource);
}

static void configuration_free(struct wl_resource *resource)
{
	free(configuration_of(resource));
}

static void allow_feature(struct wl_client *client, struct wl_resource *resource, uint32_t feature)
{
	(void)client;
	struct fake_configuration *c = configuration_of(resource);
	if (c->allowed_features & (1u << feature))
		c->setter_repeats++;
	c->allowed_features |= 1u << feature;
}

static void add_participant(struct wl_client *client, struct wl_resource *resource, const char *id)
{
	(void)client;
	struct fake_configuration *c = configuration_of(resource);
	for (int i = 0; i < c->participant_count; i++)
		if (strcmp(c->participants[i], id) == 0)
			c->setter_repeats++;
	if (c->participant_count < FAKE_MAX_PARTICIPANTS)
		snprintf(c->participants[c->participant_count++], sizeof c->participants[0], "%s", id);
}

static void set_time_limit(struct wl_client *client, struct wl_resource *resource, uint32_t seconds)
{
	(void)client;
	struct fake_configuration *c = configuration_of(resource);
	if (c->time_limit)
		c->setter_repeats++;
	c->time_limit = seconds;
}

static void deny_participant_network(struct wl_client *client, struct wl_resource *resource, const char *id)
{
	(void)client;
	struct fake_configuration *c = configuration_of(resource);
	if (c->network_denied_count < FAKE_MAX_PARTICIPANTS)
		snprintf(c->network_denied[c->network_denied_count++], sizeof c->network_denied[0], "%s", id);
}

static void deny_owner_network(struct wl_client *client, struct wl_resource *resource)
{
	(void)client;
	struct fake_configuration *c = configuration_of(resource);
	if (c->owner_network_denied)
		c->setter_repeats++;
	c->owner_network_denied = true;
}

static const struct carrel_assessment_configuration_v1_interface configuration_implementation = {
	.destroy = configuration_destroy,
	.allow_feature = allow_feature,
	.add_participant = add_participant,
	.set_time_limit = set_time_limit,
	.deny_participant_network = deny_participant_network,
	.deny_owner_network = deny_owner_network,
};

/* ---- carrel_assessment_session_v1: recorded ---- */

static struct fake_session *session_of(struct wl_resource *resource)
{
	return wl_resource_get_user_data(resource);
}

static struct fake *the_fake; /* one fake at a time; the handlers below need its lock */

static void record(struct wl_resource *resource, char request)
{
	struct fake_session *s = session_of(resource);
	pthread_mutex_lock(&the_fake->lock);
	if (s->request_count < FAKE_MAX_RECORD)
		s->requests[s->request_count++] = request;
	if (request == 'e')
		s->ends++;
	pthread_mutex_unlock(&the_fake->lock);
}

static void session_destroy(struct wl_client *client, struct wl_resource *resource)
{
	(void)client;
	pthread_mutex_lock(&the_fake->lock);
	session_of(resource)->destroyed = true;
	session_of(resource)->resource = NULL;
	pthread_mutex_unlock(&the_fake->lock);
	wl_resource_destroy(resource);
}

static void session_end(struct wl_client *client, struct wl_resource *resource)
{
	(void)client;
	record(resource, 'e');
}

static void session_update(struct wl_client *client, struct wl_resource *resource, struct wl_resource *configuration)
{
	(void)client;
	record(resource, 'u');
	pthread_mutex_lock(&the_fake->lock);
	session_of(resource)->updates++;
	session_of(resource)->last_update = *configuration_of(configuration);
	pthread_mutex_unlock(&the_fake->lock);
}

static void session_request_attestation(struct wl_client *client, struct wl_resource *resource, struct wl_array *nonce)
{
	(void)client;
	record(resource, 'a');
	pthread_mutex_lock(&the_fake->lock);
	session_of(resource)->attestation_requests++;
	session_of(resource)->last_nonce_length = (uint32_t)nonce->size;
	pthread_mutex_unlock(&the_fake->lock);
}

static const struct carrel_assessment_session_v1_interface session_implementation = {
	.destroy = session_destroy,
	.end = session_end,
	.update = session_update,
	.request_attestation = session_request_attestation,
};

/* ---- carrel_assessment_manager_v1 ---- */

static void manager_destroy(struct wl_client *client, struct wl_resource *resource)
{
	(void)client;
	wl_resource_destroy(resource);
}

static void manager_create_configuration(struct wl_client *client, struct wl_resource *resource, uint32_t id)
{
	struct wl_resource *configuration = wl_resource_create(client, &carrel_assessment_configuration_v1_interface,
	                                                       wl_resource_get_version(resource), id);
	wl_resource_set_implementation(configuration, &configuration_implementation,
	                               calloc(1, sizeof(struct fake_configuration)), configuration_free);
}

static void manager_begin(struct wl_client *client, struct wl_resource *resource, uint32_t id,
                          struct wl_resource *surface, struct wl_resource *configuration)
{
	(void)surface;
	struct fake *fake = wl_resource_get_user_data(resource);
	struct wl_resource *session = wl_resource_create(client, &carrel_assessment_session_v1_interface,
	                                                 wl_resource_get_version(resource), id);
	pthread_mutex_lock(&fake->lock);
	require(fake->session_count < FAKE_MAX_SESSIONS);
	struct fake_session *s = &fake->sessions[fake->session_count++];
	memset(s, 0, sizeof *s);
	s->resource = session;
	if (configuration)
		s->configuration = *configuration_of(configuration);
	pthread_mutex_unlock(&fake->lock);
	wl_resource_set_implementation(session, &session_implementation, s, NULL);
}

static const struct carrel_assessment_manager_v1_interface manager_implementation = {
	.destroy = manager_destroy,
	.create_configuration = manager_create_configuration,
	.begin = manager_begin,
};

static void manager_unbound(struct wl_resource *resource)
{
	struct fake *fake = wl_resource_get_user_data(resource);
	for (int i = 0; i < fake->manager_count; i++)
		if (fake->managers[i] == resource)
			fake->managers[i] = NULL;
}

static void bind_manager(struct wl_client *client, void *data, uint32_t version, uint32_t id)
{
	struct fake *fake = data;
	struct wl_resource *resource = wl_resource_create(client, &carrel_assessment_manager_v1_interface, version, id);
	wl_resource_set_implementation(resource, &manager_implementation, fake, manager_unbound);
	pthread_mutex_lock(&fake->lock);
	fake->binds++;
	if (fake->manager_count < FAKE_MAX_MANAGERS)
		fake->managers[fake->manager_count++] = resource;
	pthread_mutex_unlock(&fake->lock);
	for (int feature = 0; feature < fake->options.feature_count; feature++)
		carrel_assessment_manager_v1_send_feature(resource, (uint32_t)feature,
		                                          (fake->options.client_enforced >> feature) & 1);
	carrel_assessment_manager_v1_send_lock_state(resource, fake->options.lock_state);
	carrel_assessment_manager_v1_send_done(resource);
}

/* ---- the server thread ---- */

static int handle_call(int fd, uint32_t mask, void *data)
{
	(void)mask;
	struct fake *fake = data;
	struct call call;
	if (read(fd, &call, sizeof call) != sizeof call)
		return 0;
	if (call.fn)
		call.fn(fake, call.arg);
	else
		fake->stopping = true;
	wl_display_flush_clients(fake->server);
	char done = 1;
	if (write(fake->ack_pipe[1], &done, 1) != 1)
		abort();
	return 0;
}

static void *serve(void *data)
{
	struct fake *fake = data;
	struct wl_event_loop *loop = wl_display_get_event_loop(fake->server);
	while (!fake->stopping) {
		wl_display_flush_clients(fake->server);
		wl_event_loop_dispatch(loop, -1);
	}
	return NULL;
}

struct fake *fake_start(struct fake_options options)
{
	struct fake *fake = calloc(1, sizeof *fake);
	require(fake && !the_fake);
	the_fake = fake;
	fake->options = options;
	pthread_mutex_init(&fake->lock, NULL);
	fake->server = wl_display_create();
	wl_global_create(fake->server, &wl_compositor_interface, 4, fake, bind_compositor);
	if (options.offer_manager)
		wl_global_create(fake->server, &carrel_assessment_manager_v1_interface, (int)options.version, fake,
		                 bind_manager);
	int sockets[2];
	require(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) == 0);
	fake->client = wl_client_create(fake->server, sockets[0]);
	require(pipe2(fake->call_pipe, O_CLOEXEC) == 0 && pipe2(fake->ack_pipe, O_CLOEXEC) == 0);
	fake->calls = wl_event_loop_add_fd(wl_display_get_event_loop(fake->server), fake->call_pipe[0],
	                                   WL_EVENT_READABLE, handle_call, fake);
	require(pthread_create(&fake->thread, NULL, serve, fake) == 0);

	fake->display = wl_display_connect_to_fd(sockets[1]);
	require(fake->display);
	return fake;
}

struct wl_display *fake_display(struct fake *fake)
{
	return fake->display;
}

static void handle_global(void *data, struct wl_registry *registry, uint32_t name, const char *interface,
                          uint32_t version)
{
	(void)version;
	struct fake *fake = data;
	if (strcmp(interface, wl_compositor_interface.name) == 0)
		fake->compositor = wl_registry_bind(registry, name, &wl_compositor_interface, 4);
}

static void handle_global_remove(void *data, struct wl_registry *registry, uint32_t name)
{
	(void)data, (void)registry, (void)name;
}

static const struct wl_registry_listener registry_listener = {handle_global, handle_global_remove};

struct wl_surface *fake_surface(struct fake *fake)
{
	if (!fake->surface) {
		struct wl_registry *registry = wl_display_get_registry(fake->display);
		wl_registry_add_listener(registry, &registry_listener, fake);
		wl_display_roundtrip(fake->display);
		wl_registry_destroy(registry);
		require(fake->compositor);
		fake->surface = wl_compositor_create_surface(fake->compositor);
		wl_display_roundtrip(fake->display);
	}
	return fake->surface;
}

void fake_call(struct fake *fake, void (*fn)(struct fake *fake, void *arg), void *arg)
{
	struct call call = {fn, arg};
	require(write(fake->call_pipe[1], &call, sizeof call) == sizeof call);
	char done;
	require(read(fake->ack_pipe[0], &done, 1) == 1);
}

void fake_sync(struct fake *fake)
{
	/* A dead connection makes this fail; tests of that check it themselves. */
	wl_display_roundtrip(fake->display);
}

int fake_session_count(struct fake *fake)
{
	pthread_mutex_lock(&fake->lock);
	int count = fake->session_count;
	pthread_mutex_unlock(&fake->lock);
	return count;
}

struct fake_session fake_session(struct fake *fake, int index)
{
	pthread_mutex_lock(&fake->lock);
	require(index < fake->session_count);
	struct fake_session copy = fake->sessions[index];
	pthread_mutex_unlock(&fake->lock);
	return copy;
}

int fake_manager_binds(struct fake *fake)
{
	pthread_mutex_lock(&fake->lock);
	int binds = fake->binds;
	pthread_mutex_unlock(&fake->lock);
	return binds;
}

void fake_stop(struct fake *fake)
{
	if (fake->surface)
		wl_surface_destroy(fake->surface);
	if (fake->compositor)
		wl_compositor_destroy(fake->compositor);
	wl_display_disconnect(fake->display);
	fake_call(fake, NULL, NULL);
	pthread_join(fake->thread, NULL);
	wl_event_source_remove(fake->calls);
	wl_display_destroy_clients(fake->server);
	wl_display_destroy(fake->server);
	close(fake->call_pipe[0]), close(fake->call_pipe[1]);
	close(fake->ack_pipe[0]), close(fake->ack_pipe[1]);
	pthread_mutex_destroy(&fake->lock);
	free(fake);
	the_fake = NULL;
}

/* ---- events, each run on the server thread ---- */

struct event {
	int index;
	uint32_t reason;
	const char *text;
	const uint8_t *bytes;
	uint32_t length;
	char kind;
};

static void send_event(struct fake *fake, void *arg)
{
	struct event *e = arg;
	if (e->kind == 'L') {
		for (int i = 0; i < fake->manager_count; i++) {
			if (!fake->managers[i])
				continue;
			carrel_assessment_manager_v1_send_lock_state(fake->managers[i], e->reason);
			carrel_assessment_manager_v1_send_done(fake->managers[i]);
		}
		return;
	}
	if (e->kind == 'X') {
		if (fake->client)
			wl_client_destroy(fake->client);
		fake->client = NULL;
		return;
	}
	struct wl_resource *r = fake->sessions[e->index].resource;
	require(r && "the session was destroyed by the client");
	struct wl_array array = {.size = e->length, .alloc = e->length, .data = (void *)e->bytes};
	switch (e->kind) {
	case 'b': carrel_assessment_session_v1_send_began(r); break;
	case 'f': carrel_assessment_session_v1_send_failed(r, e->reason, e->text); break;
	case 'i': carrel_assessment_session_v1_send_interrupted(r, e->reason, e->text); break;
	case 'e': carrel_assessment_session_v1_send_ended(r); break;
	case 'u': carrel_assessment_session_v1_send_updated(r); break;
	case 'U': carrel_assessment_session_v1_send_update_failed(r, e->reason, e->text); break;
	case 'a': carrel_assessment_session_v1_send_attestation(r, e->text, &array); break;
	case 'A': carrel_assessment_session_v1_send_attestation_failed(r, e->reason, e->text); break;
	default: abort();
	}
}

static void send_on_server(struct fake *fake, struct event e)
{
	fake_call(fake, send_event, &e);
}

void fake_send_began(struct fake *fake, int index) { send_on_server(fake, (struct event){.index = index, .kind = 'b'}); }
void fake_send_ended(struct fake *fake, int index) { send_on_server(fake, (struct event){.index = index, .kind = 'e'}); }
void fake_send_updated(struct fake *fake, int index) { send_on_server(fake, (struct event){.index = index, .kind = 'u'}); }

void fake_send_failed(struct fake *fake, int index, uint32_t reason, const char *message)
{
	send_on_server(fake, (struct event){.index = index, .reason = reason, .text = message, .kind = 'f'});
}

void fake_send_interrupted(struct fake *fake, int index, uint32_t reason, const char *message)
{
	send_on_server(fake, (struct event){.index = index, .reason = reason, .text = message, .kind = 'i'});
}

void fake_send_update_failed(struct fake *fake, int index, uint32_t reason, const char *message)
{
	send_on_server(fake, (struct event){.index = index, .reason = reason, .text = message, .kind = 'U'});
}

void fake_send_attestation(struct fake *fake, int index, const char *statement, const uint8_t *signature,
                           uint32_t signature_length)
{
	send_on_server(fake, (struct event){.index = index, .text = statement, .bytes = signature, .length = signature_length,
	                          .kind = 'a'});
}

void fake_send_attestation_failed(struct fake *fake, int index, uint32_t reason, const char *message)
{
	send_on_server(fake, (struct event){.index = index, .reason = reason, .text = message, .kind = 'A'});
}

void fake_send_lock_state(struct fake *fake, uint32_t state)
{
	send_on_server(fake, (struct event){.reason = state, .kind = 'L'});
}

void fake_disconnect_client(struct fake *fake)
{
	send_on_server(fake, (struct event){.kind = 'X'});
}
