/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * The fleet's reply budget: one count, for the whole process, of the guest
 * replies the CLI keeps until it renders them. Each reply's own limit
 * (reply-limit.h) bounds one guest; this bounds their sum, so that a fleet of
 * compromised guests each answering just within its limits cannot take the
 * CLI's memory.
 *
 * A kept reply costs its JSON text, and at least CLI_REPLY_BYTES_PER_VALUE
 * bytes per value (the rate of the per-reply values limit): a reply within its
 * limit never costs more than that limit, and since a parsed value takes about
 * 100 bytes, what is kept takes at most about 12 times the budget in memory,
 * 15 with the output document (measured with values of 8 bytes; real replies,
 * about 16 bytes a value, take half that). A reply the budget cannot hold is
 * not parsed either (the channel checks its bytes first).
 *
 * Half the budget is shared out in advance: each of the run's N guests is sure
 * of budget / 2N for its reply, whatever the others sent. The other half is a
 * pool, first come first served, for replies larger than their share. So a
 * fleet of 10,000 guests under the default budget keeps any reply up to
 * 52 KiB, and a few hostile guests can use up the pool but never the share
 * of an honest one.
 *
 * A reply still arriving is charged too, as its bytes come (cli_reply_budget_grow()):
 * its guest's share first, then the pool. A guest that sends a large reply
 * slowly, or never finishes it, holds no more of the CLI's memory than the
 * budget lets it; when the hold is given back at the end of the message, the
 * kept reply is charged in its place.
 *
 * The CLI runs one main loop: the count is not locked.
 */

/* A parsed reply may carry one value per this many bytes of its size limit. */
#define CLI_REPLY_BYTES_PER_VALUE 8

/* 1 GiB: 10,000 guests whose facts take 50 KiB come to 490 MiB. */
#define CLI_REPLY_BUDGET_DEFAULT (G_GUINT64_CONSTANT(1) << 30)
#define CLI_REPLY_BUDGET_MAX (G_GUINT64_CONSTANT(1) << 40)

/* A hold for bytes still arriving grows by this much at a time (the stream's read size). */
#define CLI_REPLY_BUDGET_STEP (64 * 1024)

/* What one kept reply holds of the budget: from its guest's share, and from the pool. */
typedef struct {
	gboolean slot; /* its guest's share was taken */
	guint64 share;
	guint64 pool;
} CliReplyHold;

/*
 * Sets the budget (bytes, at least 1) for a run of n_guests (0: no shares, all
 * pool). Only while nothing is held: a later pass of the same run shares what
 * is left (FALSE then, and nothing changes).
 */
gboolean cli_reply_budget_set(guint64 budget, guint n_guests);
guint64 cli_reply_budget_get(void);
/* What each guest is sure of. */
guint64 cli_reply_budget_get_share(void);
/* Bytes held now. */
guint64 cli_reply_budget_get_used(void);
/* What a reply of text_bytes with values values costs. */
guint64 cli_reply_budget_cost(guint64 text_bytes, guint64 values);
/*
 * Holds cost bytes for one guest's reply (at most once per guest: the first
 * hold of each takes its share), recorded in *hold (empty, or one that grew). Fails with
 * GB_ERROR_TOO_LARGE naming the budget and the reply ("the fleet's reply
 * budget of 8 MiB is used up: ...") when it fits neither the share nor what is
 * left of the pool; nothing is held then.
 */
gboolean cli_reply_budget_take(guint64 cost, CliReplyHold *hold, GError **error);
/*
 * Whether a reply of cost would be held now, with the same error as
 * cli_reply_budget_take(): checked before a reply is parsed (its tree is what
 * costs), for a guest that has not taken its share yet.
 */
gboolean cli_reply_budget_check(guint64 cost, GError **error);
/*
 * Grows *hold (one per guest, as for cli_reply_budget_take()) to at least
 * bytes of a message still arriving: to the next multiple of
 * CLI_REPLY_BUDGET_STEP when that fits, else exactly, so that a guest whose
 * reply fits its share is never refused. A hold never shrinks here. Fails with
 * GB_ERROR_TOO_LARGE naming the budget ("the fleet's reply budget of 8 MiB is
 * used up: WHAT was dropped at 1088 KiB; ...") when bytes fit neither the share
 * nor what is left of the pool; *hold is unchanged then.
 */
gboolean cli_reply_budget_grow(CliReplyHold *hold, guint64 bytes, const char *what, GError **error);
/* Gives back what *hold holds and clears it (a cleared hold gives back nothing). */
void cli_reply_budget_release(CliReplyHold *hold);

G_END_DECLS
