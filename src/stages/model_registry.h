/* model_registry.h - the database's models (LiteLLM_ProxyModelTable) served
 * beside the config file's, kept current at run time (model_registry.c). */
#ifndef SY_STAGES_MODEL_REGISTRY_H
#define SY_STAGES_MODEL_REGISTRY_H

struct sy_config;

/* Builds and swaps of the config in force, one at a time: main holds it
 * across a SIGHUP reload (load, sy_model_registry_with_db, build, swap). */
void sy_model_registry_lock(void);
void sy_model_registry_unlock(void);

/* The config to build from the config file's snapshot file_cfg (takes over
 * the caller's reference; returns one): file_cfg itself when
 * store_model_in_db is off or there is no database, else a snapshot of it
 * with the database's models after its own (config/config.h
 * sy_config_with_models). Remembers file_cfg as the base of later rebuilds.
 * The first call with store_model_in_db on reads the table at once (start:
 * a restart serves its database models before the first request). */
struct sy_config *sy_model_registry_with_db(struct sy_config *file_cfg);

#endif
