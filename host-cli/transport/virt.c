/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gb-error.h"

#include "transport/virt.h"

void cli_virt_domain_free(CliVirtDomain *domain)
{
	if (domain == NULL)
		return;
	g_free(domain->name);
	g_free(domain->state);
	g_free(domain->xml);
	g_free(domain);
}

#ifndef HAVE_LIBVIRT

#define CLI_VIRT_NOT_BUILT                                                                \
	"this guestbench was built without libvirt (meson -Dlibvirt=enabled): reach the " \
	"guest by its socket (unix:PATH, qga:PATH) or read libvirt's state files with "   \
	"--libvirt-dir DIR"

static void cli_virt_not_built(GError **error)
{
	g_set_error_literal(error, GB_ERROR, GB_ERROR_NOT_SUPPORTED, CLI_VIRT_NOT_BUILT);
}

gboolean cli_virt_is_built(void)
{
	return FALSE;
}

void cli_virt_set_timeout(double seconds)
{
}

CliVirtConn *cli_virt_connect(const char *uri, GError **error)
{
	cli_virt_not_built(error);
	return NULL;
}

const char *cli_virt_conn_get_uri(const CliVirtConn *conn)
{
	return NULL;
}

const char *cli_virt_conn_get_requested_uri(const CliVirtConn *conn)
{
	return NULL;
}

const char *cli_virt_conn_get_remote_host(const CliVirtConn *conn)
{
	return NULL;
}

GPtrArray *cli_virt_list_domains(CliVirtConn *conn, GError **error)
{
	cli_virt_not_built(error);
	return NULL;
}

CliVirtDomain *cli_virt_get_domain(CliVirtConn *conn, const char *name, GError **error)
{
	cli_virt_not_built(error);
	return NULL;
}

gboolean cli_virt_get_pinning(CliVirtConn *conn, const char *domain, guint *n_host_cpus,
                              GPtrArray **vcpu_maps, char **emulator_map, GError **error)
{
	cli_virt_not_built(error);
	return FALSE;
}

/* An op that only reports the error, from the main context as promised. */
struct _CliVirtOp {
	CliVirtChannelFunc channel_func;
	CliVirtReplyFunc reply_func;
	gpointer user_data;
	GSource *source;
};

static gboolean cli_virt_op_fail_cb(gpointer user_data)
{
	CliVirtOp *op = user_data;
	g_autoptr(GError) error = NULL;

	cli_virt_not_built(&error);
	if (op->channel_func != NULL)
		op->channel_func(-1, error, op->user_data);
	else
		op->reply_func(NULL, error, op->user_data);
	g_source_unref(op->source);
	g_free(op);
	return G_SOURCE_REMOVE;
}

static CliVirtOp *cli_virt_op_fail(GMainContext *context, CliVirtChannelFunc channel_func,
                                   CliVirtReplyFunc reply_func, gpointer user_data)
{
	CliVirtOp *op = g_new0(CliVirtOp, 1);

	op->channel_func = channel_func;
	op->reply_func = reply_func;
	op->user_data = user_data;
	op->source = g_idle_source_new();
	g_source_set_callback(op->source, cli_virt_op_fail_cb, op, NULL);
	g_source_attach(op->source, context);
	return op;
}

CliVirtOp *cli_virt_open_channel(const char *uri, const char *domain, const char *channel,
                                 GMainContext *context, CliVirtChannelFunc func, gpointer user_data)
{
	return cli_virt_op_fail(context, func, NULL, user_data);
}

CliVirtOp *cli_virt_agent_command(const char *uri, const char *domain, const char *request,
                                  int timeout_seconds, GMainContext *context, CliVirtReplyFunc func,
                                  gpointer user_data)
{
	return cli_virt_op_fail(context, NULL, func, user_data);
}

CliVirtOp *cli_virt_monitor_command(const char *uri, const char *domain, const char *request,
                                    GMainContext *context, CliVirtReplyFunc func,
                                    gpointer user_data)
{
	return cli_virt_op_fail(context, NULL, func, user_data);
}

void cli_virt_op_cancel(CliVirtOp *op)
{
	if (op == NULL)
		return;
	g_source_destroy(op->source);
	g_source_unref(op->source);
	g_free(op);
}

void cli_virt_shutdown(void)
{
}

#else /* HAVE_LIBVIRT */

#include "transport/virt-lib.h"

/* Worker threads for the blocking calls; more wait in line. */
#define CLI_VIRT_MAX_WORKERS 32
/* What a channel bridge holds in each direction before it stops reading. */
#define CLI_VIRT_BRIDGE_MAX (1024 * 1024)
#define CLI_VIRT_BRIDGE_CHUNK 65536
/* Keepalive of remote connections: a dead hypervisor is noticed within 5 s x 3. */
#define CLI_VIRT_KEEPALIVE_INTERVAL 5
#define CLI_VIRT_KEEPALIVE_COUNT 3

typedef enum {
	CLI_VIRT_CONN_OPENING,
	CLI_VIRT_CONN_OPEN,
	CLI_VIRT_CONN_FAILED,
} CliVirtConnState;

struct _CliVirtConn {
	char *requested; /* as asked for, NULL for the default */
	char *uri;       /* as libvirt says */
	char *remote_host;
	virConnectPtr conn;
	CliVirtConnState state;
	guint generation; /* which opening an opener thread belongs to */
	pid_t opener_tid; /* the thread opening it: the parent of a transport libvirt spawns */
	gboolean closed;  /* libvirtd closed it: open again at the next use */
	char *error;
};

static GMutex cli_virt_lock;
static GCond cli_virt_cond;
static GHashTable *cli_virt_conns; /* requested URI ("" for the default) -> CliVirtConn */
static double cli_virt_timeout = CLI_VIRT_DEFAULT_TIMEOUT_S;
static GThread *cli_virt_event_thread;
static GThreadPool *cli_virt_pool;
static gint cli_virt_quit;

gboolean cli_virt_is_built(void)
{
	return TRUE;
}

void cli_virt_set_timeout(double seconds)
{
	g_mutex_lock(&cli_virt_lock);
	cli_virt_timeout = seconds > 0 ? seconds : CLI_VIRT_DEFAULT_TIMEOUT_S;
	g_mutex_unlock(&cli_virt_lock);
}

/* libvirt prints every error on stderr unless told otherwise: errors are ours to report. */
static void cli_virt_quiet_cb(void *user_data, virErrorPtr error)
{
}

static gpointer cli_virt_event_loop(gpointer user_data)
{
	while (!g_atomic_int_get(&cli_virt_quit)) {
		if (VIR(virEventRunDefaultImpl)() < 0) {
			g_warning("libvirt event loop: %s", VIR(virGetLastErrorMessage)());
			break;
		}
	}
	return NULL;
}

static void cli_virt_worker(gpointer data, gpointer user_data);

/* Once: libvirt's event loop (streams and keepalive need one) and the workers. */
static gpointer cli_virt_init_once(gpointer data)
{
	if (VIR(virInitialize)() < 0)
		return GINT_TO_POINTER(FALSE);
	VIR(virSetErrorFunc)(NULL, cli_virt_quiet_cb);
	if (VIR(virEventRegisterDefaultImpl)() < 0)
		return GINT_TO_POINTER(FALSE);
	cli_virt_conns = g_hash_table_new(g_str_hash, g_str_equal);
	cli_virt_event_thread = g_thread_new("libvirt-events", cli_virt_event_loop, NULL);
	cli_virt_pool = g_thread_pool_new(cli_virt_worker, NULL, CLI_VIRT_MAX_WORKERS, FALSE, NULL);
	return GINT_TO_POINTER(TRUE);
}

static gboolean cli_virt_init(GError **error)
{
	static GOnce once = G_ONCE_INIT;

	/* the library is loaded here, at the first use of libvirt, not at start-up */
	if (cli_virt_lib_load(error) == NULL)
		return FALSE;
	if (!GPOINTER_TO_INT(g_once(&once, cli_virt_init_once, NULL))) {
		g_set_error(error, GB_ERROR, GB_ERROR_FAILED, "libvirt cannot be initialised: %s",
		            VIR(virGetLastErrorMessage)());
		return FALSE;
	}
	return TRUE;
}

static const char *cli_virt_uri_name(const char *requested)
{
	return requested != NULL ? requested : "libvirt's default URI";
}

/* What to do about a connection that failed, when the cause is a usual one. */
static const char *cli_virt_connect_hint(int code, const char *message)
{
	if (code == VIR_ERR_AUTH_FAILED || code == VIR_ERR_AUTH_UNAVAILABLE ||
	    code == VIR_ERR_AUTH_CANCELLED || strstr(message, "authentication") != NULL ||
	    (strstr(message, "Permission denied") != NULL && strstr(message, "-sock") != NULL))
		return "; a non-root user needs to be in the 'libvirt' group (the polkit rule "
		       "60-libvirt.rules allows it) or a polkit rule granting "
		       "org.libvirt.unix.manage";
	if (strstr(message, "No such file or directory") != NULL ||
	    strstr(message, "Connection refused") != NULL)
		return "; is libvirtd (or virtqemud) running on that host?";
	return "";
}

static gpointer cli_virt_opener(gpointer data);

static void cli_virt_remote_host(CliVirtConn *c)
{
	g_autoptr(GUri) parsed = g_uri_parse(c->uri, G_URI_FLAGS_NON_DNS, NULL);
	const char *host = parsed != NULL ? g_uri_get_host(parsed) : NULL;

	g_clear_pointer(&c->remote_host, g_free);
	if (host != NULL && host[0] != '\0' && g_strcmp0(host, "localhost") != 0)
		c->remote_host = g_strdup(host);
}

static void cli_virt_close_cb(virConnectPtr conn, int reason, void *opaque)
{
	CliVirtConn *c = opaque;

	g_mutex_lock(&cli_virt_lock);
	if (c->conn == conn)
		c->closed = TRUE;
	g_mutex_unlock(&cli_virt_lock);
}

typedef struct {
	CliVirtConn *conn;
	guint generation;
} CliVirtOpening;

static gpointer cli_virt_opener(gpointer data)
{
	CliVirtOpening *opening = data;
	CliVirtConn *c = opening->conn;
	virConnectPtr conn;
	g_autofree char *error = NULL;
	char *uri = NULL;

	g_mutex_lock(&cli_virt_lock);
	if (c->generation == opening->generation)
		c->opener_tid = gettid();
	g_mutex_unlock(&cli_virt_lock);
	conn = VIR(virConnectOpen)(c->requested);

	if (conn == NULL) {
		const char *msg = VIR(virGetLastErrorMessage)();
		error =
		    g_strdup_printf("cannot connect to %s: %s%s", cli_virt_uri_name(c->requested),
		                    msg, cli_virt_connect_hint(VIR(virGetLastErrorCode)(), msg));
	} else {
		uri = VIR(virConnectGetURI)(conn);
	}
	g_mutex_lock(&cli_virt_lock);
	if (c->generation != opening->generation || c->state != CLI_VIRT_CONN_OPENING) {
		/* whoever waited gave up: this opening is nobody's */
		g_mutex_unlock(&cli_virt_lock);
		if (conn != NULL)
			VIR(virConnectClose)(conn);
		free(uri);
		g_free(opening);
		return NULL;
	}
	if (conn != NULL) {
		if (c->conn != NULL)
			VIR(virConnectClose)(c->conn);
		c->conn = conn;
		g_free(c->uri);
		c->uri = g_strdup(uri != NULL ? uri : cli_virt_uri_name(c->requested));
		cli_virt_remote_host(c);
		c->closed = FALSE;
		c->state = CLI_VIRT_CONN_OPEN;
		VIR(virConnectRegisterCloseCallback)(conn, cli_virt_close_cb, c, NULL);
		/* remote only (0 or -1 locally, which is fine) */
		VIR(virConnectSetKeepAlive)
		(conn, CLI_VIRT_KEEPALIVE_INTERVAL, CLI_VIRT_KEEPALIVE_COUNT);
	} else {
		c->state = CLI_VIRT_CONN_FAILED;
		g_free(c->error);
		c->error = g_steal_pointer(&error);
	}
	g_cond_broadcast(&cli_virt_cond);
	g_mutex_unlock(&cli_virt_lock);
	free(uri);
	g_free(opening);
	return NULL;
}

/* With the lock held: starts an opener thread for c. */
static void cli_virt_start_opening(CliVirtConn *c)
{
	CliVirtOpening *opening = g_new0(CliVirtOpening, 1);

	c->state = CLI_VIRT_CONN_OPENING;
	c->generation++;
	opening->conn = c;
	opening->generation = c->generation;
	g_thread_unref(g_thread_new("libvirt-open", cli_virt_opener, opening));
}

CliVirtConn *cli_virt_connect(const char *uri, GError **error)
{
	CliVirtConn *c;
	gint64 deadline;

	if (!cli_virt_init(error))
		return NULL;
	g_mutex_lock(&cli_virt_lock);
	c = g_hash_table_lookup(cli_virt_conns, uri != NULL ? uri : "");
	if (c == NULL) {
		c = g_new0(CliVirtConn, 1);
		c->requested = g_strdup(uri);
		g_hash_table_insert(cli_virt_conns, g_strdup(uri != NULL ? uri : ""), c);
		cli_virt_start_opening(c);
	} else if (c->state == CLI_VIRT_CONN_OPEN &&
	           (c->closed || VIR(virConnectIsAlive)(c->conn) != 1)) {
		g_debug("libvirt: %s was closed; connecting again", c->uri);
		cli_virt_start_opening(c);
	}
	deadline = g_get_monotonic_time() + (gint64)(cli_virt_timeout * G_USEC_PER_SEC);
	while (c->state == CLI_VIRT_CONN_OPENING) {
		if (!g_cond_wait_until(&cli_virt_cond, &cli_virt_lock, deadline) &&
		    c->state == CLI_VIRT_CONN_OPENING) {
			c->state = CLI_VIRT_CONN_FAILED;
			g_free(c->error);
			c->error =
			    g_strdup_printf("cannot connect to %s: no answer within %g s",
			                    cli_virt_uri_name(c->requested), cli_virt_timeout);
		}
	}
	if (c->state == CLI_VIRT_CONN_FAILED) {
		g_set_error_literal(error, GB_ERROR, GB_ERROR_IO, c->error);
		g_mutex_unlock(&cli_virt_lock);
		return NULL;
	}
	g_mutex_unlock(&cli_virt_lock);
	return c;
}

const char *cli_virt_conn_get_uri(const CliVirtConn *conn)
{
	return conn->uri;
}

const char *cli_virt_conn_get_requested_uri(const CliVirtConn *conn)
{
	return conn->requested;
}

const char *cli_virt_conn_get_remote_host(const CliVirtConn *conn)
{
	return conn->remote_host;
}

/* A reference to the live connection, for use outside the lock; VIR(virConnectClose)() it. */
static virConnectPtr cli_virt_conn_ref(CliVirtConn *c)
{
	virConnectPtr conn;

	g_mutex_lock(&cli_virt_lock);
	conn = c->conn;
	if (conn != NULL)
		VIR(virConnectRef)(conn);
	g_mutex_unlock(&cli_virt_lock);
	return conn;
}

static const char *cli_virt_state_name(int state)
{
	switch (state) {
	case VIR_DOMAIN_RUNNING:
		return "running";
	case VIR_DOMAIN_BLOCKED:
		return "idle";
	case VIR_DOMAIN_PAUSED:
		return "paused";
	case VIR_DOMAIN_SHUTDOWN:
		return "in shutdown";
	case VIR_DOMAIN_SHUTOFF:
		return "shut off";
	case VIR_DOMAIN_CRASHED:
		return "crashed";
	case VIR_DOMAIN_PMSUSPENDED:
		return "pmsuspended";
	default:
		return "no state";
	}
}

static CliVirtDomain *cli_virt_domain_read(virDomainPtr dom, const char *uri, GError **error)
{
	g_autoptr(CliVirtDomain) domain = g_new0(CliVirtDomain, 1);
	int state = VIR_DOMAIN_NOSTATE;
	int reason = 0;
	char *xml;

	domain->name = g_strdup(VIR(virDomainGetName)(dom));
	if (VIR(virDomainGetState)(dom, &state, &reason, 0) < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO,
		            "%s: domain '%s': cannot read its state: %s", uri, domain->name,
		            VIR(virGetLastErrorMessage)());
		return NULL;
	}
	domain->state = g_strdup(cli_virt_state_name(state));
	domain->active = VIR(virDomainIsActive)(dom) == 1;
	xml = VIR(virDomainGetXMLDesc)(dom, 0);
	if (xml == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO,
		            "%s: domain '%s': cannot read its XML: %s", uri, domain->name,
		            VIR(virGetLastErrorMessage)());
		return NULL;
	}
	domain->xml = g_strdup(xml);
	free(xml);
	return g_steal_pointer(&domain);
}

static gint cli_virt_domain_cmp(gconstpointer a, gconstpointer b)
{
	const CliVirtDomain *da = *(CliVirtDomain *const *)a;
	const CliVirtDomain *db = *(CliVirtDomain *const *)b;

	return g_strcmp0(da->name, db->name);
}

GPtrArray *cli_virt_list_domains(CliVirtConn *c, GError **error)
{
	virConnectPtr conn = cli_virt_conn_ref(c);
	g_autoptr(GPtrArray) domains =
	    g_ptr_array_new_with_free_func((GDestroyNotify)cli_virt_domain_free);
	virDomainPtr *doms = NULL;
	int n;

	if (conn == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: not connected", c->uri);
		return NULL;
	}
	n = VIR(virConnectListAllDomains)(conn, &doms, 0);
	if (n < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: cannot list the domains: %s", c->uri,
		            VIR(virGetLastErrorMessage)());
		VIR(virConnectClose)(conn);
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		g_autoptr(GError) error_local = NULL;
		CliVirtDomain *domain = cli_virt_domain_read(doms[i], c->uri, &error_local);

		/* one that vanished meanwhile is not an error of the listing */
		if (domain != NULL)
			g_ptr_array_add(domains, domain);
		else
			g_debug("%s", error_local->message);
		VIR(virDomainFree)(doms[i]);
	}
	free(doms);
	VIR(virConnectClose)(conn);
	g_ptr_array_sort(domains, cli_virt_domain_cmp);
	return g_steal_pointer(&domains);
}

static virDomainPtr cli_virt_lookup(virConnectPtr conn, const char *uri, const char *name,
                                    GError **error)
{
	virDomainPtr dom = VIR(virDomainLookupByName)(conn, name);

	if (dom == NULL) {
		if (VIR(virGetLastErrorCode)() == VIR_ERR_NO_DOMAIN)
			g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
			            "no domain '%s' on %s", name, uri);
		else
			g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: domain '%s': %s", uri, name,
			            VIR(virGetLastErrorMessage)());
	}
	return dom;
}

CliVirtDomain *cli_virt_get_domain(CliVirtConn *c, const char *name, GError **error)
{
	virConnectPtr conn = cli_virt_conn_ref(c);
	virDomainPtr dom;
	CliVirtDomain *domain;

	if (conn == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: not connected", c->uri);
		return NULL;
	}
	dom = cli_virt_lookup(conn, c->uri, name, error);
	if (dom == NULL) {
		VIR(virConnectClose)(conn);
		return NULL;
	}
	domain = cli_virt_domain_read(dom, c->uri, error);
	VIR(virDomainFree)(dom);
	VIR(virConnectClose)(conn);
	return domain;
}

/* "0-3,8" from a CPU bitmap of n CPUs. */
static char *cli_virt_cpu_list(const unsigned char *map, guint n)
{
	GString *out = g_string_new(NULL);

	for (guint i = 0; i < n; i++) {
		guint j = i;
		if (!VIR_CPU_USABLE(map, VIR_CPU_MAPLEN(n), 0, i))
			continue;
		while (j + 1 < n && VIR_CPU_USABLE(map, VIR_CPU_MAPLEN(n), 0, j + 1))
			j++;
		if (out->len > 0)
			g_string_append_c(out, ',');
		if (j == i)
			g_string_append_printf(out, "%u", i);
		else
			g_string_append_printf(out, "%u-%u", i, j);
		i = j;
	}
	return g_string_free(out, FALSE);
}

gboolean cli_virt_get_pinning(CliVirtConn *c, const char *domain, guint *n_host_cpus,
                              GPtrArray **vcpu_maps, char **emulator_map, GError **error)
{
	virConnectPtr conn = cli_virt_conn_ref(c);
	virDomainPtr dom = NULL;
	g_autofree unsigned char *maps = NULL;
	int n_cpus;
	int n_vcpus;
	int maplen;
	gboolean ok = FALSE;

	if (conn == NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: not connected", c->uri);
		return FALSE;
	}
	dom = cli_virt_lookup(conn, c->uri, domain, error);
	if (dom == NULL)
		goto out;
	n_cpus = VIR(virNodeGetCPUMap)(conn, NULL, NULL, 0);
	n_vcpus = VIR(virDomainGetVcpusFlags)(dom, VIR_DOMAIN_AFFECT_LIVE);
	if (n_cpus <= 0 || n_vcpus <= 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: domain '%s': cannot count CPUs: %s",
		            c->uri, domain, VIR(virGetLastErrorMessage)());
		goto out;
	}
	maplen = VIR_CPU_MAPLEN(n_cpus);
	maps = g_malloc0((gsize)maplen * (gsize)n_vcpus);
	n_vcpus = VIR(virDomainGetVcpuPinInfo)(dom, n_vcpus, maps, maplen, VIR_DOMAIN_AFFECT_LIVE);
	if (n_vcpus < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "%s: domain '%s': vCPU pinning: %s",
		            c->uri, domain, VIR(virGetLastErrorMessage)());
		goto out;
	}
	*n_host_cpus = (guint)n_cpus;
	*vcpu_maps = g_ptr_array_new_with_free_func(g_free);
	for (int i = 0; i < n_vcpus; i++)
		g_ptr_array_add(*vcpu_maps,
		                cli_virt_cpu_list(VIR_GET_CPUMAP(maps, maplen, i), (guint)n_cpus));
	memset(maps, 0, (gsize)maplen);
	if (VIR(virDomainGetEmulatorPinInfo)(dom, maps, maplen, VIR_DOMAIN_AFFECT_LIVE) < 0)
		*emulator_map = NULL;
	else
		*emulator_map = cli_virt_cpu_list(maps, (guint)n_cpus);
	ok = TRUE;
out:
	if (dom != NULL)
		VIR(virDomainFree)(dom);
	VIR(virConnectClose)(conn);
	return ok;
}

/* ---- channel bridges (in the event thread) --------------------------------------- */

typedef struct {
	gint refcount; /* the stream callback and the fd watch each hold one */
	virStreamPtr st;
	int fd;
	int watch;
	GByteArray *to_cli;
	GByteArray *to_guest;
	gboolean guest_eof;
	gboolean closing;
} CliVirtBridge;

static void cli_virt_bridge_unref(void *opaque)
{
	CliVirtBridge *b = opaque;

	if (!g_atomic_int_dec_and_test(&b->refcount))
		return;
	g_byte_array_unref(b->to_cli);
	g_byte_array_unref(b->to_guest);
	g_free(b);
}

/* The fd watch's free function: the fd goes with it. */
static void cli_virt_bridge_fd_free(void *opaque)
{
	CliVirtBridge *b = opaque;

	close(b->fd);
	cli_virt_bridge_unref(b);
}

static void cli_virt_bridge_close(CliVirtBridge *b)
{
	if (b->closing)
		return;
	b->closing = TRUE;
	VIR(virStreamEventRemoveCallback)(b->st);
	if (b->guest_eof)
		VIR(virStreamFinish)(b->st);
	else
		VIR(virStreamAbort)(b->st);
	VIR(virStreamFree)(b->st);
	b->st = NULL;
	VIR(virEventRemoveHandle)(b->watch);
}

/* Writes what the guest sent to the CLI's end; FALSE when the CLI is gone. */
static gboolean cli_virt_bridge_flush_cli(CliVirtBridge *b)
{
	while (b->to_cli->len > 0) {
		ssize_t n = send(b->fd, b->to_cli->data, b->to_cli->len, MSG_NOSIGNAL);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR;
		g_byte_array_remove_range(b->to_cli, 0, (guint)n);
	}
	return TRUE;
}

static gboolean cli_virt_bridge_flush_guest(CliVirtBridge *b)
{
	while (b->to_guest->len > 0) {
		int n =
		    VIR(virStreamSend)(b->st, (const char *)b->to_guest->data, b->to_guest->len);
		if (n == -2)
			return TRUE;
		if (n < 0) {
			g_debug("libvirt channel: send: %s", VIR(virGetLastErrorMessage)());
			return FALSE;
		}
		g_byte_array_remove_range(b->to_guest, 0, (guint)n);
	}
	return TRUE;
}

static void cli_virt_bridge_update(CliVirtBridge *b)
{
	int st_events = 0;
	int fd_events = 0;

	if (b->closing)
		return;
	if (b->guest_eof && b->to_cli->len == 0) {
		cli_virt_bridge_close(b);
		return;
	}
	if (!b->guest_eof && b->to_cli->len < CLI_VIRT_BRIDGE_MAX)
		st_events |= VIR_STREAM_EVENT_READABLE;
	if (b->to_guest->len > 0)
		st_events |= VIR_STREAM_EVENT_WRITABLE;
	if (b->to_guest->len < CLI_VIRT_BRIDGE_MAX)
		fd_events |= VIR_EVENT_HANDLE_READABLE;
	if (b->to_cli->len > 0)
		fd_events |= VIR_EVENT_HANDLE_WRITABLE;
	VIR(virStreamEventUpdateCallback)(b->st, st_events);
	VIR(virEventUpdateHandle)(b->watch, fd_events);
}

static void cli_virt_bridge_stream_cb(virStreamPtr st, int events, void *opaque)
{
	CliVirtBridge *b = opaque;
	char buf[CLI_VIRT_BRIDGE_CHUNK];

	if (b->closing)
		return;
	if (events & VIR_STREAM_EVENT_READABLE) {
		while (!b->guest_eof && b->to_cli->len < CLI_VIRT_BRIDGE_MAX) {
			int n = VIR(virStreamRecv)(st, buf, sizeof(buf));
			if (n == -2)
				break;
			if (n < 0) {
				g_debug("libvirt channel: receive: %s",
				        VIR(virGetLastErrorMessage)());
				b->guest_eof = TRUE;
				break;
			}
			if (n == 0)
				b->guest_eof = TRUE;
			else
				g_byte_array_append(b->to_cli, (const guint8 *)buf, (guint)n);
		}
	}
	if ((events & VIR_STREAM_EVENT_WRITABLE) && !cli_virt_bridge_flush_guest(b)) {
		cli_virt_bridge_close(b);
		return;
	}
	if ((events & (VIR_STREAM_EVENT_ERROR | VIR_STREAM_EVENT_HANGUP)) &&
	    !(events & VIR_STREAM_EVENT_READABLE))
		b->guest_eof = TRUE;
	if (!cli_virt_bridge_flush_cli(b)) {
		cli_virt_bridge_close(b);
		return;
	}
	cli_virt_bridge_update(b);
}

static void cli_virt_bridge_fd_cb(int watch, int fd, int events, void *opaque)
{
	CliVirtBridge *b = opaque;
	char buf[CLI_VIRT_BRIDGE_CHUNK];

	if (b->closing)
		return;
	if (events & VIR_EVENT_HANDLE_READABLE) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			/* the CLI closed its end: the channel is released */
			cli_virt_bridge_close(b);
			return;
		}
		if (n > 0) {
			g_byte_array_append(b->to_guest, (const guint8 *)buf, (guint)n);
			if (!cli_virt_bridge_flush_guest(b)) {
				cli_virt_bridge_close(b);
				return;
			}
		}
	} else if (events & (VIR_EVENT_HANDLE_ERROR | VIR_EVENT_HANDLE_HANGUP)) {
		cli_virt_bridge_close(b);
		return;
	}
	if ((events & VIR_EVENT_HANDLE_WRITABLE) && !cli_virt_bridge_flush_cli(b)) {
		cli_virt_bridge_close(b);
		return;
	}
	cli_virt_bridge_update(b);
}

/* Bridges st to a new socket pair; the CLI's end, or -1 with error set. */
static int cli_virt_bridge_start(virStreamPtr st, GError **error)
{
	CliVirtBridge *b;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0) {
		int errsv = errno;
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot create a socket pair: %s",
		            g_strerror(errsv));
		return -1;
	}
	b = g_new0(CliVirtBridge, 1);
	b->refcount = 2;
	b->st = st;
	b->fd = sv[0];
	b->to_cli = g_byte_array_new();
	b->to_guest = g_byte_array_new();
	b->watch = VIR(virEventAddHandle)(b->fd, VIR_EVENT_HANDLE_READABLE, cli_virt_bridge_fd_cb,
	                                  b, cli_virt_bridge_fd_free);
	if (b->watch < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot watch the channel: %s",
		            VIR(virGetLastErrorMessage)());
		close(sv[0]);
		close(sv[1]);
		g_byte_array_unref(b->to_cli);
		g_byte_array_unref(b->to_guest);
		g_free(b);
		return -1;
	}
	if (VIR(virStreamEventAddCallback)(st, VIR_STREAM_EVENT_READABLE, cli_virt_bridge_stream_cb,
	                                   b, cli_virt_bridge_unref) < 0) {
		g_set_error(error, GB_ERROR, GB_ERROR_IO, "cannot watch the channel: %s",
		            VIR(virGetLastErrorMessage)());
		/* the watch's free function closes sv[0] and drops one reference */
		cli_virt_bridge_unref(b);
		VIR(virEventRemoveHandle)(b->watch);
		close(sv[1]);
		return -1;
	}
	return sv[1];
}

/* ---- operations in worker threads ------------------------------------------------- */

typedef enum {
	CLI_VIRT_OP_CHANNEL,
	CLI_VIRT_OP_AGENT,
	CLI_VIRT_OP_MONITOR,
} CliVirtOpKind;

struct _CliVirtOp {
	CliVirtOpKind kind;
	char *uri;
	char *domain;
	char *arg; /* the channel's name, or the request */
	int timeout;
	GMainContext *context;
	CliVirtChannelFunc channel_func;
	CliVirtReplyFunc reply_func;
	gpointer user_data;
	gboolean cancelled; /* read and written in the context's thread only */
	/* the outcome, written by the worker */
	int fd;
	char *reply;
	GError *error;
};

static void cli_virt_op_free(CliVirtOp *op)
{
	if (op->fd >= 0)
		close(op->fd);
	g_free(op->uri);
	g_free(op->domain);
	g_free(op->arg);
	g_free(op->reply);
	g_clear_error(&op->error);
	g_main_context_unref(op->context);
	g_free(op);
}

static gboolean cli_virt_op_done_cb(gpointer user_data)
{
	CliVirtOp *op = user_data;

	if (!op->cancelled) {
		if (op->kind == CLI_VIRT_OP_CHANNEL) {
			int fd = op->fd;
			op->fd = -1;
			op->channel_func(fd, op->error, op->user_data);
		} else {
			op->reply_func(op->reply, op->error, op->user_data);
		}
	}
	cli_virt_op_free(op);
	return G_SOURCE_REMOVE;
}

/* The reasons a domain's call fails that an operator can act on, in their words. */
static void cli_virt_op_set_error(CliVirtOp *op, const char *what)
{
	int code = VIR(virGetLastErrorCode)();
	const char *msg = VIR(virGetLastErrorMessage)();

	if (code == VIR_ERR_OPERATION_INVALID && strstr(msg, "not running") != NULL)
		op->error = g_error_new(GB_ERROR, GB_ERROR_IO, "libvirt domain '%s' is not running",
		                        op->domain);
	else
		op->error = g_error_new(GB_ERROR, GB_ERROR_IO, "libvirt domain '%s': %s: %s",
		                        op->domain, what, msg);
}

static void cli_virt_op_run(CliVirtOp *op)
{
	CliVirtConn *c = cli_virt_connect(op->uri, &op->error);
	virConnectPtr conn = c != NULL ? cli_virt_conn_ref(c) : NULL;
	virDomainPtr dom;

	if (conn == NULL) {
		if (op->error == NULL)
			op->error = g_error_new(GB_ERROR, GB_ERROR_IO, "%s: not connected",
			                        cli_virt_uri_name(op->uri));
		return;
	}
	dom = cli_virt_lookup(conn, c->uri, op->domain, &op->error);
	if (dom == NULL) {
		VIR(virConnectClose)(conn);
		return;
	}
	switch (op->kind) {
	case CLI_VIRT_OP_CHANNEL: {
		virStreamPtr st = VIR(virStreamNew)(conn, VIR_STREAM_NONBLOCK);
		if (st == NULL || VIR(virDomainOpenChannel)(dom, op->arg, st, 0) < 0) {
			cli_virt_op_set_error(op, "cannot open its guestbench channel");
			if (st != NULL)
				VIR(virStreamFree)(st);
			break;
		}
		op->fd = cli_virt_bridge_start(st, &op->error);
		if (op->fd < 0) {
			VIR(virStreamAbort)(st);
			VIR(virStreamFree)(st);
		}
		break;
	}
	case CLI_VIRT_OP_AGENT: {
		char *reply = VIR(virDomainQemuAgentCommand)(dom, op->arg, op->timeout, 0);
		if (reply == NULL) {
			cli_virt_op_set_error(op, "qemu-ga (through libvirt)");
			break;
		}
		op->reply = g_strdup(reply);
		free(reply);
		break;
	}
	case CLI_VIRT_OP_MONITOR: {
		char *reply = NULL;
		if (VIR(virDomainQemuMonitorCommand)(dom, op->arg, &reply, 0) < 0) {
			cli_virt_op_set_error(op, "QEMU monitor (through libvirt)");
			break;
		}
		op->reply = g_strdup(reply);
		free(reply);
		break;
	}
	}
	if (op->reply != NULL && strlen(op->reply) > CLI_VIRT_MAX_REPLY) {
		g_clear_pointer(&op->reply, g_free);
		op->error = g_error_new(GB_ERROR, GB_ERROR_TOO_LARGE,
		                        "libvirt domain '%s': reply over %d bytes", op->domain,
		                        CLI_VIRT_MAX_REPLY);
	}
	VIR(virDomainFree)(dom);
	VIR(virConnectClose)(conn);
}

/* The outcome goes to the owner's context. */
static void cli_virt_op_deliver(CliVirtOp *op)
{
	GSource *source = g_idle_source_new();

	g_source_set_callback(source, cli_virt_op_done_cb, op, NULL);
	g_source_attach(source, op->context);
	g_source_unref(source);
}

static void cli_virt_worker(gpointer data, gpointer user_data)
{
	CliVirtOp *op = data;

	cli_virt_op_run(op);
	cli_virt_op_deliver(op);
}

static CliVirtOp *cli_virt_op_start(CliVirtOpKind kind, const char *uri, const char *domain,
                                    const char *arg, int timeout, GMainContext *context,
                                    CliVirtChannelFunc channel_func, CliVirtReplyFunc reply_func,
                                    gpointer user_data)
{
	CliVirtOp *op = g_new0(CliVirtOp, 1);
	g_autoptr(GError) error = NULL;

	op->kind = kind;
	op->uri = g_strdup(uri);
	op->domain = g_strdup(domain);
	op->arg = g_strdup(arg);
	op->timeout = timeout;
	op->context = g_main_context_ref(context);
	op->channel_func = channel_func;
	op->reply_func = reply_func;
	op->user_data = user_data;
	op->fd = -1;
	if (!cli_virt_init(&op->error)) {
		cli_virt_op_deliver(op);
		return op;
	}
	if (!g_thread_pool_push(cli_virt_pool, op, &error)) {
		op->error = g_error_new(GB_ERROR, GB_ERROR_FAILED, "cannot start a thread: %s",
		                        error->message);
		cli_virt_op_deliver(op);
	}
	return op;
}

CliVirtOp *cli_virt_open_channel(const char *uri, const char *domain, const char *channel,
                                 GMainContext *context, CliVirtChannelFunc func, gpointer user_data)
{
	return cli_virt_op_start(CLI_VIRT_OP_CHANNEL, uri, domain, channel, 0, context, func, NULL,
	                         user_data);
}

CliVirtOp *cli_virt_agent_command(const char *uri, const char *domain, const char *request,
                                  int timeout_seconds, GMainContext *context, CliVirtReplyFunc func,
                                  gpointer user_data)
{
	return cli_virt_op_start(CLI_VIRT_OP_AGENT, uri, domain, request, timeout_seconds, context,
	                         NULL, func, user_data);
}

CliVirtOp *cli_virt_monitor_command(const char *uri, const char *domain, const char *request,
                                    GMainContext *context, CliVirtReplyFunc func,
                                    gpointer user_data)
{
	return cli_virt_op_start(CLI_VIRT_OP_MONITOR, uri, domain, request, 0, context, NULL, func,
	                         user_data);
}

void cli_virt_op_cancel(CliVirtOp *op)
{
	if (op != NULL)
		op->cancelled = TRUE;
}

/*
 * An opening that never answered has a transport (ssh of qemu+ssh) running
 * as a child of its thread: it must not outlive the process.
 */
static void cli_virt_stop_transport(pid_t tid)
{
	g_autofree char *path = g_strdup_printf("/proc/self/task/%d/children", (int)tid);
	g_autofree char *text = NULL;
	g_auto(GStrv) pids = NULL;

	if (tid <= 0 || !g_file_get_contents(path, &text, NULL, NULL))
		return;
	pids = g_strsplit_set(g_strstrip(text), " ", -1);
	for (guint i = 0; pids[i] != NULL; i++) {
		guint64 pid = 0;
		if (g_ascii_string_to_unsigned(pids[i], 10, 2, G_MAXINT32, &pid, NULL)) {
			g_debug("libvirt: stopping pid %" G_GUINT64_FORMAT
			        ", the transport of a connection that never answered",
			        pid);
			kill((pid_t)pid, SIGTERM);
		}
	}
}

static void cli_virt_wake_cb(int timer, void *opaque)
{
	VIR(virEventRemoveTimeout)(timer);
}

void cli_virt_shutdown(void)
{
	GHashTableIter iter;
	gpointer value;

	if (cli_virt_event_thread == NULL)
		return;
	g_mutex_lock(&cli_virt_lock);
	g_hash_table_iter_init(&iter, cli_virt_conns);
	while (g_hash_table_iter_next(&iter, NULL, &value)) {
		CliVirtConn *c = value;
		/* an opening still under way is left to its thread, which closes what it gets */
		if (c->state == CLI_VIRT_CONN_OPENING ||
		    (c->state == CLI_VIRT_CONN_FAILED && c->conn == NULL))
			cli_virt_stop_transport(c->opener_tid);
		c->generation++;
		if (c->state == CLI_VIRT_CONN_OPENING)
			c->state = CLI_VIRT_CONN_FAILED;
		if (c->conn != NULL) {
			VIR(virConnectUnregisterCloseCallback)(c->conn, cli_virt_close_cb);
			VIR(virConnectClose)(c->conn);
			c->conn = NULL;
		}
	}
	g_mutex_unlock(&cli_virt_lock);
	g_atomic_int_set(&cli_virt_quit, 1);
	VIR(virEventAddTimeout)(0, cli_virt_wake_cb, NULL, NULL);
	g_thread_join(cli_virt_event_thread);
	cli_virt_event_thread = NULL;
}

#endif /* HAVE_LIBVIRT */
