/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "guestbench-protocol.h"

#include "fleet/host-files.h"
#include "fleet/hostview.h"
#include "fleet/pve.h"
#include "transport/qmp.h"
#include "transport/virt.h"

/* ---- collecting over QMP ------------------------------------------------------------- */

typedef struct {
	CliHostviewJob *job;
	char *key;       /* where the reply goes in replies, or NULL for qom-get */
	char *memdev_id; /* qom-get: the backend and the property asked for */
	char *prop;
} CliHostviewStep;

struct _CliHostviewJob {
	CliQmp *qmp;
	char *qmp_path;
	char *uri; /* the libvirt connection of a "libvirt:DOMAIN" path; NULL: the default */
	char *sysroot;
	JsonObject *replies;
	JsonObject *errors;
	JsonObject *memdev_props;
	GPtrArray *steps; /* CliHostviewStep, freed with the job */
	guint pending;
	gboolean done;
	CliHostviewFunc func;
	gpointer user_data;
};

static void cli_hostview_step_free(CliHostviewStep *step)
{
	g_free(step->key);
	g_free(step->memdev_id);
	g_free(step->prop);
	g_free(step);
}

void cli_hostview_job_free(CliHostviewJob *job)
{
	if (job == NULL)
		return;
	cli_qmp_close(job->qmp);
	json_object_unref(job->replies);
	json_object_unref(job->errors);
	json_object_unref(job->memdev_props);
	g_ptr_array_unref(job->steps);
	g_free(job->qmp_path);
	g_free(job->uri);
	g_free(job->sysroot);
	g_free(job);
}

/*
 * What libvirt says of the domain, into replies' "libvirt" (cli_hostview_build):
 * its live XML (disk names, <numatune>, <memoryBacking>), and for a domain on
 * a remote hypervisor that hypervisor and the pinning, which this host's
 * /proc cannot tell. What fails is noted in errors; the QMP part stands.
 */
static void cli_hostview_add_libvirt(CliHostviewJob *job, const char *domain)
{
	g_autoptr(JsonObject) libvirt = json_object_new();
	g_autoptr(GError) error = NULL;
	g_autoptr(CliVirtDomain) dom = NULL;
	CliVirtConn *conn = cli_virt_connect(job->uri, &error);
	const char *host;

	json_object_set_string_member(libvirt, "domain", domain);
	if (conn == NULL) {
		json_object_set_string_member(job->errors, "libvirt", error->message);
		json_object_set_object_member(job->replies, "libvirt", g_steal_pointer(&libvirt));
		return;
	}
	host = cli_virt_conn_get_remote_host(conn);
	if (host != NULL)
		json_object_set_string_member(libvirt, "host", host);
	dom = cli_virt_get_domain(conn, domain, &error);
	if (dom != NULL)
		json_object_set_string_member(libvirt, "xml", dom->xml);
	else
		json_object_set_string_member(job->errors, "libvirt domain XML", error->message);
	g_clear_error(&error);
	if (host != NULL) {
		g_autoptr(GPtrArray) vcpus = NULL;
		g_autofree char *emulator = NULL;
		guint n_host_cpus = 0;

		if (cli_virt_get_pinning(conn, domain, &n_host_cpus, &vcpus, &emulator, &error)) {
			g_autoptr(JsonObject) pinning = json_object_new();
			g_autoptr(JsonArray) maps = json_array_new();

			for (guint i = 0; i < vcpus->len; i++)
				json_array_add_string_element(maps, g_ptr_array_index(vcpus, i));
			json_object_set_int_member(pinning, "host_cpus", n_host_cpus);
			json_object_set_array_member(pinning, "vcpus", g_steal_pointer(&maps));
			if (emulator != NULL)
				json_object_set_string_member(pinning, "emulator", emulator);
			json_object_set_object_member(libvirt, "pinning",
			                              g_steal_pointer(&pinning));
		} else {
			json_object_set_string_member(job->errors, "libvirt pinning",
			                              error->message);
		}
	}
	json_object_set_object_member(job->replies, "libvirt", g_steal_pointer(&libvirt));
}

static void cli_hostview_job_finish(CliHostviewJob *job, const GError *error)
{
	g_autoptr(JsonNode) view = NULL;
	CliHostviewFunc func = job->func;
	gpointer user_data = job->user_data;

	if (job->done)
		return;
	job->done = TRUE;
	if (error == NULL) {
		const char *domain = cli_qmp_get_domain(job->qmp);
		/* a socket's peer is QEMU (SO_PEERCRED); through libvirt the build finds it */
		gint64 pid = domain == NULL ? cli_qmp_get_pid(job->qmp) : 0;

		if (domain != NULL)
			cli_hostview_add_libvirt(job, domain);
		if (cli_qmp_get_version(job->qmp) != NULL)
			json_object_set_string_member(job->replies, "qemu-version",
			                              cli_qmp_get_version(job->qmp));
		json_object_set_object_member(job->replies, "errors", json_object_ref(job->errors));
		json_object_set_object_member(job->replies, "memdev-props",
		                              json_object_ref(job->memdev_props));
		view = cli_hostview_build(job->replies, job->qmp_path, pid, job->sysroot);
	}
	cli_qmp_close(g_steal_pointer(&job->qmp));
	/* func may free the job: nothing touches it afterwards */
	func(view, error, user_data);
}

static void cli_hostview_call(CliHostviewJob *job, const char *execute, JsonObject *args,
                              const char *key, const char *memdev_id, const char *prop);

static void cli_hostview_reply_cb(CliQmp *qmp, JsonNode *ret, const GError *error,
                                  gpointer user_data)
{
	CliHostviewStep *step = user_data;
	CliHostviewJob *job = step->job;
	const char *key = step->key != NULL ? step->key : step->prop;

	job->pending--;
	if (error != NULL && !g_error_matches(error, GB_ERROR, GB_ERROR_REMOTE) &&
	    !g_error_matches(error, GB_ERROR, GB_ERROR_COMMAND_NOT_FOUND)) {
		cli_hostview_job_finish(job, error);
		return;
	}
	if (error != NULL) {
		/* an older QEMU or another target lacks a command: note it, go on */
		json_object_set_string_member(job->errors, key, error->message);
	} else if (step->memdev_id != NULL) {
		JsonObject *props = NULL;
		const char *val = NULL;

		if (!gb_json_get_object(job->memdev_props, step->memdev_id, GB_JSON_OPTIONAL,
		                        &props, NULL) ||
		    props == NULL) {
			props = json_object_new();
			json_object_set_object_member(job->memdev_props, step->memdev_id, props);
		}
		if (gb_json_node_get_string(ret, step->prop, &val, NULL))
			json_object_set_string_member(props, step->prop, val);
		if (g_strcmp0(step->prop, "type") == 0 &&
		    g_strcmp0(val, "memory-backend-file") == 0) {
			g_autoptr(JsonObject) args = json_object_new();
			g_autofree char *path = g_strdup_printf("/objects/%s", step->memdev_id);
			json_object_set_string_member(args, "path", path);
			json_object_set_string_member(args, "property", "mem-path");
			cli_hostview_call(job, "qom-get", args, NULL, step->memdev_id, "mem-path");
		}
	} else {
		json_object_set_member(job->replies, step->key, json_node_copy(ret));
		if (g_strcmp0(step->key, "query-kvm") == 0) {
			JsonObject *kvm = NULL;
			gboolean enabled = FALSE;
			g_autoptr(JsonObject) args = json_object_new();
			g_autoptr(JsonObject) model = json_object_new();

			/* "host" needs KVM; under TCG "max" is what QEMU could give */
			if (gb_json_node_get_object(ret, "query-kvm", &kvm, NULL))
				gb_json_get_bool(kvm, "enabled", GB_JSON_OPTIONAL, &enabled, NULL);
			json_object_set_string_member(model, "name", enabled ? "host" : "max");
			json_object_set_string_member(args, "type", "full");
			json_object_set_object_member(args, "model", g_steal_pointer(&model));
			cli_hostview_call(job, "query-cpu-model-expansion", args,
			                  "query-cpu-model-expansion", NULL, NULL);
		} else if (g_strcmp0(step->key, "query-memdev") == 0 &&
		           JSON_NODE_HOLDS_ARRAY(ret)) {
			JsonArray *devs = json_node_get_array(ret);
			for (guint i = 0; i < json_array_get_length(devs); i++) {
				JsonObject *dev = NULL;
				const char *id = NULL;
				g_autoptr(JsonObject) args = json_object_new();
				g_autofree char *path = NULL;

				if (!gb_json_node_get_object(json_array_get_element(devs, i),
				                             "memdev", &dev, NULL) ||
				    !gb_json_get_string(dev, "id", GB_JSON_REQUIRED, &id, NULL))
					continue;
				path = g_strdup_printf("/objects/%s", id);
				json_object_set_string_member(args, "path", path);
				json_object_set_string_member(args, "property", "type");
				cli_hostview_call(job, "qom-get", args, NULL, id, "type");
			}
		}
	}
	if (job->pending == 0)
		cli_hostview_job_finish(job, NULL);
}

static void cli_hostview_call(CliHostviewJob *job, const char *execute, JsonObject *args,
                              const char *key, const char *memdev_id, const char *prop)
{
	CliHostviewStep *step = g_new0(CliHostviewStep, 1);

	step->job = job;
	step->key = g_strdup(key);
	step->memdev_id = g_strdup(memdev_id);
	step->prop = g_strdup(prop);
	g_ptr_array_add(job->steps, step);
	job->pending++;
	cli_qmp_call(job->qmp, execute, args, cli_hostview_reply_cb, step);
}

static void cli_hostview_open_cb(CliQmp *qmp, const GError *error, gpointer user_data)
{
	CliHostviewJob *job = user_data;
	const char *const queries[] = { "query-kvm", "query-block", "query-cpus-fast",
		                        "query-memdev", "query-memory-size-summary" };

	if (error != NULL) {
		cli_hostview_job_finish(job, error);
		return;
	}
	for (guint i = 0; i < G_N_ELEMENTS(queries); i++)
		cli_hostview_call(job, queries[i], NULL, queries[i], NULL, NULL);
}

CliHostviewJob *cli_hostview_job_new(const char *qmp_path, const char *sysroot,
                                     GMainContext *context, double timeout, CliHostviewFunc func,
                                     gpointer user_data)
{
	return cli_hostview_job_new_full(qmp_path, NULL, sysroot, context, timeout, func,
	                                 user_data);
}

CliHostviewJob *cli_hostview_job_new_full(const char *qmp_path, const char *uri,
                                          const char *sysroot, GMainContext *context,
                                          double timeout, CliHostviewFunc func, gpointer user_data)
{
	CliHostviewJob *job = g_new0(CliHostviewJob, 1);

	job->qmp_path = g_strdup(qmp_path);
	job->uri = g_strdup(uri);
	job->sysroot = g_strdup(sysroot != NULL ? sysroot : "/");
	job->replies = json_object_new();
	job->errors = json_object_new();
	job->memdev_props = json_object_new();
	job->steps = g_ptr_array_new_with_free_func((GDestroyNotify)cli_hostview_step_free);
	job->func = func;
	job->user_data = user_data;
	job->qmp = cli_qmp_open_full(qmp_path, uri, context, timeout, cli_hostview_open_cb, job);
	return job;
}

/* ---- for commands -------------------------------------------------------------------- */

#define CLI_HOSTVIEW_REGISTRY "cli-hostview-jobs"

typedef struct {
	GPtrArray *registry; /* borrowed: the app's list of running requests */
	CliGuest *guest;
	CliHostviewJob *job;
	CliHostviewFunc func;
	gpointer user_data;
} CliHostviewRequest;

static void cli_hostview_request_free(CliHostviewRequest *req)
{
	cli_hostview_job_free(req->job);
	g_free(req);
}

/*
 * A Proxmox VE VM's config is a fact of the host view: "pve" (cli_pve_vm_to_json()),
 * what cannot be read of it in "errors".
 */
static void cli_hostview_add_pve(JsonNode *view, guint32 vmid, const char *sysroot)
{
	g_autoptr(GError) error = NULL;
	g_auto(GStrv) flags = NULL;
	JsonNode *node;
	g_autoptr(GHashTable) models = NULL;
	g_autoptr(CliPveVm) vm = NULL;
	JsonObject *obj = NULL;
	JsonArray *errors = NULL;

	if (!gb_json_node_get_object(view, "host view", &obj, NULL))
		return;
	if (!gb_json_get_array(obj, "errors", GB_JSON_OPTIONAL, &errors, NULL) || errors == NULL) {
		errors = json_array_new();
		json_object_set_array_member(obj, "errors", errors);
	}
	models = cli_pve_cpu_models_load(&error);
	if (models == NULL) {
		json_array_add_string_element(errors, error->message);
		g_clear_error(&error);
	}
	vm = cli_pve_vm_load(vmid, NULL, &error);
	if (vm == NULL) {
		json_array_add_string_element(errors, error->message);
		return;
	}
	for (guint i = 0; vm->unknown_keys[i] != NULL; i++) {
		g_autofree char *msg =
		    g_strdup_printf("VM %u's config: unknown key '%s', ignored (as PVE ignores it)",
		                    vmid, vm->unknown_keys[i]);
		json_array_add_string_element(errors, msg);
	}
	node = cli_pve_vm_to_json(vm, models);
	/* what this node's CPU can run, for census --connect pve:///cluster */
	flags = cli_host_read_cpu_flags(sysroot != NULL ? sysroot : "/", NULL);
	if (flags != NULL) {
		JsonObject *pve = json_node_get_object(node);
		g_autofree char *joined = g_strjoinv(" ", flags);
		g_autofree char *digest =
		    g_compute_checksum_for_string(G_CHECKSUM_SHA256, joined, -1);

		json_object_set_string_member(pve, "node_cpu_type",
		                              cli_pve_cpu_types[cli_pve_cpu_rank(flags)].type);
		json_object_set_boolean_member(
		    pve, "node_pclmulqdq",
		    g_strv_contains((const char *const *)flags, "pclmulqdq"));
		json_object_set_string_member(pve, "node_cpu_digest", digest);
	}
	json_object_set_member(obj, "pve", node);
}

static void cli_hostview_request_done_cb(JsonNode *view, const GError *error, gpointer user_data)
{
	CliHostviewRequest *req = user_data;
	guint32 vmid = req->guest->target->vmid;
	g_autoptr(GError) busy = NULL;
	g_autofree char *qmp = vmid != 0 ? cli_pve_qmp_path(vmid) : NULL;

	/* PVE's monitor serves one client: no greeting is qm, the API or a backup on it */
	if (vmid != 0 && error != NULL && g_error_matches(error, GB_ERROR, GB_ERROR_TIMEOUT) &&
	    strstr(error->message, "no QMP greeting") != NULL) {
		busy =
		    g_error_new(GB_ERROR, GB_ERROR_BUSY,
		                "busy: %s gave no QMP greeting: another client holds the monitor "
		                "(QEMU serves one at a time: qm, the PVE API or a backup); try "
		                "again later",
		                qmp);
		error = busy;
	}
	if (vmid != 0 && view != NULL)
		cli_hostview_add_pve(view, vmid, req->guest->app->opts.host_sysroot);
	/* a guest that timed out or was interrupted meanwhile hears nothing more */
	if (!cli_guest_is_done(req->guest))
		req->func(view, error, req->user_data);
	g_ptr_array_remove_fast(req->registry, req);
}

void cli_hostview_collect_async(CliApp *app, CliGuest *guest, const char *qmp_path,
                                CliHostviewFunc func, gpointer user_data)
{
	CliHostviewRequest *req = g_new0(CliHostviewRequest, 1);
	GPtrArray *registry = g_object_get_data(G_OBJECT(app->cancellable), CLI_HOSTVIEW_REGISTRY);

	/* the cancellable lives exactly as long as the app: jobs still running go with it */
	if (registry == NULL) {
		registry =
		    g_ptr_array_new_with_free_func((GDestroyNotify)cli_hostview_request_free);
		g_object_set_data_full(G_OBJECT(app->cancellable), CLI_HOSTVIEW_REGISTRY, registry,
		                       (GDestroyNotify)g_ptr_array_unref);
	}
	req->registry = registry;
	req->guest = guest;
	req->func = func;
	req->user_data = user_data;
	g_ptr_array_add(registry, req);
	/* libvirt:DOMAIN is the domain's monitor on the guest's own connection */
	req->job = cli_hostview_job_new_full(qmp_path, guest->target->uri, app->opts.host_sysroot,
	                                     app->context, app->opts.timeout,
	                                     cli_hostview_request_done_cb, req);
}

const char *cli_hostview_get_qmp_path(CliApp *app, CliGuest *guest)
{
	/* one --qmp cannot be the monitor of several guests: those use qmp= */
	if (app->opts.qmp != NULL && app->targets != NULL && app->targets->len == 1)
		return app->opts.qmp;
	return guest->target->qmp;
}

gboolean cli_option_host_cb(const char *option_name, const char *value, gpointer data,
                            GError **error)
{
	CliApp *app = data;
	gboolean is_qmp = g_strcmp0(option_name, "--qmp") == 0;

	if (value[0] == '\0') {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s needs a %s",
		            option_name, is_qmp ? "socket path" : "directory");
		return FALSE;
	}
	if (is_qmp) {
		g_free(app->opts.qmp);
		app->opts.qmp = g_strdup(value);
		return TRUE;
	}
	if (!g_file_test(value, G_FILE_TEST_IS_DIR)) {
		g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
		            "--host-sysroot %s is not a directory", value);
		return FALSE;
	}
	g_free(app->opts.host_sysroot);
	app->opts.host_sysroot = g_strdup(value);
	return TRUE;
}

gboolean cli_hostview_check_options(CliApp *app, GError **error)
{
	if (app->opts.qmp != NULL && app->targets != NULL && app->targets->len != 1) {
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "--qmp names the monitor of one guest, but %u targets were given "
		            "(use qmp= in the inventory)",
		            app->targets->len);
		return FALSE;
	}
	return TRUE;
}
