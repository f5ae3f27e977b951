/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "transport/reply-limit.h"

typedef struct {
	const char *execute;
	gsize limit;
} CliReplyLimit;

/*
 * Sizes as the agent writes them (the CLI's --format json of a real agent shows
 * them) with a wide margin; a command not listed gets the session's cap.
 */
static const CliReplyLimit cli_reply_limits[] = {
	/* {"return": {}} or {"return": ID}: tens of bytes */
	{ "guest-sync-delimited", CLI_REPLY_LIMIT_SMALL },
	{ "guest-sync", CLI_REPLY_LIMIT_SMALL },
	{ "guest-ping", CLI_REPLY_LIMIT_SMALL },
	/* {"job": N}, {} */
	{ "gb-bench-start", CLI_REPLY_LIMIT_SMALL },
	{ "gb-bench-cancel", CLI_REPLY_LIMIT_SMALL },
	/* one entry per supported command: about 6 KiB from qemu-ga's hundred commands */
	{ "guest-info", 64 * 1024 },
	/* the benchmarks and their parameters: about 2 KiB; the running jobs, a few each */
	{ "gb-bench-list", 64 * 1024 },
	/*
	 * Facts of the largest real guest. The cpu member does not grow with vCPUs
	 * (a count and the model's flags, about 1.5 KiB at 1,024 vCPUs as at 2);
	 * a disk is about 350 bytes, a NIC about 110 bytes. 1,024 vCPUs with 1,024
	 * disks and 1,024 NICs come to about 470 KiB; 1 MiB leaves twice that for
	 * long names and models, escaped characters and collector errors.
	 */
	{ "gb-get-facts", 1024 * 1024 },
	/*
	 * gb-bench-status carries the result at the end: the guest's facts (above)
	 * plus the samples asked for, which follow the run's parameters rather than
	 * the command (aes and disk: up to 100 runs x 16 sizes, about 40 KiB; net:
	 * about 50 bytes per second and direction, 8 MiB for a day): the bench
	 * command sets its limit from the job's parameters
	 * (cli_session_set_reply_limit()), the session's cap otherwise.
	 */
};

void cli_reply_limit_set(GHashTable **limits, const char *execute, gsize limit)
{
	if (*limits == NULL)
		*limits = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g_hash_table_insert(*limits, g_strdup(execute), g_memdup2(&limit, sizeof(limit)));
}

gsize cli_reply_limit_lookup(GHashTable *limits, const char *execute, gsize cap)
{
	const gsize *limit = limits != NULL ? g_hash_table_lookup(limits, execute) : NULL;

	if (limit != NULL)
		return MIN(*limit, cap);
	return cli_reply_limit(execute, cap);
}

gsize cli_reply_limit(const char *execute, gsize cap)
{
	for (gsize i = 0; i < G_N_ELEMENTS(cli_reply_limits); i++) {
		if (g_strcmp0(cli_reply_limits[i].execute, execute) == 0)
			return MIN(cli_reply_limits[i].limit, cap);
	}
	return cap;
}
