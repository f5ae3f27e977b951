/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <gio/gio.h>
#include <json-glib/json-glib.h>

#include "guestbench-protocol.h"

G_BEGIN_DECLS

/* How long any single wait in these tests may take before the test fails. */
#define HARNESS_TIMEOUT_MS 10000

/* A listening peer (our agent or qemu-ga) in its own temporary directory. */
typedef struct {
	char *tmpdir;
	char *sock;
	GSubprocess *proc;
	int fd;          /* the connected client, -1 when none */
	GByteArray *buf; /* bytes read but not yet returned */
} Harness;

/* A fresh temporary directory (removed by harness_stop). */
void harness_init(Harness *h);
/*
 * Starts argv (NULL-terminated) and waits until h->sock accepts, then
 * connects h->fd. argv may contain "@SOCK@" and "@DIR@", replaced by the paths.
 */
void harness_start(Harness *h, const char *const *argv);
/* Starts $GB_AGENT -m unix-listen -p SOCK plus extra (may be NULL). */
void harness_start_agent(Harness *h, const char *const *extra);
/* Kills the process if it still runs, waits for it and removes the directory. */
void harness_stop(Harness *h);

int harness_connect(const char *path);
void harness_reconnect(Harness *h);
void harness_send(int fd, const void *data, gsize len);
/* One reply line without its "\n" (a leading 0xFF is kept); NULL on EOF or timeout. */
char *harness_read_line(int fd, GByteArray *buf, int timeout_ms);
/* Sends json + "\n", reads one line and parses it as an object (asserts). */
JsonNode *harness_call(Harness *h, const char *json);
/* Parses a reply line (asserts it is an object). */
JsonNode *harness_parse(const char *line);

/* Reply checks: return value (borrowed) or error class/desc. */
JsonNode *harness_get_return(JsonNode *reply);
void harness_assert_error(JsonNode *reply, const char *klass, const char *desc);
/* The id member as compact JSON text, or NULL when absent. */
char *harness_get_id(JsonNode *reply);

/* utime+stime of pid in clock ticks, and VmRSS in KiB. */
guint64 harness_proc_cpu_ticks(GPid pid);
guint64 harness_proc_rss_kib(GPid pid);
GPid harness_pid(GSubprocess *proc);
/*
 * The session process of the agent whose resident process is agent (the
 * child named guestbench-agent-session that answers): 0 when there is none
 * now; harness_session_pid() waits for one and asserts it came.
 */
GPid harness_find_session(GPid agent);
GPid harness_session_pid(GPid agent);
/* A "Name:  N kB" field of /proc/PID/status (e.g. "VmHWM") in KiB. */
guint64 harness_proc_status_kib(GPid pid, const char *field);
/*
 * Writes len bytes while reading whatever comes back into buf, so that a
 * peer that stops reading until its replies are read cannot deadlock us.
 */
void harness_send_reading(int fd, const void *data, gsize len, GByteArray *buf);

/* Runs $GB_AGENT with argv and optional stdin; returns the exit status. */
int harness_run_agent(const char *const *argv, const char *stdin_data, char **out, char **err);

/*
 * TRUE when the agent under test is built with ASan/UBSan (GB_SANITIZED set by
 * tests/meson.build): its allocator keeps freed memory in quarantine, so RSS
 * bounds say nothing there and valgrind cannot run it.
 */
gboolean harness_sanitized(void);

G_END_DECLS
