/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <string.h>

#include "util.h"

#define BLOCK_DIR "/sys/block"

/* Block sizes above this are garbage (the kernel caps them far lower). */
#define BLOCK_MAX_BLOCK_SIZE (16 * 1024 * 1024)

/* TRUE when comp is prefix followed by one or more digits ("host0", "virtio2"). */
static gboolean block_comp_is(const char *comp, const char *prefix)
{
	gsize len = strlen(prefix);

	if (strncmp(comp, prefix, len) != 0 || comp[len] == '\0')
		return FALSE;
	for (const char *p = comp + len; *p != '\0'; p++) {
		if (!g_ascii_isdigit(*p))
			return FALSE;
	}
	return TRUE;
}

/* What the device path and drivers say about how the disk is attached. */
typedef struct {
	const char *bus;
	char *driver;
	char *bus_error; /* set when the SCSI host could not be asked */
} BlockBus;

static const char *block_bus_from_proc_name(const char *proc_name)
{
	if (g_strcmp0(proc_name, "virtio_scsi") == 0)
		return "virtio-scsi";
	if (g_strcmp0(proc_name, "ata_piix") == 0 || g_strcmp0(proc_name, "ata_generic") == 0 ||
	    g_str_has_prefix(proc_name, "pata_"))
		return "ata";
	if (g_strcmp0(proc_name, "ahci") == 0 || g_str_has_prefix(proc_name, "sata_"))
		return "sata";
	if (g_strcmp0(proc_name, "storvsc") == 0)
		return "hyperv";
	return "scsi";
}

static void block_classify(AgentFactsContext *ctx, const char *name, const char *real,
                           BlockBus *bus)
{
	g_auto(GStrv) comps = g_strsplit(real, "/", -1);
	g_autofree char *base = g_strdup_printf(BLOCK_DIR "/%s/device", name);
	g_autofree char *drv_path = g_strdup_printf("%s/driver", base);
	g_autofree char *drv2_path = g_strdup_printf("%s/device/driver", base);
	g_autofree char *dev_driver = NULL;
	const char *host = NULL;
	gboolean virtio = FALSE;
	gboolean ata = FALSE;
	gboolean nvme = g_str_has_prefix(name, "nvme");
	gboolean xen = g_str_has_prefix(name, "xvd");

	for (guint i = 0; comps[i] != NULL; i++) {
		if (block_comp_is(comps[i], "host"))
			host = comps[i];
		else if (block_comp_is(comps[i], "virtio"))
			virtio = TRUE;
		else if (block_comp_is(comps[i], "ata"))
			ata = TRUE;
		else if (g_strcmp0(comps[i], "nvme") == 0)
			nvme = TRUE;
		else if (g_str_has_prefix(comps[i], "vbd-"))
			xen = TRUE;
	}
	/* nvme namespaces hang off the controller, whose parent PCI device has the driver. */
	dev_driver = agent_facts_link_basename(ctx->sysroot, drv_path, NULL);
	if (dev_driver == NULL)
		dev_driver = agent_facts_link_basename(ctx->sysroot, drv2_path, NULL);

	if (g_strcmp0(dev_driver, "virtio_blk") == 0 || (virtio && host == NULL && !nvme)) {
		bus->bus = "virtio-blk";
		bus->driver = g_strdup("virtio_blk");
	} else if (nvme || g_strcmp0(dev_driver, "nvme") == 0) {
		bus->bus = "nvme";
		bus->driver = g_strdup(dev_driver != NULL ? dev_driver : "nvme");
	} else if (xen || g_strcmp0(dev_driver, "vbd") == 0) {
		bus->bus = "xen";
		bus->driver = g_steal_pointer(&dev_driver);
	} else if (host != NULL) {
		/* The SCSI host's driver tells the controller; the device's is just "sd". */
		g_autofree char *proc_path =
		    g_strdup_printf("/sys/class/scsi_host/%s/proc_name", host);
		g_autoptr(GError) error_local = NULL;
		g_autofree char *proc_name =
		    agent_facts_read_line(ctx->sysroot, proc_path, &error_local);

		if (proc_name != NULL && !agent_facts_is_token(proc_name)) {
			g_set_error(&error_local, GB_ERROR, GB_ERROR_PARSE, "%s: not a driver name",
			            proc_path);
			g_clear_pointer(&proc_name, g_free);
		}
		if (proc_name != NULL) {
			bus->bus = block_bus_from_proc_name(proc_name);
			bus->driver = g_steal_pointer(&proc_name);
		} else {
			/* Fall back on the path: virtioN or ataN above the host. */
			bus->bus = virtio ? "virtio-scsi" : (ata ? "ata" : "scsi");
			bus->driver = g_steal_pointer(&dev_driver);
			bus->bus_error = g_strdup(error_local->message);
		}
	} else {
		bus->bus = "other";
		bus->driver = g_steal_pointer(&dev_driver);
	}
}

static void block_add_error(AgentFactsContext *ctx, const char *name, const char *member,
                            const char *reason)
{
	g_autofree char *full = g_strdup_printf("block.%s.%s", name, member);
	agent_facts_add_error(ctx, full, reason);
}

static void block_add_int(AgentFactsContext *ctx, JsonBuilder *builder, const char *name,
                          const char *member, const char *file, gint64 max, gint64 scale)
{
	g_autofree char *path = g_strdup_printf(BLOCK_DIR "/%s/%s", name, file);
	g_autoptr(GError) error_local = NULL;
	gint64 val = 0;

	json_builder_set_member_name(builder, member);
	if (!agent_facts_read_int(ctx->sysroot, path, 0, max, &val, &error_local)) {
		json_builder_add_null_value(builder);
		block_add_error(ctx, name, member, error_local->message);
		return;
	}
	json_builder_add_int_value(builder, val * scale);
}

static void block_add_bool(AgentFactsContext *ctx, JsonBuilder *builder, const char *name,
                           const char *member, const char *file)
{
	g_autofree char *path = g_strdup_printf(BLOCK_DIR "/%s/%s", name, file);
	g_autoptr(GError) error_local = NULL;
	gint64 val = 0;

	json_builder_set_member_name(builder, member);
	if (!agent_facts_read_int(ctx->sysroot, path, 0, 1, &val, &error_local)) {
		json_builder_add_null_value(builder);
		block_add_error(ctx, name, member, error_local->message);
		return;
	}
	json_builder_add_boolean_value(builder, val != 0);
}

static void block_add_scheduler(AgentFactsContext *ctx, JsonBuilder *builder, const char *name)
{
	g_autofree char *path = g_strdup_printf(BLOCK_DIR "/%s/queue/scheduler", name);
	g_autoptr(GError) error_local = NULL;
	g_autofree char *text = agent_facts_read_text(ctx->sysroot, path, &error_local);
	g_autofree char *active = NULL;
	g_auto(GStrv) all = NULL;

	if (text != NULL) {
		active = agent_facts_parse_bracketed(text, &all, &error_local);
		if (active == NULL)
			g_prefix_error(&error_local, "%s: ", path);
	}
	agent_facts_builder_add_string(builder, "scheduler", active);
	json_builder_set_member_name(builder, "schedulers");
	if (all != NULL) {
		json_builder_begin_array(builder);
		for (guint i = 0; all[i] != NULL; i++)
			json_builder_add_string_value(builder, all[i]);
		json_builder_end_array(builder);
	} else {
		json_builder_add_null_value(builder);
	}
	if (active == NULL) {
		block_add_error(ctx, name, "scheduler", error_local->message);
		block_add_error(ctx, name, "schedulers", error_local->message);
	}
}

static void block_add_write_cache(AgentFactsContext *ctx, JsonBuilder *builder, const char *name)
{
	g_autofree char *path = g_strdup_printf(BLOCK_DIR "/%s/queue/write_cache", name);
	g_autoptr(GError) error_local = NULL;
	g_autofree char *mode = agent_facts_read_line(ctx->sysroot, path, &error_local);

	if (mode != NULL && g_strcmp0(mode, "write back") != 0 &&
	    g_strcmp0(mode, "write through") != 0) {
		g_autofree char *escaped = g_strescape(mode, NULL);
		g_set_error(&error_local, GB_ERROR, GB_ERROR_PARSE, "%s: unknown mode '%.40s'",
		            path, escaped);
		g_clear_pointer(&mode, g_free);
	}
	agent_facts_builder_add_string(builder, "write_cache", mode);
	if (mode == NULL)
		block_add_error(ctx, name, "write_cache", error_local->message);
}

static gboolean block_is_cdrom(AgentFactsContext *ctx, const char *name)
{
	g_autofree char *path = g_strdup_printf(BLOCK_DIR "/%s/device/type", name);
	gint64 type = -1;

	if (g_str_has_prefix(name, "sr"))
		return TRUE;
	/* SCSI peripheral type 5 is a CD/DVD drive; the file is absent off SCSI. */
	return agent_facts_read_int(ctx->sysroot, path, 0, 255, &type, NULL) && type == 5;
}

static void block_add_model(AgentFactsContext *ctx, JsonBuilder *builder, const char *name)
{
	g_autofree char *path = g_strdup_printf(BLOCK_DIR "/%s/device/model", name);
	g_autoptr(GError) error_local = NULL;
	g_autofree char *model = NULL;

	/* virtio-blk and nvme namespaces have no model file: that is not an error. */
	if (agent_facts_exists(ctx->sysroot, path)) {
		model = agent_facts_read_line(ctx->sysroot, path, &error_local);
		if (model == NULL)
			block_add_error(ctx, name, "model", error_local->message);
		else if (model[0] == '\0')
			g_clear_pointer(&model, g_free);
	}
	agent_facts_builder_add_string(builder, "model", model);
}

static gboolean block_is_skipped(const char *name)
{
	/* Memory- and file-backed devices say nothing about the virtual hardware. */
	return g_str_has_prefix(name, "loop") || g_str_has_prefix(name, "ram") ||
	       g_str_has_prefix(name, "zram");
}

static void block_add_device(AgentFactsContext *ctx, JsonBuilder *builder, const char *name,
                             const char *real)
{
	BlockBus bus = { 0 };

	block_classify(ctx, name, real, &bus);
	json_builder_begin_object(builder);
	agent_facts_builder_add_string(builder, "name", name);
	agent_facts_builder_add_string(builder, "bus", bus.bus);
	if (bus.bus_error != NULL)
		block_add_error(ctx, name, "bus", bus.bus_error);
	agent_facts_builder_add_string(builder, "driver", bus.driver);
	block_add_scheduler(ctx, builder, name);
	block_add_write_cache(ctx, builder, name);
	block_add_int(ctx, builder, name, "logical_block_size", "queue/logical_block_size",
	              BLOCK_MAX_BLOCK_SIZE, 1);
	block_add_int(ctx, builder, name, "physical_block_size", "queue/physical_block_size",
	              BLOCK_MAX_BLOCK_SIZE, 1);
	/* "size" counts 512-byte sectors whatever the logical block size. */
	block_add_int(ctx, builder, name, "size_bytes", "size", G_MAXINT64 / 512, 512);
	block_add_bool(ctx, builder, name, "rotational", "queue/rotational");
	block_add_bool(ctx, builder, name, "removable", "removable");
	json_builder_set_member_name(builder, "cdrom");
	json_builder_add_boolean_value(builder, block_is_cdrom(ctx, name));
	block_add_model(ctx, builder, name);
	json_builder_end_object(builder);
	g_free(bus.driver);
	g_free(bus.bus_error);
}

JsonNode *agent_facts_collect_block(AgentFactsContext *ctx)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(GError) error_local = NULL;
	g_autoptr(GPtrArray) names = agent_facts_list_dir(ctx->sysroot, BLOCK_DIR, &error_local);

	json_builder_begin_array(builder);
	if (names == NULL)
		agent_facts_add_error(ctx, "block", error_local->message);
	for (guint i = 0; names != NULL && i < names->len; i++) {
		const char *name = g_ptr_array_index(names, i);
		g_autofree char *path = g_strdup_printf(BLOCK_DIR "/%s", name);
		g_autofree char *real = NULL;
		g_autoptr(GError) error_dev = NULL;

		/* The kernel never names a device with a leading dot. */
		if (name[0] == '.' || block_is_skipped(name))
			continue;
		real = agent_facts_resolve(ctx->sysroot, path, &error_dev);
		if (real == NULL) {
			g_autofree char *member = g_strdup_printf("block.%s", name);
			agent_facts_add_error(ctx, member, error_dev->message);
			continue;
		}
		block_add_device(ctx, builder, name, real);
	}
	json_builder_end_array(builder);
	return json_builder_get_root(builder);
}
