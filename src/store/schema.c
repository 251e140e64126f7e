/* schema.c - the tables switchyard uses, as data: LiteLLM's own DDL.
 *
 * The columns, types, defaults, primary keys and indexes below are taken
 * from LiteLLM's PostgreSQL schema (the pg_dump of a database built by its
 * Prisma migrations: shared/compat/litellm-schema/litellm-schema.sql), so a
 * database switchyard creates can be served by LiteLLM and the other way
 * round. migrate.c turns them into CREATE TABLE / ADD COLUMN / CREATE INDEX
 * for either backend. Foreign keys are left out (LiteLLM's Prisma client
 * keeps the references itself; several point at tables switchyard does not
 * create).
 *
 * LiteLLM's tables (19):
 *
 *   | table                              | primary key                  | what for                      |
 *   |------------------------------------|------------------------------|-------------------------------|
 *   | LiteLLM_VerificationToken          | token (sha256 hex of the key)| virtual keys                  |
 *   | LiteLLM_UserTable                  | user_id                      | internal users                |
 *   | LiteLLM_TeamTable                  | team_id                      | teams                         |
 *   | LiteLLM_TeamMembership             | (user_id, team_id)           | per-member team spend/budget  |
 *   | LiteLLM_OrganizationTable          | organization_id              | organizations                 |
 *   | LiteLLM_OrganizationMembership     | (user_id, organization_id)   | org members                   |
 *   | LiteLLM_BudgetTable                | budget_id                    | shared budgets                |
 *   | LiteLLM_EndUserTable               | user_id                      | end users (customers)         |
 *   | LiteLLM_SpendLogs                  | request_id                   | one row per request           |
 *   | LiteLLM_MCPServerTable             | server_id                    | MCP servers added by the API  |
 *   | LiteLLM_CredentialsTable           | credential_id                | provider credentials (/credentials) |
 *   | LiteLLM_ObjectPermissionTable      | object_permission_id         | MCP servers / tools a key, team or org may
 * use | | LiteLLM_Daily{User,Team,Organization,EndUser,Tag}Spend | id       | daily aggregates; upserted ON CONFLICT on
 * their unique (entity, date, api_key, model, custom_llm_provider, mcp_namespaced_tool_name, endpoint) index | |
 * LiteLLM_DeletedVerificationToken   | id                           | audit of deleted keys         | | LiteLLM_Config
 * | param_name                   | proxy settings in the DB      | | LiteLLM_ErrorLogs                  | request_id |
 * failed requests               |
 *
 * plus switchyard's own tables, which LiteLLM neither has nor reads (new
 * tables only: nothing of LiteLLM's is changed for them):
 *
 *   | table                              | primary key                  | what for                      |
 *   |------------------------------------|------------------------------|-------------------------------|
 *   | Switchyard_Meta                    | key                          | schema_version (migrate.c)    |
 *   | SwitchyardResponse                 | id ("resp_<32 hex>")         | stored Responses conversations
 * (responses/store.h) | | SwitchyardObject                   | kind, id                     | owners of native
 * responses, files, batches (responses/owners.h) | | SwitchyardReservation              | (id, kind) | budget
 * reservations in flight (spend/reserve.c) | | SwitchyardInstance                 | id                           |
 * instance leases for reclaiming them |
 *
 * ("Switchyard_Meta" is made by migrate.c itself; "SwitchyardResponse" is in
 * sy__tables below like LiteLLM's, so an existing database gets it added.)
 *
 * SQLite gets the same tables and column names with these declared types
 * (store.h reads values back by them) and defaults:
 *
 *   | PostgreSQL type                  | SQLite declared type |
 *   |----------------------------------|----------------------|
 *   | text                             | TEXT                 |
 *   | double precision                 | DOUBLE PRECISION     |
 *   | integer                          | INTEGER              |
 *   | bigint                           | BIGINT               |
 *   | boolean                          | BOOLEAN (0/1)        |
 *   | timestamp(3) without time zone   | TIMESTAMP (ISO text) |
 *   | text[]                           | JSONTEXT (JSON array)|
 *   | jsonb / json                     | JSONTEXT             |
 *
 *   | PostgreSQL default   | SQLite default                                  |
 *   |----------------------|-------------------------------------------------|
 *   | ARRAY[]::text[]      | '[]'                                            |
 *   | '{}'::jsonb, '[]'::jsonb, ''::text, 'sse'::text | the literal without the cast |
 *   | false / true         | 0 / 1                                           |
 *   | 0, 0.0               | the same                                        |
 *   | CURRENT_TIMESTAMP    | (strftime('%Y-%m-%dT%H:%M:%fZ','now')) - ISO text like switchyard writes; not constant, so
 * left out of ALTER TABLE ADD COLUMN |
 */
#include <stddef.h>
#include <string.h>

#include "store/store_impl.h"

const char *sy__sqlite_type(const char *t)
{
    static const struct {
        const char *pg, *lite;
    } map[] = {
        {"text", "TEXT"},       {"double precision", "DOUBLE PRECISION"},
        {"integer", "INTEGER"}, {"bigint", "BIGINT"},
        {"boolean", "BOOLEAN"}, {"timestamp(3) without time zone", "TIMESTAMP"},
        {"text[]", "JSONTEXT"}, {"jsonb", "JSONTEXT"},
        {"json", "JSONTEXT"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(t, map[i].pg) == 0)
            return map[i].lite;
    return "TEXT";
}

const char *sy__sqlite_default(const char *d, int *constant)
{
    static const struct {
        const char *pg, *lite;
        int constant;
    } map[] = {
        {"ARRAY[]::text[]", "'[]'", 1},
        {"'{}'::jsonb", "'{}'", 1},
        {"'[]'::jsonb", "'[]'", 1},
        {"''::text", "''", 1},
        {"'sse'::text", "'sse'", 1},
        {"'unknown'::text", "'unknown'", 1},
        {"false", "0", 1},
        {"true", "1", 1},
        {"0", "0", 1},
        {"0.0", "0.0", 1},
        {"CURRENT_TIMESTAMP", "(strftime('%Y-%m-%dT%H:%M:%fZ','now'))", 0},
    };
    *constant = 1;
    if (!d)
        return NULL;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(d, map[i].pg) == 0) {
            *constant = map[i].constant;
            return map[i].lite;
        }
    return NULL; /* unknown: no default on SQLite */
}

/* Generated from litellm-schema.sql (column order as in the dump). */
static const struct sy__col c_VerificationToken[] = {
    {"token", "text", NULL, 1},
    {"key_name", "text", NULL, 0},
    {"key_alias", "text", NULL, 0},
    {"soft_budget_cooldown", "boolean", "false", 1},
    {"spend", "double precision", "0.0", 1},
    {"expires", "timestamp(3) without time zone", NULL, 0},
    {"models", "text[]", NULL, 0},
    {"aliases", "jsonb", "'{}'::jsonb", 1},
    {"config", "jsonb", "'{}'::jsonb", 1},
    {"user_id", "text", NULL, 0},
    {"team_id", "text", NULL, 0},
    {"permissions", "jsonb", "'{}'::jsonb", 1},
    {"max_parallel_requests", "integer", NULL, 0},
    {"metadata", "jsonb", "'{}'::jsonb", 1},
    {"blocked", "boolean", NULL, 0},
    {"tpm_limit", "bigint", NULL, 0},
    {"rpm_limit", "bigint", NULL, 0},
    {"max_budget", "double precision", NULL, 0},
    {"budget_duration", "text", NULL, 0},
    {"budget_reset_at", "timestamp(3) without time zone", NULL, 0},
    {"allowed_cache_controls", "text[]", "ARRAY[]::text[]", 0},
    {"model_spend", "jsonb", "'{}'::jsonb", 1},
    {"model_max_budget", "jsonb", "'{}'::jsonb", 1},
    {"budget_id", "text", NULL, 0},
    {"organization_id", "text", NULL, 0},
    {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 0},
    {"created_by", "text", NULL, 0},
    {"updated_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 0},
    {"updated_by", "text", NULL, 0},
    {"allowed_routes", "text[]", "ARRAY[]::text[]", 0},
    {"object_permission_id", "text", NULL, 0},
    {"auto_rotate", "boolean", "false", 0},
    {"key_rotation_at", "timestamp(3) without time zone", NULL, 0},
    {"last_rotation_at", "timestamp(3) without time zone", NULL, 0},
    {"rotation_count", "integer", "0", 0},
    {"rotation_interval", "text", NULL, 0},
    {"project_id", "text", NULL, 0},
    {"router_settings", "jsonb", "'{}'::jsonb", 0},
    {"policies", "text[]", "ARRAY[]::text[]", 0},
    {"access_group_ids", "text[]", "ARRAY[]::text[]", 0},
    {"last_active", "timestamp(3) without time zone", NULL, 0},
    {"agent_id", "text", NULL, 0},
    {"budget_limits", "jsonb", NULL, 0},
    {"key_type", "text", NULL, 0},
};
static const struct sy__col c_UserTable[] = {
    {"user_id", "text", NULL, 1},
    {"user_alias", "text", NULL, 0},
    {"team_id", "text", NULL, 0},
    {"sso_user_id", "text", NULL, 0},
    {"organization_id", "text", NULL, 0},
    {"password", "text", NULL, 0},
    {"teams", "text[]", "ARRAY[]::text[]", 0},
    {"user_role", "text", NULL, 0},
    {"max_budget", "double precision", NULL, 0},
    {"spend", "double precision", "0.0", 1},
    {"user_email", "text", NULL, 0},
    {"models", "text[]", NULL, 0},
    {"metadata", "jsonb", "'{}'::jsonb", 1},
    {"max_parallel_requests", "integer", NULL, 0},
    {"tpm_limit", "bigint", NULL, 0},
    {"rpm_limit", "bigint", NULL, 0},
    {"budget_duration", "text", NULL, 0},
    {"budget_reset_at", "timestamp(3) without time zone", NULL, 0},
    {"allowed_cache_controls", "text[]", "ARRAY[]::text[]", 0},
    {"model_spend", "jsonb", "'{}'::jsonb", 1},
    {"model_max_budget", "jsonb", "'{}'::jsonb", 1},
    {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 0},
    {"updated_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 0},
    {"object_permission_id", "text", NULL, 0},
    {"policies", "text[]", "ARRAY[]::text[]", 0},
};
static const struct sy__col c_TeamTable[] = {
    {"team_id", "text", NULL, 1},
    {"team_alias", "text", NULL, 0},
    {"organization_id", "text", NULL, 0},
    {"admins", "text[]", NULL, 0},
    {"members", "text[]", NULL, 0},
    {"members_with_roles", "jsonb", "'{}'::jsonb", 1},
    {"metadata", "jsonb", "'{}'::jsonb", 1},
    {"max_budget", "double precision", NULL, 0},
    {"spend", "double precision", "0.0", 1},
    {"models", "text[]", NULL, 0},
    {"max_parallel_requests", "integer", NULL, 0},
    {"tpm_limit", "bigint", NULL, 0},
    {"rpm_limit", "bigint", NULL, 0},
    {"budget_duration", "text", NULL, 0},
    {"budget_reset_at", "timestamp(3) without time zone", NULL, 0},
    {"blocked", "boolean", "false", 1},
    {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"updated_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"model_spend", "jsonb", "'{}'::jsonb", 1},
    {"model_max_budget", "jsonb", "'{}'::jsonb", 1},
    {"model_id", "integer", NULL, 0},
    {"team_member_permissions", "text[]", "ARRAY[]::text[]", 0},
    {"object_permission_id", "text", NULL, 0},
    {"router_settings", "jsonb", "'{}'::jsonb", 0},
    {"policies", "text[]", "ARRAY[]::text[]", 0},
    {"allow_team_guardrail_config", "boolean", "false", 1},
    {"soft_budget", "double precision", NULL, 0},
    {"access_group_ids", "text[]", "ARRAY[]::text[]", 0},
    {"budget_limits", "jsonb", NULL, 0},
    {"default_team_member_models", "text[]", "ARRAY[]::text[]", 0},
};
static const struct sy__col c_TeamMembership[] = {
    {"user_id", "text", NULL, 1},
    {"team_id", "text", NULL, 1},
    {"spend", "double precision", "0.0", 1},
    {"budget_id", "text", NULL, 0},
    {"total_spend", "double precision", "0.0", 1},
};
static const struct sy__col c_OrganizationTable[] = {
    {"organization_id", "text", NULL, 1},
    {"organization_alias", "text", NULL, 1},
    {"budget_id", "text", NULL, 1},
    {"metadata", "jsonb", "'{}'::jsonb", 1},
    {"models", "text[]", NULL, 0},
    {"spend", "double precision", "0.0", 1},
    {"model_spend", "jsonb", "'{}'::jsonb", 1},
    {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"created_by", "text", NULL, 1},
    {"updated_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"updated_by", "text", NULL, 1},
    {"object_permission_id", "text", NULL, 0},
};
static const struct sy__col c_OrganizationMembership[] = {
    {"user_id", "text", NULL, 1},
    {"organization_id", "text", NULL, 1},
    {"user_role", "text", NULL, 0},
    {"spend", "double precision", "0.0", 0},
    {"budget_id", "text", NULL, 0},
    {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 0},
    {"updated_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 0},
};
static const struct sy__col c_BudgetTable[] = {
    {"budget_id", "text", NULL, 1},
    {"max_budget", "double precision", NULL, 0},
    {"soft_budget", "double precision", NULL, 0},
    {"max_parallel_requests", "integer", NULL, 0},
    {"tpm_limit", "bigint", NULL, 0},
    {"rpm_limit", "bigint", NULL, 0},
    {"model_max_budget", "jsonb", NULL, 0},
    {"budget_duration", "text", NULL, 0},
    {"budget_reset_at", "timestamp(3) without time zone", NULL, 0},
    {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"created_by", "text", NULL, 1},
    {"updated_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"updated_by", "text", NULL, 1},
    {"allowed_models", "text[]", "ARRAY[]::text[]", 0},
};
static const struct sy__col c_EndUserTable[] = {
    {"user_id", "text", NULL, 1},
    {"alias", "text", NULL, 0},
    {"spend", "double precision", "0.0", 1},
    {"allowed_model_region", "text", NULL, 0},
    {"default_model", "text", NULL, 0},
    {"budget_id", "text", NULL, 0},
    {"blocked", "boolean", "false", 1},
    {"object_permission_id", "text", NULL, 0},
};
static const struct sy__col c_SpendLogs[] = {
    {"request_id", "text", NULL, 1},
    {"call_type", "text", NULL, 1},
    {"api_key", "text", "''::text", 1},
    {"spend", "double precision", "0.0", 1},
    {"total_tokens", "integer", "0", 1},
    {"prompt_tokens", "integer", "0", 1},
    {"completion_tokens", "integer", "0", 1},
    {"startTime", "timestamp(3) without time zone", NULL, 1},
    {"endTime", "timestamp(3) without time zone", NULL, 1},
    {"completionStartTime", "timestamp(3) without time zone", NULL, 0},
    {"model", "text", "''::text", 1},
    {"model_id", "text", "''::text", 0},
    {"model_group", "text", "''::text", 0},
    {"custom_llm_provider", "text", "''::text", 0},
    {"api_base", "text", "''::text", 0},
    {"user", "text", "''::text", 0},
    {"metadata", "jsonb", "'{}'::jsonb", 0},
    {"cache_hit", "text", "''::text", 0},
    {"cache_key", "text", "''::text", 0},
    {"request_tags", "jsonb", "'[]'::jsonb", 0},
    {"team_id", "text", NULL, 0},
    {"end_user", "text", NULL, 0},
    {"requester_ip_address", "text", NULL, 0},
    {"messages", "jsonb", "'{}'::jsonb", 0},
    {"response", "jsonb", "'{}'::jsonb", 0},
    {"proxy_server_request", "jsonb", "'{}'::jsonb", 0},
    {"session_id", "text", NULL, 0},
    {"status", "text", NULL, 0},
    {"key_name", "text", NULL, 0},
    {"mcp_namespaced_tool_name", "text", NULL, 0},
    {"organization_id", "text", NULL, 0},
    {"agent_id", "text", NULL, 0},
    {"request_duration_ms", "integer", NULL, 0},
};
static const struct sy__col c_DailyUserSpend[] = {
    {"id", "text", NULL, 1},
    {"user_id", "text", NULL, 0},
    {"date", "text", NULL, 1},
    {"api_key", "text", NULL, 1},
    {"model", "text", NULL, 0},
    {"model_group", "text", NULL, 0},
    {"custom_llm_provider", "text", NULL, 0},
    {"prompt_tokens", "bigint", "0", 1},
    {"completion_tokens", "bigint", "0", 1},
    {"spend", "double precision", "0.0", 1},
    {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"updated_at", "timestamp(3) without time zone", NULL, 1},
    {"api_requests", "bigint", "0", 1},
    {"failed_requests", "bigint", "0", 1},
    {"successful_requests", "bigint", "0", 1},
    {"cache_creation_input_tokens", "bigint", "0", 1},
    {"cache_read_input_tokens", "bigint", "0", 1},
    {"mcp_namespaced_tool_name", "text", NULL, 0},
    {"endpoint", "text", NULL, 0},
};
static const struct sy__col c_DailyTeamSpend[] = {
    {"id", "text", NULL, 1},
    {"team_id", "text", NULL, 0},
    {"date", "text", NULL, 1},
    {"api_key", "text", NULL, 1},
    {"model", "text", NULL, 0},
    {"model_group", "text", NULL, 0},
    {"custom_llm_provider", "text", NULL, 0},
    {"prompt_tokens", "bigint", "0", 1},
    {"completion_tokens", "bigint", "0", 1},
    {"spend", "double precision", "0.0", 1},
    {"api_requests", "bigint", "0", 1},
    {"successful_requests", "bigint", "0", 1},
    {"failed_requests", "bigint", "0", 1},
    {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"updated_at", "timestamp(3) without time zone", NULL, 1},
    {"cache_creation_input_tokens", "bigint", "0", 1},
    {"cache_read_input_tokens", "bigint", "0", 1},
    {"mcp_namespaced_tool_name", "text", NULL, 0},
    {"endpoint", "text", NULL, 0},
};
static const struct sy__col c_DailyOrganizationSpend[] = {
    {"id", "text", NULL, 1},
    {"organization_id", "text", NULL, 0},
    {"date", "text", NULL, 1},
    {"api_key", "text", NULL, 1},
    {"model", "text", NULL, 0},
    {"model_group", "text", NULL, 0},
    {"custom_llm_provider", "text", NULL, 0},
    {"mcp_namespaced_tool_name", "text", NULL, 0},
    {"prompt_tokens", "bigint", "0", 1},
    {"completion_tokens", "bigint", "0", 1},
    {"cache_read_input_tokens", "bigint", "0", 1},
    {"cache_creation_input_tokens", "bigint", "0", 1},
    {"spend", "double precision", "0.0", 1},
    {"api_requests", "bigint", "0", 1},
    {"successful_requests", "bigint", "0", 1},
    {"failed_requests", "bigint", "0", 1},
    {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"updated_at", "timestamp(3) without time zone", NULL, 1},
    {"endpoint", "text", NULL, 0},
};
static const struct sy__col c_DailyEndUserSpend[] = {
    {"id", "text", NULL, 1},
    {"end_user_id", "text", NULL, 0},
    {"date", "text", NULL, 1},
    {"api_key", "text", NULL, 1},
    {"model", "text", NULL, 0},
    {"model_group", "text", NULL, 0},
    {"custom_llm_provider", "text", NULL, 0},
    {"mcp_namespaced_tool_name", "text", NULL, 0},
    {"prompt_tokens", "bigint", "0", 1},
    {"completion_tokens", "bigint", "0", 1},
    {"cache_read_input_tokens", "bigint", "0", 1},
    {"cache_creation_input_tokens", "bigint", "0", 1},
    {"spend", "double precision", "0.0", 1},
    {"api_requests", "bigint", "0", 1},
    {"successful_requests", "bigint", "0", 1},
    {"failed_requests", "bigint", "0", 1},
    {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"updated_at", "timestamp(3) without time zone", NULL, 1},
    {"endpoint", "text", NULL, 0},
};
static const struct sy__col c_DailyTagSpend[] = {
    {"id", "text", NULL, 1},
    {"tag", "text", NULL, 0},
    {"date", "text", NULL, 1},
    {"api_key", "text", NULL, 1},
    {"model", "text", NULL, 0},
    {"model_group", "text", NULL, 0},
    {"custom_llm_provider", "text", NULL, 0},
    {"prompt_tokens", "bigint", "0", 1},
    {"completion_tokens", "bigint", "0", 1},
    {"cache_read_input_tokens", "bigint", "0", 1},
    {"cache_creation_input_tokens", "bigint", "0", 1},
    {"spend", "double precision", "0.0", 1},
    {"api_requests", "bigint", "0", 1},
    {"successful_requests", "bigint", "0", 1},
    {"failed_requests", "bigint", "0", 1},
    {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"updated_at", "timestamp(3) without time zone", NULL, 1},
    {"mcp_namespaced_tool_name", "text", NULL, 0},
    {"request_id", "text", NULL, 0},
    {"endpoint", "text", NULL, 0},
};
static const struct sy__col c_DeletedVerificationToken[] = {
    {"id", "text", NULL, 1},
    {"token", "text", NULL, 1},
    {"key_name", "text", NULL, 0},
    {"key_alias", "text", NULL, 0},
    {"soft_budget_cooldown", "boolean", "false", 1},
    {"spend", "double precision", "0.0", 1},
    {"expires", "timestamp(3) without time zone", NULL, 0},
    {"models", "text[]", NULL, 0},
    {"aliases", "jsonb", "'{}'::jsonb", 1},
    {"config", "jsonb", "'{}'::jsonb", 1},
    {"user_id", "text", NULL, 0},
    {"team_id", "text", NULL, 0},
    {"permissions", "jsonb", "'{}'::jsonb", 1},
    {"max_parallel_requests", "integer", NULL, 0},
    {"metadata", "jsonb", "'{}'::jsonb", 1},
    {"blocked", "boolean", NULL, 0},
    {"tpm_limit", "bigint", NULL, 0},
    {"rpm_limit", "bigint", NULL, 0},
    {"max_budget", "double precision", NULL, 0},
    {"budget_duration", "text", NULL, 0},
    {"budget_reset_at", "timestamp(3) without time zone", NULL, 0},
    {"allowed_cache_controls", "text[]", "ARRAY[]::text[]", 0},
    {"allowed_routes", "text[]", "ARRAY[]::text[]", 0},
    {"model_spend", "jsonb", "'{}'::jsonb", 1},
    {"model_max_budget", "jsonb", "'{}'::jsonb", 1},
    {"budget_id", "text", NULL, 0},
    {"organization_id", "text", NULL, 0},
    {"object_permission_id", "text", NULL, 0},
    {"created_at", "timestamp(3) without time zone", NULL, 0},
    {"created_by", "text", NULL, 0},
    {"updated_at", "timestamp(3) without time zone", NULL, 0},
    {"updated_by", "text", NULL, 0},
    {"rotation_count", "integer", "0", 0},
    {"auto_rotate", "boolean", "false", 0},
    {"rotation_interval", "text", NULL, 0},
    {"last_rotation_at", "timestamp(3) without time zone", NULL, 0},
    {"key_rotation_at", "timestamp(3) without time zone", NULL, 0},
    {"deleted_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"deleted_by", "text", NULL, 0},
    {"deleted_by_api_key", "text", NULL, 0},
    {"litellm_changed_by", "text", NULL, 0},
    {"router_settings", "jsonb", "'{}'::jsonb", 0},
    {"policies", "text[]", "ARRAY[]::text[]", 0},
    {"access_group_ids", "text[]", "ARRAY[]::text[]", 0},
    {"last_active", "timestamp(3) without time zone", NULL, 0},
    {"project_id", "text", NULL, 0},
    {"key_type", "text", NULL, 0},
};
static const struct sy__col c_Config[] = {
    {"param_name", "text", NULL, 1},
    {"param_value", "jsonb", NULL, 0},
};
static const struct sy__col c_ErrorLogs[] = {
    {"request_id", "text", NULL, 1},
    {"startTime", "timestamp(3) without time zone", NULL, 1},
    {"endTime", "timestamp(3) without time zone", NULL, 1},
    {"api_base", "text", "''::text", 1},
    {"model_group", "text", "''::text", 1},
    {"litellm_model_name", "text", "''::text", 1},
    {"model_id", "text", "''::text", 1},
    {"request_kwargs", "jsonb", "'{}'::jsonb", 1},
    {"exception_type", "text", "''::text", 1},
    {"exception_string", "text", "''::text", 1},
    {"status_code", "text", "''::text", 1},
};
/* The MCP gateway's servers (LiteLLM's _experimental/mcp_server/db.py;
 * stages/mcp_registry.c reads them, admin/mcp.c writes them). The dump's
 * columns only: schema.prisma's newer ones (spec_path, approval_status, the
 * BYOM review fields, delegate_auth_to_upstream, source_url) would be added
 * to an existing LiteLLM database's table, which migrate never does to
 * LiteLLM's tables; readers treat them as optional. */
static const struct sy__col c_MCPServerTable[] = {
    {"server_id", "text", NULL, 1},
    {"server_name", "text", NULL, 0},
    {"description", "text", NULL, 0},
    {"url", "text", NULL, 0},
    {"transport", "text", "'sse'::text", 1},
    {"auth_type", "text", NULL, 0},
    {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 0},
    {"created_by", "text", NULL, 0},
    {"updated_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 0},
    {"updated_by", "text", NULL, 0},
    {"status", "text", "'unknown'::text", 0},
    {"last_health_check", "timestamp(3) without time zone", NULL, 0},
    {"health_check_error", "text", NULL, 0},
    {"mcp_info", "jsonb", "'{}'::jsonb", 0},
    {"args", "text[]", "ARRAY[]::text[]", 0},
    {"command", "text", NULL, 0},
    {"env", "jsonb", "'{}'::jsonb", 0},
    {"mcp_access_groups", "text[]", NULL, 0},
    {"alias", "text", NULL, 0},
    {"allowed_tools", "text[]", "ARRAY[]::text[]", 0},
    {"extra_headers", "text[]", "ARRAY[]::text[]", 0},
    {"static_headers", "jsonb", "'{}'::jsonb", 0},
    {"credentials", "jsonb", "'{}'::jsonb", 0},
    {"authorization_url", "text", NULL, 0},
    {"registration_url", "text", NULL, 0},
    {"token_url", "text", NULL, 0},
    {"allow_all_keys", "boolean", "false", 1},
    {"available_on_public_internet", "boolean", "false", 1},
    {"byok_api_key_help_url", "text", NULL, 0},
    {"byok_description", "text[]", "ARRAY[]::text[]", 0},
    {"is_byok", "boolean", "false", 1},
    {"tool_name_to_description", "jsonb", "'{}'::jsonb", 0},
    {"tool_name_to_display_name", "jsonb", "'{}'::jsonb", 0},
    {"instructions", "text", NULL, 0},
    {"timeout", "double precision", NULL, 0},
};
/* What a key, team, organization, user or end user may use besides models
 * (object_permission_id on their rows; admin/objperm.c, keys/load.c). The
 * dump's columns (schema.prisma's blocked_tools, mcp_toolsets and
 * search_tools are newer). */
static const struct sy__col c_ObjectPermissionTable[] = {
    {"object_permission_id", "text", NULL, 1},
    {"mcp_servers", "text[]", "ARRAY[]::text[]", 0},
    {"vector_stores", "text[]", "ARRAY[]::text[]", 0},
    {"mcp_access_groups", "text[]", "ARRAY[]::text[]", 0},
    {"mcp_tool_permissions", "jsonb", NULL, 0},
    {"agents", "text[]", "ARRAY[]::text[]", 0},
    {"agent_access_groups", "text[]", "ARRAY[]::text[]", 0},
    {"models", "text[]", "ARRAY[]::text[]", 0},
};
/* Reusable provider credentials (admin/credentials.c): each value of
 * credential_values encrypted as LiteLLM does (core/secret.h). */
static const struct sy__col c_CredentialsTable[] = {
    {"credential_id", "text", NULL, 1},
    {"credential_name", "text", NULL, 1},
    {"credential_values", "jsonb", NULL, 1},
    {"credential_info", "jsonb", NULL, 0},
    {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"created_by", "text", NULL, 1},
    {"updated_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"updated_by", "text", NULL, 1},
};
/* switchyard's own: stored Responses conversations (responses/store.h). */
static const struct sy__col c_ModelTable[] = {
    {"id", "integer", NULL, 1},
    {"aliases", "jsonb", NULL, 0},
    {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"created_by", "text", NULL, 1},
    {"updated_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"updated_by", "text", NULL, 1},
};
static const struct sy__col c_ProxyModelTable[] = {
    {"model_id", "text", NULL, 1},
    {"model_name", "text", NULL, 1},
    {"litellm_params", "jsonb", NULL, 1},
    {"model_info", "jsonb", NULL, 0},
    {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"created_by", "text", NULL, 1},
    {"updated_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"updated_by", "text", NULL, 1},
};
static const struct sy__col c_SwitchyardResponse[] = {
    {"id", "text", NULL, 1},        {"model_id", "text", NULL, 0},
    {"model", "text", NULL, 0},     {"owner", "text", NULL, 0},
    {"response", "jsonb", NULL, 0}, {"input_items", "jsonb", NULL, 0},
    {"history", "jsonb", NULL, 0},  {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 0},
};

/* switchyard's own: who made a native response, a file or a batch (responses/owners.h). */
static const struct sy__col c_SwitchyardObject[] = {
    {"kind", "text", NULL, 1},    {"id", "text", NULL, 1},
    {"token", "text", NULL, 1},   {"user_id", "text", NULL, 0},
    {"team_id", "text", NULL, 0}, {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 0},
};

/* switchyard's own: budget reservations in flight and the instances' leases
 * (spend/reserve.c). kind is enum sy_ent; ent_id the entity's id
 * ("team\nuser" for a team member); partial 1 marks the entity's one
 * reservation cut short of its worst case. */
static const struct sy__col c_SwitchyardReservation[] = {
    {"id", "text", NULL, 1},        {"kind", "integer", NULL, 1},
    {"ent_id", "text", NULL, 1},    {"amount", "double precision", "0.0", 1},
    {"owner", "text", NULL, 1},     {"created_at", "timestamp(3) without time zone", "CURRENT_TIMESTAMP", 1},
    {"partial", "integer", "0", 1},
};
static const struct sy__col c_SwitchyardInstance[] = {
    {"id", "text", NULL, 1},
    {"lease_until", "timestamp(3) without time zone", NULL, 1},
};

const struct sy__table sy__tables[] = {
    {"LiteLLM_VerificationToken", c_VerificationToken,
     (int)(sizeof c_VerificationToken / sizeof c_VerificationToken[0]), "LiteLLM_VerificationToken_pkey", "token"},
    {"LiteLLM_UserTable", c_UserTable, (int)(sizeof c_UserTable / sizeof c_UserTable[0]), "LiteLLM_UserTable_pkey",
     "user_id"},
    {"LiteLLM_TeamTable", c_TeamTable, (int)(sizeof c_TeamTable / sizeof c_TeamTable[0]), "LiteLLM_TeamTable_pkey",
     "team_id"},
    {"LiteLLM_TeamMembership", c_TeamMembership, (int)(sizeof c_TeamMembership / sizeof c_TeamMembership[0]),
     "LiteLLM_TeamMembership_pkey", "user_id, team_id"},
    {"LiteLLM_OrganizationTable", c_OrganizationTable,
     (int)(sizeof c_OrganizationTable / sizeof c_OrganizationTable[0]), "LiteLLM_OrganizationTable_pkey",
     "organization_id"},
    {"LiteLLM_OrganizationMembership", c_OrganizationMembership,
     (int)(sizeof c_OrganizationMembership / sizeof c_OrganizationMembership[0]), "LiteLLM_OrganizationMembership_pkey",
     "user_id, organization_id"},
    {"LiteLLM_BudgetTable", c_BudgetTable, (int)(sizeof c_BudgetTable / sizeof c_BudgetTable[0]),
     "LiteLLM_BudgetTable_pkey", "budget_id"},
    {"LiteLLM_EndUserTable", c_EndUserTable, (int)(sizeof c_EndUserTable / sizeof c_EndUserTable[0]),
     "LiteLLM_EndUserTable_pkey", "user_id"},
    {"LiteLLM_SpendLogs", c_SpendLogs, (int)(sizeof c_SpendLogs / sizeof c_SpendLogs[0]), "LiteLLM_SpendLogs_pkey",
     "request_id"},
    {"LiteLLM_DailyUserSpend", c_DailyUserSpend, (int)(sizeof c_DailyUserSpend / sizeof c_DailyUserSpend[0]),
     "LiteLLM_DailyUserSpend_pkey", "id"},
    {"LiteLLM_DailyTeamSpend", c_DailyTeamSpend, (int)(sizeof c_DailyTeamSpend / sizeof c_DailyTeamSpend[0]),
     "LiteLLM_DailyTeamSpend_pkey", "id"},
    {"LiteLLM_DailyOrganizationSpend", c_DailyOrganizationSpend,
     (int)(sizeof c_DailyOrganizationSpend / sizeof c_DailyOrganizationSpend[0]), "LiteLLM_DailyOrganizationSpend_pkey",
     "id"},
    {"LiteLLM_DailyEndUserSpend", c_DailyEndUserSpend,
     (int)(sizeof c_DailyEndUserSpend / sizeof c_DailyEndUserSpend[0]), "LiteLLM_DailyEndUserSpend_pkey", "id"},
    {"LiteLLM_DailyTagSpend", c_DailyTagSpend, (int)(sizeof c_DailyTagSpend / sizeof c_DailyTagSpend[0]),
     "LiteLLM_DailyTagSpend_pkey", "id"},
    {"LiteLLM_DeletedVerificationToken", c_DeletedVerificationToken,
     (int)(sizeof c_DeletedVerificationToken / sizeof c_DeletedVerificationToken[0]),
     "LiteLLM_DeletedVerificationToken_pkey", "id"},
    {"LiteLLM_Config", c_Config, (int)(sizeof c_Config / sizeof c_Config[0]), "LiteLLM_Config_pkey", "param_name"},
    {"LiteLLM_ErrorLogs", c_ErrorLogs, (int)(sizeof c_ErrorLogs / sizeof c_ErrorLogs[0]), "LiteLLM_ErrorLogs_pkey",
     "request_id"},
    {"LiteLLM_MCPServerTable", c_MCPServerTable, (int)(sizeof c_MCPServerTable / sizeof c_MCPServerTable[0]),
     "LiteLLM_MCPServerTable_pkey", "server_id"},
    {"LiteLLM_ObjectPermissionTable", c_ObjectPermissionTable,
     (int)(sizeof c_ObjectPermissionTable / sizeof c_ObjectPermissionTable[0]), "LiteLLM_ObjectPermissionTable_pkey",
     "object_permission_id"},
    {"LiteLLM_ModelTable", c_ModelTable, (int)(sizeof c_ModelTable / sizeof c_ModelTable[0]), "LiteLLM_ModelTable_pkey",
     "id"},
    {"LiteLLM_CredentialsTable", c_CredentialsTable, (int)(sizeof c_CredentialsTable / sizeof c_CredentialsTable[0]),
     "LiteLLM_CredentialsTable_pkey", "credential_id"},
    {"LiteLLM_ProxyModelTable", c_ProxyModelTable, (int)(sizeof c_ProxyModelTable / sizeof c_ProxyModelTable[0]),
     "LiteLLM_ProxyModelTable_pkey", "model_id"},
    {"SwitchyardResponse", c_SwitchyardResponse, (int)(sizeof c_SwitchyardResponse / sizeof c_SwitchyardResponse[0]),
     "SwitchyardResponse_pkey", "id"},
    {"SwitchyardObject", c_SwitchyardObject, (int)(sizeof c_SwitchyardObject / sizeof c_SwitchyardObject[0]),
     "SwitchyardObject_pkey", "kind, id"},
    {"SwitchyardReservation", c_SwitchyardReservation,
     (int)(sizeof c_SwitchyardReservation / sizeof c_SwitchyardReservation[0]), "SwitchyardReservation_pkey",
     "id, kind"},
    {"SwitchyardInstance", c_SwitchyardInstance, (int)(sizeof c_SwitchyardInstance / sizeof c_SwitchyardInstance[0]),
     "SwitchyardInstance_pkey", "id"},
};
const int sy__ntables = (int)(sizeof sy__tables / sizeof sy__tables[0]);

const struct sy__index sy__indexes[] = {
    {"LiteLLM_VerificationToken", "LiteLLM_VerificationToken_budget_reset_at_expires_idx", 0,
     "budget_reset_at, expires"},
    {"LiteLLM_VerificationToken", "LiteLLM_VerificationToken_team_id_idx", 0, "team_id"},
    {"LiteLLM_VerificationToken", "LiteLLM_VerificationToken_user_id_team_id_idx", 0, "user_id, team_id"},
    {"LiteLLM_UserTable", "LiteLLM_UserTable_sso_user_id_key", 1, "sso_user_id"},
    {"LiteLLM_UserTable", "LiteLLM_UserTable_user_email_lower_idx", 0, "lower(user_email)"},
    {"LiteLLM_TeamTable", "LiteLLM_TeamTable_created_at_idx", 0, "created_at"},
    {"LiteLLM_TeamTable", "LiteLLM_TeamTable_model_id_key", 1, "model_id"},
    {"LiteLLM_TeamTable", "LiteLLM_TeamTable_organization_id_idx", 0, "organization_id"},
    {"LiteLLM_TeamTable", "LiteLLM_TeamTable_team_alias_idx", 0, "team_alias"},
    {"LiteLLM_OrganizationMembership", "LiteLLM_OrganizationMembership_user_id_organization_id_key", 1,
     "user_id, organization_id"},
    {"LiteLLM_SpendLogs", "LiteLLM_SpendLogs_end_user_idx", 0, "end_user"},
    {"LiteLLM_SpendLogs", "LiteLLM_SpendLogs_session_id_idx", 0, "session_id"},
    {"LiteLLM_SpendLogs", "LiteLLM_SpendLogs_startTime_idx", 0, "\"startTime\""},
    {"LiteLLM_DailyUserSpend", "LiteLLM_DailyUserSpend_api_key_idx", 0, "api_key"},
    {"LiteLLM_DailyUserSpend", "LiteLLM_DailyUserSpend_date_idx", 0, "date"},
    {"LiteLLM_DailyUserSpend", "LiteLLM_DailyUserSpend_endpoint_idx", 0, "endpoint"},
    {"LiteLLM_DailyUserSpend", "LiteLLM_DailyUserSpend_mcp_namespaced_tool_name_idx", 0, "mcp_namespaced_tool_name"},
    {"LiteLLM_DailyUserSpend", "LiteLLM_DailyUserSpend_model_idx", 0, "model"},
    {"LiteLLM_DailyUserSpend", "LiteLLM_DailyUserSpend_user_id_date_api_key_model_custom_ll_key", 1,
     "user_id, date, api_key, model, custom_llm_provider, mcp_namespaced_tool_name, endpoint"},
    {"LiteLLM_DailyUserSpend", "LiteLLM_DailyUserSpend_user_id_date_idx", 0, "user_id, date"},
    {"LiteLLM_DailyTeamSpend", "LiteLLM_DailyTeamSpend_api_key_idx", 0, "api_key"},
    {"LiteLLM_DailyTeamSpend", "LiteLLM_DailyTeamSpend_date_idx", 0, "date"},
    {"LiteLLM_DailyTeamSpend", "LiteLLM_DailyTeamSpend_endpoint_idx", 0, "endpoint"},
    {"LiteLLM_DailyTeamSpend", "LiteLLM_DailyTeamSpend_mcp_namespaced_tool_name_idx", 0, "mcp_namespaced_tool_name"},
    {"LiteLLM_DailyTeamSpend", "LiteLLM_DailyTeamSpend_model_idx", 0, "model"},
    {"LiteLLM_DailyTeamSpend", "LiteLLM_DailyTeamSpend_team_id_date_api_key_model_custom_ll_key", 1,
     "team_id, date, api_key, model, custom_llm_provider, mcp_namespaced_tool_name, endpoint"},
    {"LiteLLM_DailyTeamSpend", "LiteLLM_DailyTeamSpend_team_id_date_idx", 0, "team_id, date"},
    {"LiteLLM_DailyOrganizationSpend", "LiteLLM_DailyOrganizationSpend_api_key_idx", 0, "api_key"},
    {"LiteLLM_DailyOrganizationSpend", "LiteLLM_DailyOrganizationSpend_date_idx", 0, "date"},
    {"LiteLLM_DailyOrganizationSpend", "LiteLLM_DailyOrganizationSpend_endpoint_idx", 0, "endpoint"},
    {"LiteLLM_DailyOrganizationSpend", "LiteLLM_DailyOrganizationSpend_mcp_namespaced_tool_name_idx", 0,
     "mcp_namespaced_tool_name"},
    {"LiteLLM_DailyOrganizationSpend", "LiteLLM_DailyOrganizationSpend_model_idx", 0, "model"},
    {"LiteLLM_DailyOrganizationSpend", "LiteLLM_DailyOrganizationSpend_organization_id_date_api_key_key", 1,
     "organization_id, date, api_key, model, custom_llm_provider, mcp_namespaced_tool_name, endpoint"},
    {"LiteLLM_DailyOrganizationSpend", "LiteLLM_DailyOrganizationSpend_organization_id_date_idx", 0,
     "organization_id, date"},
    {"LiteLLM_DailyEndUserSpend", "LiteLLM_DailyEndUserSpend_api_key_idx", 0, "api_key"},
    {"LiteLLM_DailyEndUserSpend", "LiteLLM_DailyEndUserSpend_date_idx", 0, "date"},
    {"LiteLLM_DailyEndUserSpend", "LiteLLM_DailyEndUserSpend_end_user_id_date_api_key_model_cu_key", 1,
     "end_user_id, date, api_key, model, custom_llm_provider, mcp_namespaced_tool_name, endpoint"},
    {"LiteLLM_DailyEndUserSpend", "LiteLLM_DailyEndUserSpend_end_user_id_date_idx", 0, "end_user_id, date"},
    {"LiteLLM_DailyEndUserSpend", "LiteLLM_DailyEndUserSpend_endpoint_idx", 0, "endpoint"},
    {"LiteLLM_DailyEndUserSpend", "LiteLLM_DailyEndUserSpend_mcp_namespaced_tool_name_idx", 0,
     "mcp_namespaced_tool_name"},
    {"LiteLLM_DailyEndUserSpend", "LiteLLM_DailyEndUserSpend_model_idx", 0, "model"},
    {"LiteLLM_DailyTagSpend", "LiteLLM_DailyTagSpend_api_key_idx", 0, "api_key"},
    {"LiteLLM_DailyTagSpend", "LiteLLM_DailyTagSpend_date_idx", 0, "date"},
    {"LiteLLM_DailyTagSpend", "LiteLLM_DailyTagSpend_endpoint_idx", 0, "endpoint"},
    {"LiteLLM_DailyTagSpend", "LiteLLM_DailyTagSpend_mcp_namespaced_tool_name_idx", 0, "mcp_namespaced_tool_name"},
    {"LiteLLM_DailyTagSpend", "LiteLLM_DailyTagSpend_model_idx", 0, "model"},
    {"LiteLLM_DailyTagSpend", "LiteLLM_DailyTagSpend_tag_date_api_key_model_custom_llm_pro_key", 1,
     "tag, date, api_key, model, custom_llm_provider, mcp_namespaced_tool_name, endpoint"},
    {"LiteLLM_DailyTagSpend", "LiteLLM_DailyTagSpend_tag_date_idx", 0, "tag, date"},
    {"LiteLLM_DeletedVerificationToken", "LiteLLM_DeletedVerificationToken_created_at_idx", 0, "created_at"},
    {"LiteLLM_DeletedVerificationToken", "LiteLLM_DeletedVerificationToken_deleted_at_idx", 0, "deleted_at"},
    {"LiteLLM_DeletedVerificationToken", "LiteLLM_DeletedVerificationToken_key_alias_idx", 0, "key_alias"},
    {"LiteLLM_DeletedVerificationToken", "LiteLLM_DeletedVerificationToken_organization_id_idx", 0, "organization_id"},
    {"LiteLLM_DeletedVerificationToken", "LiteLLM_DeletedVerificationToken_team_id_idx", 0, "team_id"},
    {"LiteLLM_DeletedVerificationToken", "LiteLLM_DeletedVerificationToken_token_idx", 0, "token"},
    {"LiteLLM_DeletedVerificationToken", "LiteLLM_DeletedVerificationToken_user_id_idx", 0, "user_id"},
    {"LiteLLM_CredentialsTable", "LiteLLM_CredentialsTable_credential_name_key", 1, "credential_name"},
    {"SwitchyardResponse", "SwitchyardResponse_created_at_idx", 0, "created_at"},
    {"SwitchyardObject", "SwitchyardObject_kind_token_idx", 0, "kind, token"},
    {"SwitchyardObject", "SwitchyardObject_kind_user_id_idx", 0, "kind, user_id"},
    {"SwitchyardReservation", "SwitchyardReservation_owner_idx", 0, "owner"},
    {"SwitchyardReservation", "SwitchyardReservation_kind_ent_id_idx", 0, "kind, ent_id"},
};
const int sy__nindexes = (int)(sizeof sy__indexes / sizeof sy__indexes[0]);
