/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "gb-error.h"

#include "transport/reply-budget.h"

static struct {
	guint64 budget;
	guint64 share;      /* each guest's */
	guint shares_left;  /* guests that have not taken theirs */
	guint shares_taken; /* held now */
	guint64 share_used; /* held now from shares */
	guint64 pool;       /* budget less every share */
	guint64 pool_used;
} cli_reply_budget = { .budget = CLI_REPLY_BUDGET_DEFAULT, .pool = CLI_REPLY_BUDGET_DEFAULT };

guint64 cli_reply_budget_get_used(void)
{
	return cli_reply_budget.share_used + cli_reply_budget.pool_used;
}

gboolean cli_reply_budget_set(guint64 budget, guint n_guests)
{
	g_return_val_if_fail(budget > 0, FALSE);
	if (cli_reply_budget.shares_taken > 0 || cli_reply_budget_get_used() > 0)
		return FALSE;
	cli_reply_budget.budget = budget;
	cli_reply_budget.share = n_guests > 0 ? budget / 2 / n_guests : 0;
	cli_reply_budget.shares_left = cli_reply_budget.share > 0 ? n_guests : 0;
	cli_reply_budget.pool = budget - cli_reply_budget.share * cli_reply_budget.shares_left;
	return TRUE;
}

guint64 cli_reply_budget_get(void)
{
	return cli_reply_budget.budget;
}

guint64 cli_reply_budget_get_share(void)
{
	return cli_reply_budget.share;
}

guint64 cli_reply_budget_cost(guint64 text_bytes, guint64 values)
{
	if (values > G_MAXUINT64 / CLI_REPLY_BYTES_PER_VALUE)
		return G_MAXUINT64;
	return MAX(text_bytes, values * CLI_REPLY_BYTES_PER_VALUE);
}

/* "8 MiB", "1 GiB", "1536 KiB", "1000 bytes": the largest binary unit that divides it. */
static char *cli_reply_budget_format(guint64 bytes)
{
	static const char *const units[] = { "GiB", "MiB", "KiB" };

	for (guint i = 0; i < G_N_ELEMENTS(units); i++) {
		guint64 unit = G_GUINT64_CONSTANT(1) << (10 * (G_N_ELEMENTS(units) - i));

		if (bytes >= unit && bytes % unit == 0)
			return g_strdup_printf("%" G_GUINT64_FORMAT " %s", bytes / unit, units[i]);
	}
	return g_strdup_printf("%" G_GUINT64_FORMAT " bytes", bytes);
}

/* Whether *hold could hold bytes in all (its share, what it has of the pool, and the rest). */
static gboolean cli_reply_budget_fits(const CliReplyHold *hold, guint64 bytes)
{
	gboolean slot = hold->slot || cli_reply_budget.shares_left > 0;
	guint64 share = slot ? MIN(bytes, cli_reply_budget.share) : 0;
	guint64 pool_left = cli_reply_budget.pool - cli_reply_budget.pool_used + hold->pool;

	return bytes - share <= pool_left;
}

/* Makes *hold hold bytes, which cli_reply_budget_fits() said it could. */
static void cli_reply_budget_hold(CliReplyHold *hold, guint64 bytes)
{
	guint64 share;

	if (!hold->slot && cli_reply_budget.shares_left > 0) {
		cli_reply_budget.shares_left--;
		cli_reply_budget.shares_taken++;
		/* the slot is taken even by an empty reply: one share per guest */
		hold->slot = TRUE;
	}
	share = hold->slot ? MIN(bytes, cli_reply_budget.share) : 0;
	cli_reply_budget.share_used = cli_reply_budget.share_used - hold->share + share;
	cli_reply_budget.pool_used = cli_reply_budget.pool_used - hold->pool + (bytes - share);
	hold->share = share;
	hold->pool = bytes - share;
}

static void cli_reply_budget_set_error(GError **error, const char *what)
{
	g_autofree char *budget = cli_reply_budget_format(cli_reply_budget.budget);

	g_set_error(error, GB_ERROR, GB_ERROR_TOO_LARGE,
	            "the fleet's reply budget of %s is used up: %s; run fewer guests at once or "
	            "raise --reply-budget",
	            budget, what);
}

/* KiB rounded up: a reply never reads as 0 KiB */
static guint64 cli_reply_budget_kib(guint64 bytes)
{
	return bytes / 1024 + (bytes % 1024 != 0);
}

/* Whether *hold could hold a kept reply of cost; the error names the reply when not. */
static gboolean cli_reply_budget_fits_reply(const CliReplyHold *hold, guint64 cost, GError **error)
{
	g_autofree char *what = NULL;

	if (cli_reply_budget_fits(hold, cost))
		return TRUE;
	what = g_strdup_printf("this guest's reply of %" G_GUINT64_FORMAT " KiB was not kept",
	                       cli_reply_budget_kib(cost));
	cli_reply_budget_set_error(error, what);
	return FALSE;
}

gboolean cli_reply_budget_check(guint64 cost, GError **error)
{
	const CliReplyHold none = { 0 };

	return cli_reply_budget_fits_reply(&none, cost, error);
}

gboolean cli_reply_budget_take(guint64 cost, CliReplyHold *hold, GError **error)
{
	g_return_val_if_fail(hold != NULL, FALSE);
	/* what *hold has already counts for it: a hold that grew becomes the reply's */
	if (!cli_reply_budget_fits_reply(hold, cost, error))
		return FALSE;
	cli_reply_budget_hold(hold, cost);
	return TRUE;
}

gboolean cli_reply_budget_grow(CliReplyHold *hold, guint64 bytes, const char *what, GError **error)
{
	guint64 step;

	g_return_val_if_fail(hold != NULL && what != NULL, FALSE);
	if (bytes <= hold->share + hold->pool)
		return TRUE;
	step = bytes > G_MAXUINT64 - CLI_REPLY_BUDGET_STEP
	           ? bytes
	           : (bytes + CLI_REPLY_BUDGET_STEP - 1) / CLI_REPLY_BUDGET_STEP *
	                 CLI_REPLY_BUDGET_STEP;
	if (cli_reply_budget_fits(hold, step)) {
		cli_reply_budget_hold(hold, step);
	} else if (cli_reply_budget_fits(hold, bytes)) {
		/* the last step of a reply that fits its share exactly, or the pool's last bytes */
		cli_reply_budget_hold(hold, bytes);
	} else {
		g_autofree char *text =
		    g_strdup_printf("%s was dropped at %" G_GUINT64_FORMAT " KiB", what,
		                    cli_reply_budget_kib(bytes));

		cli_reply_budget_set_error(error, text);
		return FALSE;
	}
	return TRUE;
}

void cli_reply_budget_release(CliReplyHold *hold)
{
	g_return_if_fail(hold != NULL);
	g_return_if_fail(hold->share <= cli_reply_budget.share_used &&
	                 hold->pool <= cli_reply_budget.pool_used);
	g_return_if_fail(!hold->slot || cli_reply_budget.shares_taken > 0);
	if (hold->slot) {
		cli_reply_budget.shares_taken--;
		cli_reply_budget.shares_left++;
	}
	cli_reply_budget.share_used -= hold->share;
	cli_reply_budget.pool_used -= hold->pool;
	*hold = (CliReplyHold){ 0 };
}
