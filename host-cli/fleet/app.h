/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "fleet/target.h"
#include "render/output.h"
#include "render/results.h"
#include "render/table.h"
#include "transport/lock.h"
#include "transport/reply-budget.h"
#include "transport/session.h"

G_BEGIN_DECLS

/*
 * The host CLI's internal API: how a command plugs in.
 *
 * A command is one file in commands/ (cmd-NAME.c) that defines its
 * CliCommand, listed in the table in commands/commands.c. The runner
 * connects to every target (at most --jobs at once, all on one GMainContext),
 * opens the session (0xFF + guest-sync-delimited, discarding stale bytes) and
 * then calls the command's start() with the open session. From there the
 * command issues calls and, exactly once, finishes the guest. After
 * cli_guest_finish() no callback of that guest fires again: its session is
 * closed, its pending calls dropped and its timers removed.
 *
 * One call, one result (the shape of a facts command; a real one checks ret
 * first, see below):
 *
 *	static void
 *	cli_facts_reply_cb(CliSession *session, JsonNode *ret, const GError *error,
 *			   gpointer user_data)
 *	{
 *		CliGuest *guest = user_data;
 *		if (error != NULL) {
 *			cli_guest_finish(guest, NULL, error);
 *			return;
 *		}
 *		cli_guest_finish(guest, json_node_copy(ret), NULL);
 *	}
 *
 *	static void
 *	cli_facts_start(CliGuest *guest, CliSession *session)
 *	{
 *		cli_session_call(session, "gb-get-facts", NULL, cli_facts_reply_cb, guest);
 *	}
 *
 *	const CliCommand cli_cmd_facts = {
 *		.name = "facts", .parameter_string = "facts TARGET...", .summary = "...",
 *		.start = cli_facts_start, .describe = cli_facts_describe,
 *	};
 *
 * Results that came from the guest are validated with the gb_json_* accessors
 * before anything reads them; on a bad reply finish with an error that says
 * what was wrong ("invalid gb-get-facts reply: ...").
 *
 * Multi-step flows (a benchmark job): start() sends gb-bench-start; its reply
 * callback keeps the job id with cli_guest_set_data() and arms a poll timer
 * with cli_guest_add_timeout(guest, 500, poll_cb, guest). poll_cb sends
 * gb-bench-status and returns G_SOURCE_REMOVE; the status callback calls
 * cli_guest_set_progress(guest, progress, "aes 40%") (drawn as a live line on
 * a TTY), cli_guest_set_deadline(guest, timeout) so that --timeout bounds
 * each step, and either re-arms the poll timer or
 * finishes the guest with the result. Calls on one session are sent one at a
 * time in the order issued, so a poll never overtakes a start. Pass the guest
 * as user_data: it outlives every callback (guests live until the app goes).
 * The whole job is bounded by cli_guest_set_job_bound(), from what it asked for,
 * so that a guest that keeps answering "running" cannot hold the run.
 *
 * Ctrl-C (SIGINT) and SIGTERM cancel app->cancellable. Guests not started yet
 * end as "error: not started (interrupted)". A running guest whose command has
 * cancel() and whose session is open gets cancel(guest, session) once and a
 * grace of at most CLI_CANCEL_GRACE_SECONDS to finish (e.g. send
 * gb-bench-cancel, then finish with an error "cancelled"); every other running
 * guest, or one that outlives the grace, ends as "error: interrupted"; during
 * the grace cli_guest_set_deadline() cannot extend it. What
 * finished is still printed; the exit status is then 128 + the signal number
 * (130 for SIGINT, 143 for SIGTERM), so a script can tell an interrupted run
 * from a failed guest (3). --deadline cancels running guests the same way, and
 * each ends as "timed out: overall deadline ... (WHAT CANCEL ENDED WITH)".
 *
 * Rendering: --format json always prints the contract document built from
 * each guest's result node, so a command only decides what it passes to
 * cli_guest_finish(). For the table, a command either gives describe() (one
 * line per guest in the DETAIL column of the default GUEST/STATUS/DETAIL
 * table) or render_table() to build its own CliTable (see render/table.h;
 * cli_table_* escapes guest text and aligns columns). Commands that do not
 * talk to guests (help, later discover/compare) set run() instead of start().
 */

/* How long a cancel() handler may take after Ctrl-C before its guest is dropped. */
#define CLI_CANCEL_GRACE_SECONDS 2.0
/* The cap over each reply's own limit (transport/reply-limit.h): only a bench result may use it. */
#define CLI_MAX_REPLY_SIZE (16 * 1024 * 1024)

#define CLI_DEFAULT_JOBS 64
#define CLI_MAX_JOBS 10000
#define CLI_DEFAULT_TIMEOUT 10.0
#define CLI_MAX_TIMEOUT (7 * 24 * 3600.0)

/* Exit statuses (a public contract: guestbench(1) and HACKING.md list them). */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FINDING 1 /* a FAIL-level finding (audit) and every guest answered */
#define CLI_EXIT_USAGE 2   /* bad command line, or the output file cannot be written */
#define CLI_EXIT_GUEST 3   /* one or more guests unreachable, erroring or timed out */
#define CLI_EXIT_BUSY 4 /* one or more guests busy (another guestbench holds them), none failed */

/* Options common to all commands, accepted before or after the command name. */
typedef struct {
	CliFormat format;
	gboolean format_given; /* --format was on the command line */
	char *output;          /* -o FILE, NULL for stdout */
	guint jobs;
	guint64 reply_budget; /* --reply-budget SIZE: the guests' replies kept (reply-budget.h) */
	double timeout;       /* seconds, per guest */
	gboolean quiet;       /* -q: no progress, nothing on stderr but errors */
	gboolean failed_only; /* --failed-only: the output lists only guests that are not ok */
	CliColor color;
	gboolean version;
	gboolean verbose;
	gboolean help;
	/* the fleet: how targets are found and selected (see CliTargetOptions in target.h) */
	char *libvirt_dir;  /* --libvirt-dir DIR */
	char **connect;     /* --connect URI (repeatable), NULL when none */
	char **inventories; /* --inventory FILE (repeatable), NULL when none */
	char **tags;        /* --tag TAG (repeatable), NULL when none */
	char **names;       /* --name GLOB (repeatable), NULL when none */
	double deadline;    /* --deadline SECONDS for the whole run, 0 for none */
	char *qmp;          /* --qmp PATH: the monitor of the single target (hostview.h) */
	char *host_sysroot; /* --host-sysroot DIR: where host files are read, NULL for / */
	char *qga_agent;    /* --qga-agent PATH: the agent binary in qga: guests (qga.h) */
	char **hosts;       /* --hosts HOST[,HOST...]: run on these hypervisors (remote.h) */
	guint host_jobs;    /* --host-jobs N: hypervisors contacted at once, 0 when not given */
	double
	    wait_busy; /* --wait-busy SECONDS: wait for a guest another process holds, 0: don't */
} CliOptions;

/*
 * How the runner spreads the guests over time (a benchmark's, set by its prepare()):
 * guests that share a hypervisor (cli_target_get_hypervisor()) compete for its
 * cores, memory bandwidth and disks, so at most per_host of them run at once;
 * hypervisors run in parallel. Without it (per_host 0) only --jobs limits.
 */
typedef struct {
	guint per_host;      /* guests of one hypervisor at once, 0: no limit but --jobs */
	double job_seconds;  /* how long one guest takes, for the estimate; 0: none printed */
	double then_seconds; /* a later pass (bench --contention) adds this to the estimate */
	const char *pass;    /* what this pass is, in the estimate ("solo"), or NULL */
} CliSchedule;

typedef enum {
	CLI_ACTION_RUN,
	CLI_ACTION_HELP,    /* print app->help_text to stdout, exit 0 */
	CLI_ACTION_VERSION, /* print the version, exit 0 */
} CliAction;

typedef struct _CliApp CliApp;
typedef struct _CliGuest CliGuest;
typedef struct _CliCommand CliCommand;

/*
 * The common options a command takes besides those every command takes
 * (--format, -o, -q, --color, -v, -V, -h): its --help shows only these, and
 * the others are refused as not applying to it.
 */
typedef enum {
	/* finding and contacting guests: --jobs, --timeout, --deadline, --inventory, --tag,
	   --name, --libvirt-dir, --qga-agent */
	CLI_OPTIONS_TARGETS = 1 << 0,
	CLI_OPTIONS_HOSTS = 1 << 1,   /* --hosts, --host-jobs: run on other hypervisors */
	CLI_OPTIONS_QMP = 1 << 2,     /* --qmp: the host view of one guest */
	CLI_OPTIONS_SYSROOT = 1 << 3, /* --host-sysroot */
	CLI_OPTIONS_LIBVIRT = 1 << 4, /* --connect, --libvirt-dir alone (discover) */
	CLI_OPTIONS_NONE = 1 << 5,    /* only those every command takes */
} CliCommonOptions;

/* What bash completion offers for an option's value or an operand. */
typedef enum {
	CLI_COMPLETE_NONE,
	CLI_COMPLETE_WORD,    /* one of words */
	CLI_COMPLETE_LIST,    /* a comma list of words */
	CLI_COMPLETE_FILE,    /* a path */
	CLI_COMPLETE_TARGET,  /* unix:, vsock:, qga:, libvirt:, @FILE or a socket path */
	CLI_COMPLETE_RUN,     /* a saved run's id (or a path) */
	CLI_COMPLETE_COMMAND, /* a command name */
	CLI_COMPLETE_FORMAT,  /* one of the formats the command writes */
	CLI_COMPLETE_DOMAIN,  /* a libvirt domain of --libvirt-dir */
} CliCompleteKind;

typedef struct {
	/* the long option without "--"; NULL for the next operand (the last one repeats) */
	const char *option;
	CliCompleteKind kind;
	const char *const *words; /* NULL-terminated, for WORD and LIST */
} CliCompletion;

struct _CliCommand {
	const char *name;
	const char *parameter_string; /* shown after the options in --help, e.g. "TARGET..." */
	const char *summary;          /* one line, for "guestbench --help" */
	const char *description;      /* optional, shown at the end of "guestbench CMD --help" */
	/*
	 * Command-specific options, NULL-terminated or NULL: arg_data points into
	 * the command's file, or G_OPTION_ARG_CALLBACK gets the CliApp as data.
	 */
	const GOptionEntry *entries;
	/*
	 * Optional: checks the command's options and may take leading positional
	 * arguments out of args (e.g. "bench aes") before the rest become targets.
	 * Fail with GB_ERROR_INVALID_ARGUMENT: it is reported as a usage error.
	 */
	gboolean (*prepare)(CliApp *app, GPtrArray *args, GError **error);
	/* Per guest, once its session is open. Must lead to cli_guest_finish(). */
	void (*start)(CliGuest *guest, CliSession *session);
	/* Optional: Ctrl-C while this guest runs (see above). */
	void (*cancel)(CliGuest *guest, CliSession *session);
	/*
	 * The renderers take the run's results (render/results.h), never the app, so
	 * that merge and --hosts can render another host's guests with them.
	 * Optional: the DETAIL cell of an ok guest in the default table (escaped for you).
	 */
	char *(*describe)(const CliResult *guest);
	/* Optional: replaces the default table. */
	CliTable *(*render_table)(const CliResults *results);
	/*
	 * Optional: replaces the table with free text (facts blocks, audit lines);
	 * color says whether ANSI colours may be used. Guest text must be escaped.
	 */
	GString *(*render_text)(const CliResults *results, gboolean color);
	/*
	 * Optional machine formats. A command without the hook refuses that
	 * --format as a usage error before any guest is contacted; json is always
	 * available (the contract document).
	 */
	GString *(*render_csv)(const CliResults *results);
	GString *(*render_prom)(const CliResults *results);
	GString *(*render_html)(const CliResults *results);
	/*
	 * A command with run() that writes its own document says here which
	 * formats it takes (CLI_FORMAT_BIT(CLI_FORMAT_CSV) | ...); 0 for the
	 * formats that follow from the hooks above.
	 */
	guint formats;
	/* The format without --format (0: table). */
	CliFormat default_format;
	/*
	 * The common options it takes (CliCommonOptions); 0: CLI_OPTIONS_TARGETS |
	 * CLI_OPTIONS_HOSTS for a command with start(), CLI_OPTIONS_NONE for one with run().
	 */
	guint common_options;
	/*
	 * For bash completion, {NULL}-terminated or NULL: option values beyond what
	 * the option says of itself (a filename option completes paths), and the
	 * operands in order. Without operand rows a command with start() takes targets.
	 */
	const CliCompletion *completions;
	/* Instead of start(): a command that does not talk to guests. Returns the exit status. */
	int (*run)(CliApp *app, GError **error);
	/* Optional: once every guest is done, before the output is written (bench saves its run).
	 */
	void (*finished)(CliApp *app);
};

/* Looks a command up by name (commands/commands.c has the table); NULL when unknown. */
typedef const CliCommand *(*CliCommandFindFunc)(const char *name);

struct _CliApp {
	CliOptions opts;
	CliAction action;
	char *help_text;
	char **argv; /* the command line as given, for --hosts (remote.h) */
	const CliCommand *command;
	GPtrArray *args;    /* positional arguments after the command (char *) */
	GPtrArray *targets; /* CliTarget, in command-line order */
	GPtrArray *guests;  /* CliGuest, same order as targets */
	GMainContext *context;
	GCancellable *cancellable;
	int signal_received; /* SIGINT/SIGTERM that interrupted the run, or 0 */
	gboolean fail_finding;
	gboolean stdout_is_tty;
	gboolean stderr_is_tty;
	CliSchedule schedule;
	/* runner bookkeeping */
	guint n_started;
	guint n_running;
	guint n_done;
	gint64 progress_drawn_us;
	gboolean progress_visible;
	CliLockDir *lock_dir; /* where guests are locked while the runner runs (transport/lock.h) */
	GError *lock_dir_error; /* why there is none: every guest fails with it */
};

struct _CliGuest {
	CliApp *app;
	const CliTarget *target; /* borrowed from app->targets */
	guint index;
	CliGuestStatus status;
	char *error; /* NULL when ok */
	JsonNode *result;
	CliReplyHold result_hold; /* what result holds of the fleet's reply budget */
	CliSession *session;
	GSource *deadline;
	double deadline_seconds; /* what the deadline was armed with, for the message */
	GPtrArray *timers;       /* GSource, removed when the guest finishes */
	gint64 started_us;
	gint64 finished_us;
	double progress;
	char *progress_text;
	gboolean cancelling;
	GError *cancel_reason; /* why the runner cancels (--deadline): the guest ends with it */
	gpointer data;
	GDestroyNotify data_destroy;
	CliLock *lock;        /* held from before the connect until the guest finishes */
	gint64 busy_until_us; /* --wait-busy: when to stop waiting for the lock */
	char *busy_holder;    /* while waiting: who holds it (cli_lock_holder_describe()) */
};

/* One guest per target, all pending; done by the runner, public for tests. */
void cli_app_add_guests(CliApp *app);
/* What every guest produced so far, for the renderers (--failed-only is applied at output). */
CliResults *cli_app_get_results(CliApp *app);
/* The formats the command can write (table and json always, unless it says). */
guint cli_command_get_formats(const CliCommand *command);
/* The common options the command takes (CliCommonOptions, 0 resolved). */
guint cli_command_get_common_options(const CliCommand *command);
/* results as command renders them in format (one the command can write). */
GString *cli_command_render(const CliCommand *command, const CliResults *results, CliFormat format,
                            gboolean color);
/* Whether table output gets colour (--color, -o, whether stdout is a TTY). */
gboolean cli_app_use_color(CliApp *app);
/* The --qga-agent option (data: the CliApp): the agent binary's path in qga: guests. */
gboolean cli_option_qga_agent_cb(const char *option_name, const char *value, gpointer data,
                                 GError **error);
/* Writes doc to -o FILE (atomically) or stdout. */
gboolean cli_app_write_doc(CliApp *app, const GString *doc, GError **error);
/* Renders the guests' results (only those not ok with --failed-only) and writes them. */
gboolean cli_app_write_output(CliApp *app, GError **error);

CliGuest *cli_guest_new(CliApp *app, const CliTarget *target, guint index);
void cli_guest_free(CliGuest *guest);
/*
 * Ends the guest: result (transfer full, may be NULL) when error is NULL;
 * status timeout for GB_ERROR_TIMEOUT, error otherwise (the error's message is
 * kept). Later calls for the same guest are ignored.
 */
void cli_guest_finish(CliGuest *guest, JsonNode *result, const GError *error);
gboolean cli_guest_is_done(const CliGuest *guest);
/* Ends the guest as busy (a socket another client holds): exit status 4, not 3. */
void cli_guest_finish_busy(CliGuest *guest, const GError *error);
/* Per-guest state of the command, freed when the guest finishes. */
void cli_guest_set_data(CliGuest *guest, gpointer data, GDestroyNotify destroy);
gpointer cli_guest_get_data(CliGuest *guest);
/* A timer on the app's context that is removed when the guest finishes. */
void cli_guest_add_timeout(CliGuest *guest, guint interval_ms, GSourceFunc func,
                           gpointer user_data);
/* Re-arms the guest's deadline to seconds from now (ignored while cancelling after Ctrl-C). */
void cli_guest_set_deadline(CliGuest *guest, double seconds);
/*
 * Bounds the guest's whole job, whatever re-arms the deadline: seconds from now the
 * job is cancelled in the guest as for --deadline, and the guest ends as timeout with
 * "the job ran past its bound of SECONDS s (WHY)" (why: how the bound was reached).
 */
void cli_guest_set_job_bound(CliGuest *guest, double seconds, const char *why);
/* fraction 0..1; text (may be NULL), all the line says after the guest's name, percentage
 * included, is escaped before it is drawn. */
void cli_guest_set_progress(CliGuest *guest, double fraction, const char *text);

G_END_DECLS
