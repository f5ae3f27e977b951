/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>
#include <unistd.h>

#include "util.h"

#define STAT_PATH "/proc/stat"

/* user nice system idle iowait irq softirq steal: guest time is already in user/nice. */
#define STEAL_FIELDS 8

typedef struct {
	guint64 steal;
	guint64 idle; /* idle + iowait: the CPU had nothing to run */
	guint64 total;
} StealSample;

/* The "cpu" total: the first line of text, which may end there. */
static gboolean steal_parse(const char *text, StealSample *sample, GError **error)
{
	g_auto(GStrv) lines = g_strsplit(text, "\n", 2);

	if (lines[0] == NULL || !g_str_has_prefix(lines[0], "cpu ")) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
		                    STAT_PATH ": first line is not the 'cpu' total");
		return FALSE;
	}
	{
		g_auto(GStrv) words = g_strsplit_set(lines[0] + 4, " \t", -1);
		guint n = 0;

		sample->steal = 0;
		sample->idle = 0;
		sample->total = 0;
		for (guint i = 0; words[i] != NULL && n < STEAL_FIELDS; i++) {
			gint64 val = 0;
			if (words[i][0] == '\0')
				continue;
			/* Bounded so that the sum of 8 fields cannot overflow. */
			if (!agent_facts_parse_int(words[i], 0, G_MAXINT64 / 16, &val, error)) {
				g_prefix_error(error, STAT_PATH ": cpu field %u: ", n + 1);
				return FALSE;
			}
			sample->total += (guint64)val;
			if (n == STEAL_FIELDS - 1)
				sample->steal = (guint64)val;
			if (n == 3 || n == 4)
				sample->idle += (guint64)val;
			n++;
		}
		if (n < STEAL_FIELDS) {
			g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
			            STAT_PATH ": 'cpu' line has %u fields, steal is field %u", n,
			            (guint)STEAL_FIELDS);
			return FALSE;
		}
	}
	return TRUE;
}

static gboolean steal_read(AgentFactsContext *ctx, StealSample *sample, GError **error)
{
	g_autofree char *text = agent_facts_read_text(ctx->sysroot, STAT_PATH, error);

	return text != NULL && steal_parse(text, sample, error);
}

/*
 * The absolute samples of this process, for steal_since_previous: the newest
 * one kept (1) and the one before it (0), at least the window apart. A sample
 * replaces the newest only once that is a whole window old, so requests that
 * come faster than the window (a fleet audit right after facts) still find a
 * sample a whole window old, and none of them has to sleep.
 */
typedef struct {
	StealSample sample;
	gint64 us; /* 0 = empty */
} StealSlot;

static GMutex steal_prev_lock;
static StealSlot steal_slots[2];
static char *steal_prev_root;

static void steal_remember(const char *sysroot, const StealSample *sample, gint64 now_us,
                           gint64 window_us)
{
	g_mutex_lock(&steal_prev_lock);
	if (g_strcmp0(steal_prev_root, sysroot) != 0) {
		g_free(steal_prev_root);
		steal_prev_root = g_strdup(sysroot);
		memset(steal_slots, 0, sizeof(steal_slots));
	}
	if (steal_slots[1].us == 0 || now_us - steal_slots[1].us >= window_us) {
		steal_slots[0] = steal_slots[1];
		steal_slots[1].sample = *sample;
		steal_slots[1].us = now_us;
	}
	g_mutex_unlock(&steal_prev_lock);
}

/* The newest kept sample of the same root that is at least min_age_us old. */
static gboolean steal_previous(const char *sysroot, gint64 now_us, gint64 min_age_us,
                               StealSample *out, gint64 *age_us)
{
	gboolean found = FALSE;

	g_mutex_lock(&steal_prev_lock);
	if (g_strcmp0(steal_prev_root, sysroot) == 0) {
		for (int i = 1; i >= 0 && !found; i--) {
			if (steal_slots[i].us > 0 && now_us - steal_slots[i].us >= min_age_us) {
				*out = steal_slots[i].sample;
				*age_us = now_us - steal_slots[i].us;
				found = TRUE;
			}
		}
	}
	g_mutex_unlock(&steal_prev_lock);
	return found;
}

void agent_facts_steal_prime(const char *sysroot)
{
	AgentFactsContext ctx = { .sysroot = sysroot };
	StealSample sample = { 0 };

	if (steal_read(&ctx, &sample, NULL))
		steal_remember(sysroot, &sample, g_get_monotonic_time(), 0);
}

gboolean agent_facts_steal_prime_line(const char *sysroot, const char *line, gint64 taken_us,
                                      GError **error)
{
	StealSample sample = { 0 };

	if (taken_us <= 0 || taken_us > g_get_monotonic_time()) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "steal sample time %" G_GINT64_FORMAT " is not in the past", taken_us);
		return FALSE;
	}
	if (!steal_parse(line, &sample, error))
		return FALSE;
	steal_remember(sysroot, &sample, taken_us, 0);
	return TRUE;
}

JsonNode *agent_facts_collect_steal(AgentFactsContext *ctx)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(GError) error_local = NULL;
	StealSample first = { 0 };
	StealSample second = { 0 };
	gboolean ok;
	double percent = -1;
	long hz = sysconf(_SC_CLK_TCK);

	gint64 window_ms = ctx->steal_window_ms;
	gint64 age_us = 0;
	gboolean from_previous = FALSE;

	if (ctx->steal_since_previous && ctx->steal_window_ms > 0)
		from_previous =
		    steal_previous(ctx->sysroot, g_get_monotonic_time(),
		                   (gint64)ctx->steal_window_ms * 1000, &first, &age_us);
	ok = from_previous || steal_read(ctx, &first, &error_local);
	second = first;
	if (ok && ctx->steal_window_ms > 0) {
		if (from_previous)
			window_ms = age_us / 1000;
		else
			g_usleep((gulong)ctx->steal_window_ms * 1000);
		ok = steal_read(ctx, &second, &error_local);
		if (ok)
			steal_remember(ctx->sysroot, &second, g_get_monotonic_time(),
			               (gint64)ctx->steal_window_ms * 1000);
		if (ok && (second.steal < first.steal || second.total < first.total)) {
			g_set_error_literal(&error_local, GB_ERROR, GB_ERROR_PARSE,
			                    STAT_PATH ": counters went backwards");
			ok = FALSE;
		}
		if (ok) {
			second.steal -= first.steal;
			second.total -= first.total;
			if (second.total > 0) {
				percent = 100.0 * (double)second.steal / (double)second.total;
			} else {
				agent_facts_add_error(ctx, "steal.percent",
				                      STAT_PATH ": no CPU ticks elapsed in the "
				                                "window");
			}
		}
	}

	json_builder_begin_object(builder);
	json_builder_set_member_name(builder, "percent");
	if (percent >= 0)
		json_builder_add_double_value(builder, percent);
	else
		json_builder_add_null_value(builder);
	json_builder_set_member_name(builder, "window_ms");
	json_builder_add_int_value(builder, window_ms);
	json_builder_set_member_name(builder, "steal_ticks");
	if (ok)
		json_builder_add_int_value(builder, (gint64)second.steal);
	else
		json_builder_add_null_value(builder);
	json_builder_set_member_name(builder, "total_ticks");
	if (ok)
		json_builder_add_int_value(builder, (gint64)second.total);
	else
		json_builder_add_null_value(builder);
	json_builder_set_member_name(builder, "user_hz");
	if (hz > 0)
		json_builder_add_int_value(builder, hz);
	else
		json_builder_add_null_value(builder);
	json_builder_end_object(builder);
	if (!ok)
		agent_facts_add_error(ctx, "steal", error_local->message);
	return json_builder_get_root(builder);
}

gboolean agent_facts_cpu_load(const char *sysroot, guint window_ms, gint *cancel,
                              double *busy_percent, double *steal_percent, GError **error)
{
	AgentFactsContext ctx = { .sysroot = sysroot };
	StealSample first = { 0 };
	StealSample second = { 0 };
	guint64 total;

	if (!steal_read(&ctx, &first, error))
		return FALSE;
	if (!agent_facts_wait_window(window_ms, cancel, error))
		return FALSE;
	if (!steal_read(&ctx, &second, error))
		return FALSE;
	if (second.steal < first.steal || second.idle < first.idle || second.total < first.total) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
		                    STAT_PATH ": counters went backwards");
		return FALSE;
	}
	total = second.total - first.total;
	if (total == 0) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_PARSE,
		                    STAT_PATH ": no CPU ticks elapsed in the window");
		return FALSE;
	}
	/* busy is what ran, steal included: time the guest wanted a CPU and had none idle */
	*busy_percent =
	    100.0 * (double)(total - MIN(second.idle - first.idle, total)) / (double)total;
	*steal_percent = 100.0 * (double)(second.steal - first.steal) / (double)total;
	return TRUE;
}
