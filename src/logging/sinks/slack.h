/* slack.h - the slack sink's parts, for its unit tests (tests/unit/logging/test_slack.c).
 * Everything else uses sy_alert() (logging/logging.h) and the sink table. */
#ifndef SY_LOGGING_SINKS_SLACK_H
#define SY_LOGGING_SINKS_SLACK_H

#include "core/buf.h"
#include "logging/logging.h"

#define SY_SLACK_DEDUP_SLOTS  1024 /* (type, key) pairs remembered; the least recently seen goes first */
#define SY_SLACK_OUTAGE_SLOTS 256  /* deployments whose failures are being counted */
#define SY_SLACK_TEXT_MAX     3000 /* a message's text, before JSON escaping */
#define SY_SLACK_ERROR_MAX    1000 /* an error message quoted in an alert */

/* general_settings.alerting_threshold / alert_types / alerting_args as read. */
struct sy_slack_settings {
    unsigned mask;         /* bit (1u << enum sy_alert_type) per alert type on */
    double threshold_s;    /* alerting_threshold (default 300) */
    double dedup_ttl_s;    /* alerting_args.switchyard_alert_dedup_ttl (default 300) */
    double budget_ttl_s;   /* alerting_args.budget_alert_ttl (default 86400) */
    double outage_ttl_s;   /* alerting_args.outage_alert_ttl (default 60) */
    unsigned minor_outage; /* alerting_args.minor_outage_alert_threshold (default 5) */
    unsigned major_outage; /* alerting_args.major_outage_alert_threshold (default 10) */
    double health_check_s; /* alerting_args.switchyard_health_check_interval: DB / Redis (default 5) */
    int log_to_console;    /* alerting_args.log_to_console: each alert also logged (warning) */
    int redact_key_info;   /* redact_user_api_key_info: no key alias / team in alerts */
};

/* Read the settings from lc (defaults for what is absent). Names in
 * alert_types that switchyard does not raise (LiteLLM's reports, unknown
 * names) are ignored and listed in unsupported (comma-separated) for one
 * warning. 0, or -1 with err (alert_types not a list, alerting_args not a
 * mapping). */
int sy_slack_parse(const struct sy_logconf *lc, struct sy_slack_settings *s, char *unsupported, size_t ulen, char *err,
                   size_t errlen);

/* Install s as the running settings (what sy_alert and the sink's encode
 * read) and forget every de-duplication and outage window; NULL: alerting
 * off. */
void sy_slack_install(const struct sy_slack_settings *s);

/* sy_alert without the submit: 1 with out holding the Slack message
 * ({"text": ...}) when it is to be sent, 0 when alerting or the type is off
 * or the same (type, dedup_key) was sent within its window. now: unix seconds. */
int sy_slack_prepare(enum sy_alert_type t, const char *dedup_key, const char *msg, double now, struct sy_buf *out);

/* The alert type's LiteLLM name ("llm_exceptions", ...), NULL out of range. */
const char *sy_alert_type_name(enum sy_alert_type t);

extern const struct sy_sink_ops sy_sink_slack;

#endif
