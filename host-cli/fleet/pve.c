/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>

#include "gb-error.h"
#include "gb-json.h"

#include "fleet/host-files.h"
#include "fleet/pve.h"

/* ---- freeing ------------------------------------------------------------------------- */

static void cli_pve_disk_free(CliPveDisk *disk)
{
	g_free(disk->key);
	g_free(disk->value);
	g_free(disk->bus);
	g_free(disk->volume);
	g_free(disk->cache);
	g_free(disk->aio);
	g_free(disk);
}

static void cli_pve_nic_free(CliPveNic *nic)
{
	g_free(nic->key);
	g_free(nic->value);
	g_free(nic->model);
	g_free(nic->bridge);
	g_free(nic);
}

void cli_pve_vm_free(CliPveVm *vm)
{
	if (vm == NULL)
		return;
	g_free(vm->path);
	g_free(vm->name);
	g_free(vm->cpu);
	g_free(vm->cpu_type);
	g_free(vm->cpu_flags);
	g_free(vm->scsihw);
	if (vm->disks != NULL)
		g_ptr_array_unref(vm->disks);
	if (vm->nics != NULL)
		g_ptr_array_unref(vm->nics);
	g_free(vm->hugepages);
	g_free(vm->args);
	g_free(vm->port_socket);
	g_free(vm->args_problem);
	g_strfreev(vm->snapshots);
	g_strfreev(vm->unknown_keys);
	g_free(vm);
}

static void cli_pve_node_free(CliPveNode *node)
{
	g_free(node->name);
	g_free(node->ip);
	g_free(node);
}

void cli_pve_members_free(CliPveMembers *members)
{
	if (members == NULL)
		return;
	g_free(members->local);
	g_ptr_array_unref(members->nodes);
	g_free(members);
}

void cli_pve_cpu_model_free(CliPveCpuModel *model)
{
	if (model == NULL)
		return;
	g_free(model->name);
	g_free(model->reported_model);
	g_free(model->flags);
	g_free(model);
}

/* ---- where ---------------------------------------------------------------------------- */

static const char *cli_pve_env_dir(const char *env, const char *fallback)
{
	const char *dir = g_getenv(env);

	return dir != NULL && dir[0] != '\0' ? dir : fallback;
}

const char *cli_pve_get_etc(void)
{
	return cli_pve_env_dir(CLI_PVE_ETC_ENV, CLI_PVE_ETC_DEFAULT);
}

const char *cli_pve_get_run(void)
{
	return cli_pve_env_dir(CLI_PVE_RUN_ENV, CLI_PVE_RUN_DEFAULT);
}

char *cli_pve_qmp_path(guint32 vmid)
{
	g_autofree char *base = g_strdup_printf("%u.qmp", vmid);
	return g_build_filename(cli_pve_get_run(), base, NULL);
}

char *cli_pve_qga_path(guint32 vmid)
{
	g_autofree char *base = g_strdup_printf("%u.qga", vmid);
	return g_build_filename(cli_pve_get_run(), base, NULL);
}

gboolean cli_pve_vm_is_running(guint32 vmid)
{
	g_autofree char *base = g_strdup_printf("%u.pid", vmid);
	g_autofree char *path = g_build_filename(cli_pve_get_run(), base, NULL);
	g_autofree char *text = NULL;
	gsize len = 0;
	guint64 pid = 0;

	if (!cli_read_regular_file(path, 64, &text, &len, NULL))
		return FALSE;
	g_strstrip(text);
	if (!cli_host_parse_uint(text, G_MAXINT32, &pid) || pid < 2)
		return FALSE;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

char *cli_pve_port_args(guint32 vmid)
{
	g_autofree char *base = g_strdup_printf("%u.guestbench", vmid);
	g_autofree char *path = g_build_filename(cli_pve_get_run(), base, NULL);

	return g_strdup_printf("-chardev socket,id=guestbench,path=%s,server=on,wait=off "
	                       "-device virtio-serial,id=guestbench0 "
	                       "-device virtserialport,chardev=guestbench,name=" CLI_PVE_PORT_NAME
	                       ",bus=guestbench0.0",
	                       path);
}

gboolean cli_pve_parse_vmid(const char *text, guint32 *out, GError **error)
{
	guint64 val = 0;

	if (text == NULL || text[0] == '\0' || strlen(text) > 9 ||
	    !g_ascii_string_to_unsigned(text, 10, CLI_PVE_VMID_MIN, CLI_PVE_VMID_MAX, &val, NULL) ||
	    text[0] == '0') {
		g_autofree char *valid = g_utf8_make_valid(text != NULL ? text : "", -1);
		g_set_error(error, GB_ERROR, GB_ERROR_INVALID_ARGUMENT,
		            "'%s' is not a VMID (a number from %u to %u)", valid, CLI_PVE_VMID_MIN,
		            CLI_PVE_VMID_MAX);
		return FALSE;
	}
	*out = (guint32)val;
	return TRUE;
}

/* ---- property strings ------------------------------------------------------------------ */

/*
 * PVE's "default,key=value,key=value": the first item may lack "key=" (the
 * default key). Returns key -> value; the default item under default_key.
 */
static GHashTable *cli_pve_parse_props(const char *text, const char *default_key)
{
	GHashTable *props = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	g_auto(GStrv) items = g_strsplit(text, ",", -1);

	for (guint i = 0; items[i] != NULL; i++) {
		const char *eq = strchr(items[i], '=');

		if (items[i][0] == '\0')
			continue;
		if (eq == NULL) {
			if (i == 0 && default_key != NULL)
				g_hash_table_replace(props, g_strdup(default_key),
				                     g_strdup(items[i]));
			else
				g_hash_table_replace(props, g_strdup(items[i]), g_strdup(""));
			continue;
		}
		g_hash_table_replace(props, g_strndup(items[i], eq - items[i]), g_strdup(eq + 1));
	}
	return props;
}

static gboolean cli_pve_bool(const char *value)
{
	return value != NULL &&
	       (g_strcmp0(value, "1") == 0 || g_ascii_strcasecmp(value, "on") == 0 ||
	        g_ascii_strcasecmp(value, "yes") == 0 || g_ascii_strcasecmp(value, "true") == 0);
}

/* ---- VM configs ------------------------------------------------------------------------ */

/* The keys of PVE's VM config (qm.conf(5)); indexed ones end in a number. */
static const char *const cli_pve_plain_keys[] = { "acpi",
	                                          "affinity",
	                                          "agent",
	                                          "allow-ksm",
	                                          "amd-sev",
	                                          "arch",
	                                          "args",
	                                          "audio0",
	                                          "autostart",
	                                          "balloon",
	                                          "bios",
	                                          "boot",
	                                          "bootdisk",
	                                          "cdrom",
	                                          "cicustom",
	                                          "cipassword",
	                                          "citype",
	                                          "ciupgrade",
	                                          "ciuser",
	                                          "cores",
	                                          "cpu",
	                                          "cpulimit",
	                                          "cpuunits",
	                                          "description",
	                                          "digest",
	                                          "efidisk0",
	                                          "freeze",
	                                          "hookscript",
	                                          "hotplug",
	                                          "hugepages",
	                                          "intel-tdx",
	                                          "ivshmem",
	                                          "keephugepages",
	                                          "keyboard",
	                                          "kvm",
	                                          "localtime",
	                                          "lock",
	                                          "machine",
	                                          "memory",
	                                          "meta",
	                                          "migrate_downtime",
	                                          "migrate_speed",
	                                          "name",
	                                          "nameserver",
	                                          "numa",
	                                          "onboot",
	                                          "ostype",
	                                          "parent",
	                                          "protection",
	                                          "reboot",
	                                          "rng0",
	                                          "runningcpu",
	                                          "running-nets-host-mtu",
	                                          "runningmachine",
	                                          "scsihw",
	                                          "searchdomain",
	                                          "shares",
	                                          "smbios1",
	                                          "smp",
	                                          "snaptime",
	                                          "snapstate",
	                                          "sockets",
	                                          "spice_enhancements",
	                                          "sshkeys",
	                                          "startdate",
	                                          "startup",
	                                          "tablet",
	                                          "tags",
	                                          "tdf",
	                                          "template",
	                                          "tpmstate0",
	                                          "unused",
	                                          "vcpus",
	                                          "vga",
	                                          "vmgenid",
	                                          "vmstate",
	                                          "watchdog",
	                                          NULL };
static const char *const cli_pve_indexed_keys[] = { "hostpci",  "ide",      "ipconfig", "net",
	                                            "numa",     "parallel", "sata",     "scsi",
	                                            "serial",   "unused",   "usb",      "virtio",
	                                            "virtiofs", NULL };

/* "scsi12" -> "scsi" when it is an indexed key of PVE's; NULL otherwise. */
static const char *cli_pve_indexed_prefix(const char *key)
{
	gsize n = strlen(key);

	while (n > 0 && g_ascii_isdigit(key[n - 1]))
		n--;
	if (n == strlen(key) || n == 0)
		return NULL;
	for (guint i = 0; cli_pve_indexed_keys[i] != NULL; i++) {
		if (strlen(cli_pve_indexed_keys[i]) == n &&
		    strncmp(key, cli_pve_indexed_keys[i], n) == 0)
			return cli_pve_indexed_keys[i];
	}
	return NULL;
}

static gboolean cli_pve_key_known(const char *key)
{
	return g_strv_contains(cli_pve_plain_keys, key) || cli_pve_indexed_prefix(key) != NULL;
}

/* PVE's key grammar: [a-z][a-z_-]*[0-9]* */
static gboolean cli_pve_key_valid(const char *key, gsize len)
{
	gsize i = 0;

	if (len == 0 || !g_ascii_islower(key[0]))
		return FALSE;
	while (i < len && (g_ascii_islower(key[i]) || key[i] == '_' || key[i] == '-'))
		i++;
	while (i < len && g_ascii_isdigit(key[i]))
		i++;
	return i == len;
}

static void cli_pve_vm_set_cpu(CliPveVm *vm, const char *value)
{
	g_autoptr(GHashTable) props = cli_pve_parse_props(value, "cputype");
	const char *type = g_hash_table_lookup(props, "cputype");

	g_free(vm->cpu);
	vm->cpu = g_strdup(value);
	g_free(vm->cpu_type);
	vm->cpu_type = g_strdup(type != NULL && type[0] != '\0' ? type : CLI_PVE_DEFAULT_CPU);
	g_free(vm->cpu_flags);
	vm->cpu_flags = g_strdup(g_hash_table_lookup(props, "flags"));
	vm->cpu_hidden = cli_pve_bool(g_hash_table_lookup(props, "hidden"));
}

static void cli_pve_vm_add_disk(CliPveVm *vm, const char *key, const char *bus, const char *value)
{
	g_autoptr(GHashTable) props = cli_pve_parse_props(value, "file");
	CliPveDisk *disk = g_new0(CliPveDisk, 1);

	disk->key = g_strdup(key);
	disk->value = g_strdup(value);
	disk->bus = g_strdup(bus);
	disk->volume = g_strdup(g_hash_table_lookup(props, "file"));
	disk->cache = g_strdup(g_hash_table_lookup(props, "cache"));
	disk->aio = g_strdup(g_hash_table_lookup(props, "aio"));
	disk->iothread = cli_pve_bool(g_hash_table_lookup(props, "iothread"));
	disk->cdrom = g_strcmp0(g_hash_table_lookup(props, "media"), "cdrom") == 0;
	g_ptr_array_add(vm->disks, disk);
}

static const char *const cli_pve_nic_models[] = { "virtio",        "e1000",         "e1000e",
	                                          "vmxnet3",       "rtl8139",       "ne2k_pci",
	                                          "pcnet",         "i82551",        "i82557b",
	                                          "i82559er",      "ne2k_isa",      "e1000-82540em",
	                                          "e1000-82544gc", "e1000-82545em", NULL };

static void cli_pve_vm_add_nic(CliPveVm *vm, const char *key, const char *value)
{
	g_autoptr(GHashTable) props = cli_pve_parse_props(value, NULL);
	CliPveNic *nic = g_new0(CliPveNic, 1);
	GHashTableIter iter;
	gpointer k, v;
	guint64 queues = 0;
	guint n_models = 0;

	nic->key = g_strdup(key);
	nic->value = g_strdup(value);
	/* "virtio=MAC" or "model=virtio,macaddr=MAC". Two models in one line
	 * ("virtio=MAC,e1000=MAC", "e1000=MAC,model=virtio") is a line PVE
	 * refuses: the model stays unknown. */
	g_hash_table_iter_init(&iter, props);
	while (g_hash_table_iter_next(&iter, &k, &v)) {
		if (g_strv_contains(cli_pve_nic_models, k) && ++n_models == 1)
			nic->model = g_strdup(k);
	}
	if (g_hash_table_contains(props, "model"))
		n_models++;
	if (n_models > 1)
		g_clear_pointer(&nic->model, g_free);
	else if (nic->model == NULL)
		nic->model = g_strdup(g_hash_table_lookup(props, "model"));
	nic->bridge = g_strdup(g_hash_table_lookup(props, "bridge"));
	if (g_hash_table_lookup(props, "queues") != NULL &&
	    cli_host_parse_uint(g_hash_table_lookup(props, "queues"), 64, &queues))
		nic->queues = (guint)queues;
	g_ptr_array_add(vm->nics, nic);
}

/* Characters that make a shell do more than split words: args: with them is not used. */
#define CLI_PVE_SHELL_META "`$;|&<>(){}\\!*?~#\n\r"

/* QEMU's "a,b=c,,d": items split on single commas, ",," is a comma. */
static GPtrArray *cli_pve_qemu_opts(const char *text)
{
	GPtrArray *items = g_ptr_array_new_with_free_func(g_free);
	GString *cur = g_string_new(NULL);

	for (const char *p = text; *p != '\0'; p++) {
		if (*p == ',' && p[1] == ',') {
			g_string_append_c(cur, ',');
			p++;
		} else if (*p == ',') {
			g_ptr_array_add(items, g_string_free(cur, FALSE));
			cur = g_string_new(NULL);
		} else {
			g_string_append_c(cur, *p);
		}
	}
	g_ptr_array_add(items, g_string_free(cur, FALSE));
	return items;
}

/* The value of key= among items, NULL when absent; a bare "key" is "on". */
static const char *cli_pve_opt(GPtrArray *items, const char *key)
{
	gsize n = strlen(key);

	for (guint i = 0; i < items->len; i++) {
		const char *item = g_ptr_array_index(items, i);
		if (strncmp(item, key, n) == 0 && item[n] == '=')
			return item + n + 1;
		if (strcmp(item, key) == 0)
			return "on";
	}
	return NULL;
}

/*
 * Finds our port in args:: a virtserialport named org.guestbench.agent.0 on a
 * chardev that is a unix socket QEMU listens on. Nothing is run: the line is
 * split into words as PVE splits it (quotes), and refused when a shell would
 * read more into it.
 */
static void cli_pve_vm_scan_args(CliPveVm *vm)
{
	g_auto(GStrv) argv = NULL;
	g_autoptr(GError) error = NULL;
	g_autoptr(GHashTable) chardevs = NULL; /* id -> path, or "" for one we cannot use */
	const char *bad = strpbrk(vm->args, CLI_PVE_SHELL_META);
	g_autofree char *port_chardev = NULL;
	const char *path;

	if (bad != NULL) {
		vm->args_problem = g_strdup_printf(
		    "args: has the shell metacharacter '%c': guestbench does not use such a line",
		    g_ascii_isprint(*bad) ? *bad : '?');
		return;
	}
	if (!g_shell_parse_argv(vm->args, NULL, &argv, &error)) {
		vm->args_problem =
		    g_strdup_printf("args: cannot be split into words: %s", error->message);
		return;
	}
	chardevs = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	for (guint i = 0; argv[i] != NULL; i++) {
		const char *opt = argv[i];
		const char *value = argv[i + 1];
		g_autoptr(GPtrArray) items = NULL;

		if (g_str_has_prefix(opt, "--"))
			opt++;
		if (value == NULL || (strcmp(opt, "-chardev") != 0 && strcmp(opt, "-device") != 0))
			continue;
		i++;
		items = cli_pve_qemu_opts(value);
		if (strcmp(opt, "-chardev") == 0) {
			const char *id = cli_pve_opt(items, "id");
			const char *p = cli_pve_opt(items, "path");
			gboolean server = cli_pve_bool(cli_pve_opt(items, "server"));

			if (id == NULL)
				continue;
			g_hash_table_replace(
			    chardevs, g_strdup(id),
			    g_strdup(strcmp((char *)items->pdata[0], "socket") == 0 && server &&
			                     p != NULL && p[0] == '/'
			                 ? p
			                 : ""));
			continue;
		}
		if (strcmp((char *)items->pdata[0], "virtserialport") == 0 &&
		    g_strcmp0(cli_pve_opt(items, "name"), CLI_PVE_PORT_NAME) == 0) {
			g_free(port_chardev);
			port_chardev = g_strdup(cli_pve_opt(items, "chardev"));
			if (port_chardev == NULL) {
				vm->args_problem =
				    g_strdup("args: has a virtserialport named " CLI_PVE_PORT_NAME
				             " without chardev=");
				return;
			}
		}
	}
	if (port_chardev == NULL)
		return;
	path = g_hash_table_lookup(chardevs, port_chardev);
	if (path == NULL) {
		vm->args_problem =
		    g_strdup_printf("args: the port " CLI_PVE_PORT_NAME " uses chardev '%s', which "
		                    "args: does not define",
		                    port_chardev);
		return;
	}
	if (path[0] == '\0') {
		vm->args_problem = g_strdup_printf(
		    "args: chardev '%s' of the port " CLI_PVE_PORT_NAME " is not a unix socket "
		    "QEMU listens on (socket,path=/ABSOLUTE,server=on,wait=off)",
		    port_chardev);
		return;
	}
	vm->port_socket = g_strdup(path);
}

static gboolean cli_pve_check_text(const char *what, const char *text, gsize len, GError **error)
{
	if (memchr(text, '\0', len) != NULL) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "%s has a NUL byte: not a text file",
		            what);
		return FALSE;
	}
	if (!g_utf8_validate_len(text, len, NULL)) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE, "%s is not UTF-8: not a PVE file",
		            what);
		return FALSE;
	}
	return TRUE;
}

static gboolean cli_pve_vm_apply(CliPveVm *vm, const char *key, const char *value)
{
	const char *prefix = cli_pve_indexed_prefix(key);
	guint64 n = 0;

	if (strcmp(key, "name") == 0) {
		g_free(vm->name);
		vm->name = g_strdup(value);
	} else if (strcmp(key, "cpu") == 0) {
		cli_pve_vm_set_cpu(vm, value);
	} else if (strcmp(key, "scsihw") == 0) {
		g_free(vm->scsihw);
		vm->scsihw = g_strdup(value);
	} else if (strcmp(key, "numa") == 0) {
		vm->numa = cli_pve_bool(value);
	} else if (strcmp(key, "hugepages") == 0) {
		g_free(vm->hugepages);
		vm->hugepages = g_strdup(value);
	} else if (strcmp(key, "agent") == 0) {
		g_autoptr(GHashTable) props = cli_pve_parse_props(value, "enabled");
		vm->agent = cli_pve_bool(g_hash_table_lookup(props, "enabled"));
	} else if (strcmp(key, "cores") == 0 && cli_host_parse_uint(value, 4096, &n)) {
		vm->cores = (guint)n;
	} else if (strcmp(key, "sockets") == 0 && cli_host_parse_uint(value, 4096, &n)) {
		vm->sockets = (guint)n;
	} else if (strcmp(key, "memory") == 0) {
		g_autoptr(GHashTable) props = cli_pve_parse_props(value, "current");
		const char *current = g_hash_table_lookup(props, "current");
		if (current != NULL && cli_host_parse_uint(current, G_MAXUINT32, &n))
			vm->memory_mib = n;
	} else if (strcmp(key, "args") == 0) {
		g_free(vm->args);
		vm->args = g_strdup(value);
	} else if (g_strcmp0(prefix, "net") == 0) {
		cli_pve_vm_add_nic(vm, key, value);
	} else if (g_strcmp0(prefix, "scsi") == 0 || g_strcmp0(prefix, "virtio") == 0 ||
	           g_strcmp0(prefix, "sata") == 0 || g_strcmp0(prefix, "ide") == 0) {
		cli_pve_vm_add_disk(vm, key, prefix, value);
	} else {
		return cli_pve_key_known(key);
	}
	return TRUE;
}

CliPveVm *cli_pve_vm_parse(guint32 vmid, const char *text, gsize len, GError **error)
{
	g_autoptr(CliPveVm) vm = g_new0(CliPveVm, 1);
	g_autoptr(GPtrArray) snapshots = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GPtrArray) unknown = g_ptr_array_new_with_free_func(g_free);
	g_autofree char *what = g_strdup_printf("VM %u's config", vmid);
	g_autofree char *copy = NULL;
	g_auto(GStrv) lines = NULL;
	gboolean in_running = TRUE;

	if (len > CLI_PVE_MAX_FILE_SIZE) {
		g_set_error(error, GB_ERROR, GB_ERROR_TOO_LARGE,
		            "%s is %" G_GSIZE_FORMAT " bytes, over PVE's %d", what, len,
		            CLI_PVE_MAX_FILE_SIZE);
		return NULL;
	}
	if (!cli_pve_check_text(what, text, len, error))
		return NULL;
	vm->vmid = vmid;
	vm->disks = g_ptr_array_new_with_free_func((GDestroyNotify)cli_pve_disk_free);
	vm->nics = g_ptr_array_new_with_free_func((GDestroyNotify)cli_pve_nic_free);
	vm->cpu_type = g_strdup(CLI_PVE_DEFAULT_CPU);
	copy = g_strndup(text, len);
	lines = g_strsplit(copy, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		char *line = g_strstrip(lines[i]);
		const char *colon;
		g_autofree char *key = NULL;

		if (line[0] == '\0' || line[0] == '#')
			continue;
		if (line[0] == '[') {
			gsize n = strlen(line);
			if (n < 3 || line[n - 1] != ']') {
				g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
				            "%s, line %u: a section header without ']'", what,
				            i + 1);
				return NULL;
			}
			/* the running config ends at the first section */
			in_running = FALSE;
			g_ptr_array_add(snapshots, g_strndup(line + 1, n - 2));
			continue;
		}
		colon = strchr(line, ':');
		if (colon == NULL || !cli_pve_key_valid(line, colon - line)) {
			g_autofree char *shown =
			    g_utf8_substring(line, 0, MIN(g_utf8_strlen(line, -1), 60));
			g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
			            "%s, line %u: not 'key: value' ('%s')", what, i + 1, shown);
			return NULL;
		}
		if (!in_running)
			continue;
		key = g_strndup(line, colon - line);
		if (!cli_pve_vm_apply(vm, key, g_strstrip((char *)colon + 1)) &&
		    !g_ptr_array_find_with_equal_func(unknown, key, g_str_equal, NULL))
			g_ptr_array_add(unknown, g_steal_pointer(&key));
	}
	if (vm->args != NULL)
		cli_pve_vm_scan_args(vm);
	g_ptr_array_add(snapshots, NULL);
	vm->snapshots = (char **)g_ptr_array_steal(snapshots, NULL);
	g_ptr_array_add(unknown, NULL);
	vm->unknown_keys = (char **)g_ptr_array_steal(unknown, NULL);
	return g_steal_pointer(&vm);
}

CliPveVm *cli_pve_vm_load(guint32 vmid, const char *path, GError **error)
{
	g_autofree char *own = NULL;
	g_autofree char *text = NULL;
	gsize len = 0;
	CliPveVm *vm;

	if (path == NULL) {
		g_autofree char *base = g_strdup_printf("%u.conf", vmid);
		own = g_build_filename(cli_pve_get_etc(), "qemu-server", base, NULL);
		path = own;
	}
	if (!cli_read_regular_file(path, CLI_PVE_MAX_FILE_SIZE, &text, &len, error)) {
		g_prefix_error(error, "VM %u: ", vmid);
		return NULL;
	}
	vm = cli_pve_vm_parse(vmid, text, len, error);
	if (vm != NULL)
		vm->path = g_strdup(path);
	return vm;
}

/* ---- cpu-models.conf ------------------------------------------------------------------- */

GHashTable *cli_pve_cpu_models_parse(const char *text, gsize len, GError **error)
{
	g_autoptr(GHashTable) models = g_hash_table_new_full(
	    g_str_hash, g_str_equal, NULL, (GDestroyNotify)cli_pve_cpu_model_free);
	g_autofree char *copy = NULL;
	g_auto(GStrv) lines = NULL;
	CliPveCpuModel *cur = NULL;

	if (!cli_pve_check_text("cpu-models.conf", text, len, error))
		return NULL;
	copy = g_strndup(text, len);
	lines = g_strsplit(copy, "\n", -1);
	for (guint i = 0; lines[i] != NULL; i++) {
		gboolean indented = lines[i][0] == ' ' || lines[i][0] == '\t';
		char *line = g_strstrip(lines[i]);
		char *sp;

		if (line[0] == '\0' || line[0] == '#') {
			if (line[0] == '\0')
				cur = NULL;
			continue;
		}
		if (!indented) {
			const char *name;
			if (!g_str_has_prefix(line, "cpu-model:")) {
				g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
				            "cpu-models.conf, line %u: expected 'cpu-model: NAME'",
				            i + 1);
				return NULL;
			}
			name = g_strstrip(line + strlen("cpu-model:"));
			if (name[0] == '\0' || strpbrk(name, " \t,;") != NULL) {
				g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
				            "cpu-models.conf, line %u: bad model name", i + 1);
				return NULL;
			}
			cur = g_new0(CliPveCpuModel, 1);
			cur->name = g_strdup(name);
			cur->reported_model = g_strdup(CLI_PVE_DEFAULT_CPU);
			g_hash_table_replace(models, cur->name, cur);
			continue;
		}
		if (cur == NULL) {
			g_set_error(
			    error, GB_ERROR, GB_ERROR_PARSE,
			    "cpu-models.conf, line %u: a property outside a cpu-model section",
			    i + 1);
			return NULL;
		}
		sp = strpbrk(line, " \t");
		if (sp == NULL)
			continue;
		*sp = '\0';
		sp = g_strstrip(sp + 1);
		if (strcmp(line, "reported-model") == 0) {
			g_free(cur->reported_model);
			cur->reported_model = g_strdup(sp);
		} else if (strcmp(line, "flags") == 0) {
			g_free(cur->flags);
			cur->flags = g_strdup(sp);
		} else if (strcmp(line, "hidden") == 0) {
			cur->hidden = cli_pve_bool(sp);
		}
	}
	return g_steal_pointer(&models);
}

GHashTable *cli_pve_cpu_models_load(GError **error)
{
	g_autofree char *path =
	    g_build_filename(cli_pve_get_etc(), "virtual-guest", "cpu-models.conf", NULL);
	g_autofree char *text = NULL;
	gsize len = 0;
	GHashTable *models;

	if (!g_file_test(path, G_FILE_TEST_EXISTS))
		return g_hash_table_new_full(g_str_hash, g_str_equal, NULL,
		                             (GDestroyNotify)cli_pve_cpu_model_free);
	if (!cli_read_regular_file(path, CLI_PVE_MAX_FILE_SIZE, &text, &len, error))
		return NULL;
	models = cli_pve_cpu_models_parse(text, len, error);
	if (models == NULL)
		g_prefix_error(error, "%s: ", path);
	return models;
}

/* ---- .members -------------------------------------------------------------------------- */

static gint cli_pve_node_cmp(gconstpointer a, gconstpointer b)
{
	const CliPveNode *na = *(CliPveNode *const *)a;
	const CliPveNode *nb = *(CliPveNode *const *)b;
	return strcmp(na->name, nb->name);
}

/* A node name as PVE allows it (a host name label): what ssh and paths can take. */
static gboolean cli_pve_node_name_valid(const char *name)
{
	gsize n = strlen(name);

	if (n == 0 || n > 63 || name[0] == '-')
		return FALSE;
	for (const char *p = name; *p != '\0'; p++) {
		if (!g_ascii_isalnum(*p) && *p != '-')
			return FALSE;
	}
	return TRUE;
}

CliPveMembers *cli_pve_members_parse(const char *text, gsize len, GError **error)
{
	g_autoptr(CliPveMembers) members = g_new0(CliPveMembers, 1);
	g_autoptr(JsonNode) root = NULL;
	JsonObject *obj = NULL;
	JsonObject *list = NULL;
	const char *local = NULL;

	members->nodes = g_ptr_array_new_with_free_func((GDestroyNotify)cli_pve_node_free);
	if (!cli_pve_check_text(".members", text, len, error))
		return NULL;
	root = gb_json_parse(text, len, error);
	if (root == NULL || !gb_json_node_get_object(root, ".members", &obj, error) ||
	    !gb_json_get_string(obj, "nodename", GB_JSON_OPTIONAL, &local, error) ||
	    !gb_json_get_object(obj, "nodelist", GB_JSON_OPTIONAL, &list, error)) {
		g_prefix_error(error, ".members: ");
		return NULL;
	}
	if (local != NULL && !cli_pve_node_name_valid(local)) {
		g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
		            ".members: nodename is not a node name");
		return NULL;
	}
	members->local = g_strdup(local);
	if (list != NULL) {
		g_autoptr(GList) names = json_object_get_members(list);
		for (GList *l = names; l != NULL; l = l->next) {
			JsonObject *entry = NULL;
			const char *ip = NULL;
			gint64 id = 0, online = 0;
			CliPveNode *node;

			if (!cli_pve_node_name_valid(l->data)) {
				g_autofree char *valid = g_utf8_make_valid(l->data, -1);
				g_set_error(error, GB_ERROR, GB_ERROR_PARSE,
				            ".members: '%s' is not a node name", valid);
				return NULL;
			}
			if (!gb_json_get_object(list, l->data, GB_JSON_REQUIRED, &entry, error) ||
			    !gb_json_get_string(entry, "ip", GB_JSON_OPTIONAL, &ip, error) ||
			    !gb_json_get_int(entry, "id", GB_JSON_OPTIONAL, 0, G_MAXUINT32, &id,
			                     error) ||
			    !gb_json_get_int(entry, "online", GB_JSON_OPTIONAL, 0, 1, &online,
			                     error)) {
				g_prefix_error(error, ".members: node %s: ", (char *)l->data);
				return NULL;
			}
			node = g_new0(CliPveNode, 1);
			node->name = g_strdup(l->data);
			node->ip = g_strdup(ip);
			node->id = (guint)id;
			node->online = online != 0;
			g_ptr_array_add(members->nodes, node);
		}
	}
	g_ptr_array_sort(members->nodes, cli_pve_node_cmp);
	return g_steal_pointer(&members);
}

CliPveMembers *cli_pve_members_load(GError **error)
{
	g_autofree char *path = g_build_filename(cli_pve_get_etc(), ".members", NULL);
	g_autofree char *text = NULL;
	gsize len = 0;
	CliPveMembers *members;

	if (!g_file_test(path, G_FILE_TEST_EXISTS))
		return NULL;
	if (!cli_read_regular_file(path, CLI_PVE_MAX_FILE_SIZE, &text, &len, error))
		return NULL;
	members = cli_pve_members_parse(text, len, error);
	if (members == NULL)
		g_prefix_error(error, "%s: ", path);
	return members;
}

char *cli_pve_local_node(void)
{
	g_autoptr(CliPveMembers) members = cli_pve_members_load(NULL);

	if (members != NULL && members->local != NULL)
		return g_strdup(members->local);
	return g_strdup(g_get_host_name());
}

/* ---- listing -------------------------------------------------------------------------- */

static gint cli_pve_vmid_cmp(gconstpointer a, gconstpointer b)
{
	guint32 x = *(const guint32 *)a, y = *(const guint32 *)b;
	return x < y ? -1 : x > y;
}

GArray *cli_pve_list_vmids(const char *dir, GError **error)
{
	g_autoptr(GDir) d = g_dir_open(dir, 0, error);
	GArray *vmids;
	const char *name;

	if (d == NULL)
		return NULL;
	vmids = g_array_new(FALSE, FALSE, sizeof(guint32));
	while ((name = g_dir_read_name(d)) != NULL) {
		g_autofree char *stem = NULL;
		guint32 vmid = 0;

		if (!g_str_has_suffix(name, ".conf"))
			continue;
		stem = g_strndup(name, strlen(name) - strlen(".conf"));
		if (cli_pve_parse_vmid(stem, &vmid, NULL))
			g_array_append_val(vmids, vmid);
	}
	g_array_sort(vmids, cli_pve_vmid_cmp);
	return vmids;
}

static gint cli_pve_str_cmp(gconstpointer a, gconstpointer b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **cli_pve_list_nodes(GError **error)
{
	g_autofree char *path = g_build_filename(cli_pve_get_etc(), "nodes", NULL);
	g_autoptr(GDir) d = g_dir_open(path, 0, error);
	g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
	const char *name;

	if (d == NULL)
		return NULL;
	while ((name = g_dir_read_name(d)) != NULL) {
		if (cli_pve_node_name_valid(name))
			g_ptr_array_add(names, g_strdup(name));
	}
	g_ptr_array_sort(names, cli_pve_str_cmp);
	g_ptr_array_add(names, NULL);
	return (char **)g_ptr_array_steal(names, NULL);
}

/* ---- CPU types ------------------------------------------------------------------------- */

typedef struct {
	const char *name;
	const char *base;
	guint level;
	gboolean aes;
	const char *flags; /* what PVE adds to base */
} CliPveBuiltin;

/* PVE's abstract types: the QEMU model they report and the flags they add over it. */
static const CliPveBuiltin cli_pve_builtins[] = {
	{ "kvm64", "kvm64", 1, FALSE },      { "qemu64", "qemu64", 1, FALSE },
	{ "kvm32", "kvm32", 0, FALSE },      { "qemu32", "qemu32", 0, FALSE },
	{ "x86-64-v2", "qemu64", 2, FALSE }, { "x86-64-v2-AES", "qemu64", 2, TRUE },
	{ "x86-64-v3", "qemu64", 3, TRUE },  { "x86-64-v4", "qemu64", 4, TRUE },
};

/* Named QEMU models from Westmere / Opteron_G4 on have both aes and pclmulqdq. */
static const char *const cli_pve_aes_clmul_models[] = { "Westmere",
	                                                "SandyBridge",
	                                                "IvyBridge",
	                                                "Haswell",
	                                                "Broadwell",
	                                                "Skylake",
	                                                "Cascadelake",
	                                                "Cooperlake",
	                                                "Icelake",
	                                                "SapphireRapids",
	                                                "GraniteRapids",
	                                                "SierraForest",
	                                                "ClearwaterForest",
	                                                "Opteron_G4",
	                                                "Opteron_G5",
	                                                "EPYC",
	                                                NULL };

static const char *const cli_pve_v2_flags[] = {
	"popcnt", "pni", "sse4.1", "sse4.2", "ssse3", NULL
};
static const char *const cli_pve_v3_flags[] = { "avx", "avx2", "bmi1",  "bmi2",  "f16c",
	                                        "fma", "abm",  "movbe", "xsave", NULL };

static gboolean cli_pve_has_all(char **on, const char *const *want)
{
	for (guint i = 0; want[i] != NULL; i++) {
		if (!g_strv_contains((const char *const *)on, want[i]))
			return FALSE;
	}
	return TRUE;
}

/* "+aes;-pcid" applied to out: aes, pclmulqdq, and the level that flags added up to. */
static void cli_pve_apply_flags(const char *flags, CliPveCpu *out)
{
	g_auto(GStrv) items = NULL;
	g_autoptr(GPtrArray) on = g_ptr_array_new();

	if (flags == NULL)
		return;
	items = g_strsplit(flags, ";", -1);
	for (guint i = 0; items[i] != NULL; i++) {
		gboolean add = items[i][0] != '-';
		const char *flag =
		    items[i][0] == '+' || items[i][0] == '-' ? items[i] + 1 : items[i];
		if (strcmp(flag, "aes") == 0)
			out->aes = add;
		else if (strcmp(flag, "pclmulqdq") == 0)
			out->pclmulqdq = add;
		if (add)
			g_ptr_array_add(on, (gpointer)flag);
	}
	g_ptr_array_add(on, NULL);
	if (out->known && out->level == 1 && cli_pve_has_all((char **)on->pdata, cli_pve_v2_flags))
		out->level = 2;
	if (out->known && out->level == 2 && cli_pve_has_all((char **)on->pdata, cli_pve_v3_flags))
		out->level = 3;
}

static void cli_pve_cpu_base(const char *type, CliPveCpu *out)
{
	for (guint i = 0; i < G_N_ELEMENTS(cli_pve_builtins); i++) {
		if (strcmp(type, cli_pve_builtins[i].name) == 0) {
			out->known = TRUE;
			out->level = cli_pve_builtins[i].level;
			out->aes = cli_pve_builtins[i].aes;
			out->base = g_strdup(cli_pve_builtins[i].base);
			out->flags = g_strdup(cli_pve_builtins[i].flags);
			return;
		}
	}
	g_free(out->base);
	out->base = g_strdup(type);
	if (strcmp(type, "host") == 0 || strcmp(type, "max") == 0) {
		out->host = TRUE;
		return;
	}
	for (guint i = 0; cli_pve_aes_clmul_models[i] != NULL; i++) {
		if (g_str_has_prefix(type, cli_pve_aes_clmul_models[i])) {
			out->known = TRUE;
			out->aes = TRUE;
			out->pclmulqdq = TRUE;
			out->level = g_str_has_prefix(type, "Haswell") ||
			                     g_str_has_prefix(type, "Broadwell") ||
			                     g_str_has_prefix(type, "Skylake") ||
			                     g_str_has_prefix(type, "Cascadelake") ||
			                     g_str_has_prefix(type, "Cooperlake") ||
			                     g_str_has_prefix(type, "Icelake") ||
			                     g_str_has_prefix(type, "SapphireRapids") ||
			                     g_str_has_prefix(type, "GraniteRapids") ||
			                     g_str_has_prefix(type, "EPYC")
			                 ? 3
			                 : 2;
			return;
		}
	}
}

void cli_pve_cpu_resolve(const CliPveVm *vm, GHashTable *models, CliPveCpu *out)
{
	const char *type = vm->cpu_type != NULL ? vm->cpu_type : CLI_PVE_DEFAULT_CPU;

	memset(out, 0, sizeof(*out));
	if (g_str_has_prefix(type, "custom-")) {
		const CliPveCpuModel *model =
		    models != NULL ? g_hash_table_lookup(models, type + strlen("custom-")) : NULL;
		if (model == NULL) {
			out->problem = g_strdup_printf(
			    "CPU type %s is not in cpu-models.conf (PVE will not start the VM)",
			    type);
			out->base = g_strdup(type);
			return;
		}
		cli_pve_cpu_base(model->reported_model, out);
		cli_pve_apply_flags(model->flags, out);
		g_free(out->flags);
		out->flags = g_strdup(model->flags);
	} else {
		cli_pve_cpu_base(type, out);
	}
	cli_pve_apply_flags(vm->cpu_flags, out);
}

void cli_pve_cpu_clear(CliPveCpu *cpu)
{
	g_clear_pointer(&cpu->base, g_free);
	g_clear_pointer(&cpu->problem, g_free);
	g_clear_pointer(&cpu->flags, g_free);
}

/* ---- as a fact ------------------------------------------------------------------------- */

static void cli_pve_json_string(JsonBuilder *b, const char *member, const char *value)
{
	json_builder_set_member_name(b, member);
	if (value != NULL)
		json_builder_add_string_value(b, value);
	else
		json_builder_add_null_value(b);
}

static void cli_pve_json_strv(JsonBuilder *b, const char *member, char **values)
{
	json_builder_set_member_name(b, member);
	json_builder_begin_array(b);
	for (guint i = 0; values != NULL && values[i] != NULL; i++)
		json_builder_add_string_value(b, values[i]);
	json_builder_end_array(b);
}

JsonNode *cli_pve_vm_to_json(const CliPveVm *vm, GHashTable *models)
{
	g_autoptr(JsonBuilder) b = json_builder_new();
	CliPveCpu cpu;

	cli_pve_cpu_resolve(vm, models, &cpu);
	json_builder_begin_object(b);
	json_builder_set_member_name(b, "vmid");
	json_builder_add_int_value(b, vm->vmid);
	cli_pve_json_string(b, "config", vm->path);
	cli_pve_json_string(b, "name", vm->name);
	cli_pve_json_string(b, "cpu", vm->cpu);
	cli_pve_json_string(b, "cpu_type", vm->cpu_type);
	cli_pve_json_string(b, "cpu_flags", vm->cpu_flags);
	cli_pve_json_string(b, "cpu_base", cpu.base);
	json_builder_set_member_name(b, "cpu_known");
	json_builder_add_boolean_value(b, cpu.known);
	json_builder_set_member_name(b, "cpu_host");
	json_builder_add_boolean_value(b, cpu.host);
	json_builder_set_member_name(b, "cpu_aes");
	json_builder_add_boolean_value(b, cpu.aes);
	json_builder_set_member_name(b, "cpu_pclmulqdq");
	json_builder_add_boolean_value(b, cpu.pclmulqdq);
	json_builder_set_member_name(b, "cpu_level");
	json_builder_add_int_value(b, cpu.level);
	cli_pve_json_string(b, "cpu_problem", cpu.problem);
	cli_pve_json_string(b, "cpu_model_flags", cpu.flags);
	cli_pve_json_string(b, "scsihw", vm->scsihw);
	json_builder_set_member_name(b, "disks");
	json_builder_begin_array(b);
	for (guint i = 0; i < vm->disks->len; i++) {
		const CliPveDisk *d = g_ptr_array_index(vm->disks, i);
		json_builder_begin_object(b);
		cli_pve_json_string(b, "key", d->key);
		cli_pve_json_string(b, "value", d->value);
		cli_pve_json_string(b, "bus", d->bus);
		cli_pve_json_string(b, "volume", d->volume);
		cli_pve_json_string(b, "cache", d->cache);
		cli_pve_json_string(b, "aio", d->aio);
		json_builder_set_member_name(b, "iothread");
		json_builder_add_boolean_value(b, d->iothread);
		json_builder_set_member_name(b, "cdrom");
		json_builder_add_boolean_value(b, d->cdrom);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_set_member_name(b, "nics");
	json_builder_begin_array(b);
	for (guint i = 0; i < vm->nics->len; i++) {
		const CliPveNic *n = g_ptr_array_index(vm->nics, i);
		json_builder_begin_object(b);
		cli_pve_json_string(b, "key", n->key);
		cli_pve_json_string(b, "value", n->value);
		cli_pve_json_string(b, "model", n->model);
		cli_pve_json_string(b, "bridge", n->bridge);
		json_builder_set_member_name(b, "queues");
		json_builder_add_int_value(b, n->queues);
		json_builder_end_object(b);
	}
	json_builder_end_array(b);
	json_builder_set_member_name(b, "numa");
	json_builder_add_boolean_value(b, vm->numa);
	cli_pve_json_string(b, "hugepages", vm->hugepages);
	json_builder_set_member_name(b, "agent");
	json_builder_add_boolean_value(b, vm->agent);
	json_builder_set_member_name(b, "vcpus");
	json_builder_add_int_value(b, (vm->cores > 0 ? vm->cores : 1) *
	                                  (vm->sockets > 0 ? vm->sockets : 1));
	json_builder_set_member_name(b, "memory_mib");
	json_builder_add_int_value(b, vm->memory_mib > 0 ? (gint64)vm->memory_mib : 512);
	cli_pve_json_string(b, "port_socket", vm->port_socket);
	cli_pve_json_string(b, "args_problem", vm->args_problem);
	cli_pve_json_strv(b, "snapshots", vm->snapshots);
	cli_pve_json_strv(b, "unknown_keys", vm->unknown_keys);
	json_builder_end_object(b);
	cli_pve_cpu_clear(&cpu);
	return json_builder_get_root(b);
}

/* ---- what a node's CPU can run ---------------------------------------------------------- */

const CliPveCpuType cli_pve_cpu_types[CLI_PVE_N_CPU_TYPES] = {
	{ "kvm64", 1, { NULL } },
	{ "x86-64-v2",
	  2,
	  { "cx16", "lahf_lm", "popcnt", "pni", "sse4_1", "sse4_2", "ssse3", NULL } },
	{ "x86-64-v2-AES", 2, { "aes", NULL } },
	{ "x86-64-v3",
	  3,
	  { "avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave", NULL } },
	{ "x86-64-v4", 4, { "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl", NULL } },
};

guint cli_pve_cpu_rank(char **flags)
{
	guint rank = 0;

	for (guint i = 1; i < CLI_PVE_N_CPU_TYPES; i++) {
		for (guint j = 0; cli_pve_cpu_types[i].flags[j] != NULL; j++) {
			if (flags == NULL || !g_strv_contains((const char *const *)flags,
			                                      cli_pve_cpu_types[i].flags[j]))
				return rank;
		}
		rank = i;
	}
	return rank;
}

guint cli_pve_cpu_type_rank(const char *type)
{
	for (guint i = 0; i < CLI_PVE_N_CPU_TYPES; i++) {
		if (g_strcmp0(cli_pve_cpu_types[i].type, type) == 0)
			return i;
	}
	return 0;
}
