/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fleet's reply budget: shares, the pool, the error, giving back. */
#include "config.h"

#include "gb-error.h"

#include "transport/reply-budget.h"

#define KIB 1024
#define MIB (1024 * 1024)

static void test_cost(void)
{
	/* the text, or 8 bytes a value when the values are smaller */
	g_assert_cmpuint(cli_reply_budget_cost(1000, 10), ==, 1000);
	g_assert_cmpuint(cli_reply_budget_cost(1000, 500), ==, 4000);
	g_assert_cmpuint(cli_reply_budget_cost(0, G_MAXUINT64 / 4), ==, G_MAXUINT64);
}

/* Without guests (the default): the whole budget is the pool. */
static void test_pool_only(void)
{
	g_autoptr(GError) error = NULL;
	CliReplyHold a = { 0 };
	CliReplyHold b = { 0 };
	CliReplyHold c = { 0 };

	g_assert_true(cli_reply_budget_set(8 * MIB, 0));
	g_assert_cmpuint(cli_reply_budget_get(), ==, 8 * MIB);
	g_assert_cmpuint(cli_reply_budget_get_share(), ==, 0);
	g_assert_true(cli_reply_budget_take(5 * MIB, &a, &error));
	g_assert_no_error(error);
	g_assert_true(cli_reply_budget_take(3 * MIB, &b, &error));
	g_assert_cmpuint(cli_reply_budget_get_used(), ==, 8 * MIB);
	/* full: one byte more is refused, naming the budget and the reply */
	g_assert_false(cli_reply_budget_check(1, NULL));
	g_assert_false(cli_reply_budget_take(1500, &c, &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_TOO_LARGE);
	g_assert_cmpstr(error->message, ==,
	                "the fleet's reply budget of 8 MiB is used up: this guest's reply of 2 KiB "
	                "was not kept; run fewer guests at once or raise --reply-budget");
	g_assert_cmpuint(c.share + c.pool, ==, 0);
	/* the budget cannot change while replies are held */
	g_assert_false(cli_reply_budget_set(16 * MIB, 0));
	g_assert_cmpuint(cli_reply_budget_get(), ==, 8 * MIB);
	cli_reply_budget_release(&a);
	g_assert_cmpuint(a.share + a.pool, ==, 0);
	g_assert_cmpuint(cli_reply_budget_get_used(), ==, 3 * MIB);
	g_assert_true(cli_reply_budget_check(5 * MIB, NULL));
	g_assert_false(cli_reply_budget_check(5 * MIB + 1, NULL));
	cli_reply_budget_release(&b);
	/* a cleared hold gives back nothing */
	cli_reply_budget_release(&b);
	g_assert_cmpuint(cli_reply_budget_get_used(), ==, 0);
	g_assert_true(cli_reply_budget_set(16 * MIB, 0));
}

/* Each guest is sure of budget / 2N, however much the others took. */
static void test_shares(void)
{
	CliReplyHold holds[15] = { { 0 } };
	CliReplyHold late = { 0 };
	g_autoptr(GError) error = NULL;
	guint kept = 0;

	/* 10 guests, 10 MiB: 512 KiB each, and a pool of 5 MiB */
	g_assert_true(cli_reply_budget_set(10 * MIB, 10));
	g_assert_cmpuint(cli_reply_budget_get_share(), ==, 512 * KIB);
	/* 8 guests send 2 MiB: the pool takes 1.5 MiB of each, three fit */
	for (guint i = 0; i < 8; i++) {
		g_autoptr(GError) e = NULL;

		if (cli_reply_budget_take(2 * MIB, &holds[i], &e)) {
			g_assert_true(holds[i].slot);
			g_assert_cmpuint(holds[i].share, ==, 512 * KIB);
			g_assert_cmpuint(holds[i].pool, ==, 1536 * KIB);
			kept++;
		} else {
			g_assert_error(e, GB_ERROR, GB_ERROR_TOO_LARGE);
			g_assert_false(holds[i].slot);
		}
	}
	g_assert_cmpuint(kept, ==, 3);
	/* the other two still get a reply up to their share beyond what the pool has left */
	g_assert_false(cli_reply_budget_check(512 * KIB + 1024 * KIB, NULL));
	g_assert_true(cli_reply_budget_take(512 * KIB, &holds[8], &error));
	g_assert_true(cli_reply_budget_take(100, &holds[9], &error));
	g_assert_no_error(error);
	g_assert_cmpuint(holds[9].share, ==, 100);
	g_assert_cmpuint(holds[9].pool, ==, 0);
	/* never more than the budget */
	g_assert_cmpuint(cli_reply_budget_get_used(), <=, 10 * MIB);
	/* the five refused guests never took their shares: a reply of a later pass does */
	for (guint i = 10; i < 15; i++) {
		g_assert_true(cli_reply_budget_take(8, &holds[i], &error));
		g_assert_true(holds[i].slot);
	}
	/* every share taken: a later pass has only what is left of the pool, 512 KiB */
	g_assert_false(cli_reply_budget_take(600 * KIB, &late, &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_TOO_LARGE);
	g_clear_error(&error);
	g_assert_true(cli_reply_budget_take(512 * KIB, &late, &error));
	g_assert_false(late.slot);
	g_assert_cmpuint(late.pool, ==, 512 * KIB);
	cli_reply_budget_release(&late);
	for (guint i = 0; i < G_N_ELEMENTS(holds); i++)
		cli_reply_budget_release(&holds[i]);
	g_assert_cmpuint(cli_reply_budget_get_used(), ==, 0);
	/* everything given back: a new run may set it again */
	g_assert_true(cli_reply_budget_set(CLI_REPLY_BUDGET_DEFAULT, 10000));
	/* 10,000 guests under the default: 52 KiB each, whatever the others send */
	g_assert_cmpuint(cli_reply_budget_get_share(), ==, (1u << 30) / 2 / 10000);
	g_assert_cmpuint(cli_reply_budget_get_share(), >, 52 * KIB);
}

/* A message still arriving: held in steps of 64 KiB, exactly at the end of what is left. */
static void test_in_flight_grow(void)
{
	g_autoptr(GError) error = NULL;
	CliReplyHold hold = { 0 };
	CliReplyHold kept = { 0 };

	g_assert_true(cli_reply_budget_set(8 * MIB, 0));
	g_assert_true(cli_reply_budget_grow(&hold, 1, "this guest's reply", &error));
	g_assert_cmpuint(hold.pool, ==, 64 * KIB);
	g_assert_true(cli_reply_budget_grow(&hold, 100 * KIB, "this guest's reply", &error));
	g_assert_cmpuint(hold.pool, ==, 128 * KIB);
	/* never shrinks, and a read within what is held costs nothing more */
	g_assert_true(cli_reply_budget_grow(&hold, 64 * KIB, "this guest's reply", &error));
	g_assert_true(cli_reply_budget_grow(&hold, 128 * KIB, "this guest's reply", &error));
	g_assert_cmpuint(cli_reply_budget_get_used(), ==, 128 * KIB);
	/* 10 KiB left beside it: the next step does not fit, the exact bytes do */
	g_assert_true(cli_reply_budget_take(8 * MIB - 138 * KIB, &kept, &error));
	g_assert_true(cli_reply_budget_grow(&hold, 130 * KIB, "this guest's reply", &error));
	g_assert_no_error(error);
	g_assert_cmpuint(hold.pool, ==, 130 * KIB);
	/* then nothing is left: refused, naming the budget and how far the reply came */
	g_assert_false(cli_reply_budget_grow(&hold, 139 * KIB - 100, "this guest's reply", &error));
	g_assert_error(error, GB_ERROR, GB_ERROR_TOO_LARGE);
	g_assert_cmpstr(
	    error->message, ==,
	    "the fleet's reply budget of 8 MiB is used up: this guest's reply was dropped "
	    "at 139 KiB; run fewer guests at once or raise --reply-budget");
	g_assert_cmpuint(hold.pool, ==, 130 * KIB);
	g_assert_cmpuint(cli_reply_budget_get_used(), ==, 8 * MIB - 8 * KIB);
	/* failed: the caller gives it all back */
	cli_reply_budget_release(&hold);
	cli_reply_budget_release(&kept);
	g_assert_cmpuint(cli_reply_budget_get_used(), ==, 0);
}

/* The whole message: its hold goes back before the kept reply is charged, never twice. */
static void test_in_flight_to_kept(void)
{
	g_autoptr(GError) error = NULL;
	CliReplyHold honest = { 0 };
	CliReplyHold hostile = { 0 };
	CliReplyHold kept = { 0 };

	/* 4 guests, 1 MiB: 128 KiB each, a pool of 512 KiB */
	g_assert_true(cli_reply_budget_set(MIB, 4));
	g_assert_true(cli_reply_budget_grow(&honest, 100 * KIB, "this guest's reply", &error));
	g_assert_true(honest.slot);
	g_assert_cmpuint(honest.share, ==, 128 * KIB);
	g_assert_cmpuint(honest.pool, ==, 0);
	/* another guest takes its share and the whole pool */
	g_assert_true(cli_reply_budget_grow(&hostile, 640 * KIB, "this guest's reply", &error));
	g_assert_cmpuint(hostile.pool, ==, 512 * KIB);
	g_assert_false(cli_reply_budget_grow(&hostile, 640 * KIB + 1, "this guest's reply", NULL));
	/* the honest reply completes at 120 KiB: kept in its share, once */
	cli_reply_budget_release(&honest);
	g_assert_true(cli_reply_budget_check(120 * KIB, &error));
	g_assert_true(cli_reply_budget_take(120 * KIB, &kept, &error));
	g_assert_no_error(error);
	g_assert_true(kept.slot);
	g_assert_cmpuint(cli_reply_budget_get_used(), ==, 640 * KIB + 120 * KIB);
	/* a failed message gives back its share and its pool */
	cli_reply_budget_release(&hostile);
	g_assert_cmpuint(cli_reply_budget_get_used(), ==, 120 * KIB);
	cli_reply_budget_release(&kept);
	g_assert_cmpuint(cli_reply_budget_get_used(), ==, 0);
}

/*
 * Whatever the other guests hold in flight, a guest whose reply fits its share
 * receives it and keeps it: 11 guests drip without end, the twelfth sends a
 * reply of exactly its share (not a multiple of the step).
 */
static void test_in_flight_share(void)
{
	CliReplyHold hostile[11] = { { 0 } };
	CliReplyHold honest = { 0 };
	CliReplyHold kept = { 0 };
	g_autoptr(GError) error = NULL;
	guint64 share;
	guint refused = 0;

	g_assert_true(cli_reply_budget_set(10 * MIB, 12));
	share = cli_reply_budget_get_share();
	g_assert_cmpuint(share % CLI_REPLY_BUDGET_STEP, !=, 0);
	for (guint64 bytes = 16 * KIB; bytes <= MIB; bytes += 16 * KIB) {
		for (guint i = 0; i < G_N_ELEMENTS(hostile); i++) {
			if (hostile[i].slot &&
			    !cli_reply_budget_grow(&hostile[i], bytes, "this guest's reply", NULL))
				refused++;
			else if (!hostile[i].slot)
				g_assert_true(cli_reply_budget_grow(&hostile[i], bytes,
				                                    "this guest's reply", NULL));
		}
		g_assert_true(cli_reply_budget_grow(&honest, MIN(bytes, share),
		                                    "this guest's reply", &error));
		g_assert_no_error(error);
		g_assert_cmpuint(cli_reply_budget_get_used(), <=, 10 * MIB);
	}
	g_assert_cmpuint(refused, >, 0);
	/* its share whole (and a step of the pool, if that was free when it grew) */
	g_assert_cmpuint(honest.share, ==, share);
	cli_reply_budget_release(&honest);
	g_assert_true(cli_reply_budget_take(share, &kept, &error));
	g_assert_no_error(error);
	for (guint i = 0; i < G_N_ELEMENTS(hostile); i++)
		cli_reply_budget_release(&hostile[i]);
	cli_reply_budget_release(&kept);
	g_assert_cmpuint(cli_reply_budget_get_used(), ==, 0);
}

/* The budget's unit in the message: the largest that divides it. */
static void test_message_units(void)
{
	const struct {
		guint64 budget;
		const char *text;
	} cases[] = {
		{ 1u << 30, "1 GiB" },
		{ 1536 * KIB, "1536 KiB" },
		{ 4096, "4 KiB" },
		{ 1000, "1000 bytes" },
		{ G_GUINT64_CONSTANT(1) << 40, "1024 GiB" },
	};

	for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
		g_autoptr(GError) error = NULL;
		g_autofree char *want =
		    g_strdup_printf("the fleet's reply budget of %s is used up: "
		                    "this guest's reply of 1 KiB was not kept;",
		                    cases[i].text);
		CliReplyHold hold = { 0 };

		g_assert_true(cli_reply_budget_set(cases[i].budget, 0));
		g_assert_true(cli_reply_budget_take(cases[i].budget, &hold, NULL));
		g_assert_false(cli_reply_budget_check(1, &error));
		g_assert_true(g_str_has_prefix(error->message, want));
		cli_reply_budget_release(&hold);
	}
}

int main(int argc, char **argv)
{
	g_test_init(&argc, &argv, NULL);
	g_test_add_func("/reply-budget/cost", test_cost);
	g_test_add_func("/reply-budget/pool-only", test_pool_only);
	g_test_add_func("/reply-budget/shares", test_shares);
	g_test_add_func("/reply-budget/message-units", test_message_units);
	g_test_add_func("/reply-budget/in-flight-grow", test_in_flight_grow);
	g_test_add_func("/reply-budget/in-flight-to-kept", test_in_flight_to_kept);
	g_test_add_func("/reply-budget/in-flight-share", test_in_flight_share);
	return g_test_run();
}
