/* Configurations: plain values on the client, turned into a protocol object
 * only for the request that uses them (the compositor copies it there). */
#include <stdlib.h>
#include <string.h>

#include "private.h"

static bool feature_valid(enum carrel_assessment_feature feature)
{
	return (unsigned)feature < CARREL_ASSESSMENT_FEATURE_COUNT;
}

CARREL_PUBLIC struct carrel_assessment_configuration *carrel_assessment_configuration_create(void)
{
	struct carrel_assessment_configuration *configuration = calloc(1, sizeof *configuration);
	if (configuration)
		configuration->owner_network = true;
	return configuration;
}

CARREL_PUBLIC void carrel_assessment_configuration_destroy(struct carrel_assessment_configuration *configuration)
{
	if (!configuration)
		return;
	for (size_t i = 0; i < configuration->participant_count; i++)
		free(configuration->participants[i].id);
	free(configuration->participants);
	free(configuration);
}

CARREL_PUBLIC struct carrel_assessment_configuration *carrel_assessment_configuration_copy(
	const struct carrel_assessment_configuration *configuration)
{
	if (!configuration)
		return NULL;
	struct carrel_assessment_configuration *copy = malloc(sizeof *copy);
	if (!copy)
		return NULL;
	*copy = *configuration;
	copy->participants = NULL;
	copy->participant_count = 0;
	if (configuration->participant_count) {
		copy->participants = calloc(configuration->participant_count, sizeof *copy->participants);
		if (!copy->participants) {
			free(copy);
			return NULL;
		}
		for (size_t i = 0; i < configuration->participant_count; i++) {
			copy->participants[i].allows_network_access = configuration->participants[i].allows_network_access;
			copy->participants[i].id = strdup(configuration->participants[i].id);
			copy->participant_count = i + 1;
			if (!copy->participants[i].id) {
				carrel_assessment_configuration_destroy(copy);
				return NULL;
			}
		}
	}
	return copy;
}

struct carrel_assessment_configuration *configuration_copy_or_default(
	const struct carrel_assessment_configuration *configuration)
{
	return configuration ? carrel_assessment_configuration_copy(configuration)
	                     : carrel_assessment_configuration_create();
}

CARREL_PUBLIC enum carrel_assessment_error carrel_assessment_configuration_allow_feature(
	struct carrel_assessment_configuration *configuration, enum carrel_assessment_feature feature, bool allowed)
{
	if (!configuration || !feature_valid(feature))
		return CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT;
	if (allowed)
		configuration->allowed_features |= 1u << feature;
	else
		configuration->allowed_features &= ~(1u << feature);
	return CARREL_ASSESSMENT_OK;
}

CARREL_PUBLIC bool carrel_assessment_configuration_allows_feature(
	const struct carrel_assessment_configuration *configuration, enum carrel_assessment_feature feature)
{
	return configuration && feature_valid(feature) && (configuration->allowed_features & (1u << feature));
}

static struct participant *find_participant(const struct carrel_assessment_configuration *configuration,
                                            const char *id)
{
	for (size_t i = 0; i < configuration->participant_count; i++)
		if (strcmp(configuration->participants[i].id, id) == 0)
			return &configuration->participants[i];
	return NULL;
}

CARREL_PUBLIC enum carrel_assessment_error carrel_assessment_configuration_add_participant(
	struct carrel_assessment_configuration *configuration, const char *id, bool allows_network_access)
{
	if (!configuration || !id || !*id || strlen(id) > PARTICIPANT_ID_MAX)
		return CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT;
	/* The protocol forbids naming an id twice: a repeat changes only its network. */
	struct participant *existing = find_participant(configuration, id);
	if (existing) {
		existing->allows_network_access = allows_network_access;
		return CARREL_ASSESSMENT_OK;
	}
	struct participant *grown = realloc(configuration->participants,
	                                    (configuration->participant_count + 1) * sizeof *grown);
	if (!grown)
		return CARREL_ASSESSMENT_ERROR_NO_MEMORY;
	configuration->participants = grown;
	char *copy = strdup(id);
	if (!copy)
		return CARREL_ASSESSMENT_ERROR_NO_MEMORY;
	grown[configuration->participant_count++] = (struct participant){copy, allows_network_access};
	return CARREL_ASSESSMENT_OK;
}

CARREL_PUBLIC enum carrel_assessment_error carrel_assessment_configuration_remove_participant(
	struct carrel_assessment_configuration *configuration, const char *id)
{
	if (!configuration || !id)
		return CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT;
	struct participant *found = find_participant(configuration, id);
	if (!found)
		return CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT;
	free(found->id);
	size_t index = (size_t)(found - configuration->participants);
	memmove(found, found + 1, (configuration->participant_count - index - 1) * sizeof *found);
	configuration->participant_count--;
	return CARREL_ASSESSMENT_OK;
}

CARREL_PUBLIC size_t carrel_assessment_configuration_get_participant_count(
	const struct carrel_assessment_configuration *configuration)
{
	return configuration ? configuration->participant_count : 0;
}

CARREL_PUBLIC const char *carrel_assessment_configuration_get_participant(
	const struct carrel_assessment_configuration *configuration, size_t index)
{
	if (!configuration || index >= configuration->participant_count)
		return NULL;
	return configuration->participants[index].id;
}

CARREL_PUBLIC enum carrel_assessment_error carrel_assessment_configuration_set_time_limit(
	struct carrel_assessment_configuration *configuration, uint32_t seconds)
{
	if (!configuration)
		return CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT;
	configuration->time_limit = seconds;
	return CARREL_ASSESSMENT_OK;
}

CARREL_PUBLIC uint32_t carrel_assessment_configuration_get_time_limit(
	const struct carrel_assessment_configuration *configuration)
{
	return configuration ? configuration->time_limit : 0;
}

CARREL_PUBLIC enum carrel_assessment_error carrel_assessment_configuration_set_owner_network(
	struct carrel_assessment_configuration *configuration, bool allows_network_access)
{
	if (!configuration)
		return CARREL_ASSESSMENT_ERROR_INVALID_ARGUMENT;
	configuration->owner_network = allows_network_access;
	return CARREL_ASSESSMENT_OK;
}

bool configuration_denies_network(const struct carrel_assessment_configuration *configuration)
{
	if (!configuration->owner_network)
		return true;
	for (size_t i = 0; i < configuration->participant_count; i++)
		if (!configuration->participants[i].allows_network_access)
			return true;
	return false;
}

struct carrel_assessment_configuration_v1 *configuration_send(struct carrel_assessment *lockdown,
                                                              const struct carrel_assessment_configuration *configuration)
{
	struct carrel_assessment_configuration_v1 *object =
		carrel_assessment_manager_v1_create_configuration(lockdown->manager);
	if (!object)
		return NULL;
	for (uint32_t feature = 0; feature < CARREL_ASSESSMENT_FEATURE_COUNT; feature++)
		if (configuration->allowed_features & (1u << feature))
			carrel_assessment_configuration_v1_allow_feature(object, feature);
	for (size_t i = 0; i < configuration->participant_count; i++)
		carrel_assessment_configuration_v1_add_participant(object, configuration->participants[i].id);
	/* The session checked that a denial needs no newer version than bound. */
	for (size_t i = 0; i < configuration->participant_count; i++)
		if (!configuration->participants[i].allows_network_access)
			carrel_assessment_configuration_v1_deny_participant_network(object,
			                                                            configuration->participants[i].id);
	if (!configuration->owner_network)
		carrel_assessment_configuration_v1_deny_owner_network(object);
	if (configuration->time_limit > 0)
		carrel_assessment_configuration_v1_set_time_limit(object, configuration->time_limit);
	return object;
}
