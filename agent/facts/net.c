/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "util.h"

#define NET_DIR "/sys/class/net"

/* Linux caps MTUs well below this; anything larger is garbage. */
#define NET_MAX_MTU (16 * 1024 * 1024)

static void net_add_error(AgentFactsContext *ctx, const char *name, const char *member,
                          const char *reason)
{
	g_autofree char *full = g_strdup_printf("net.%s.%s", name, member);
	agent_facts_add_error(ctx, full, reason);
}

static void net_add_queues(AgentFactsContext *ctx, JsonBuilder *builder, const char *name)
{
	g_autofree char *path = g_strdup_printf(NET_DIR "/%s/queues", name);
	g_autoptr(GError) error_local = NULL;
	g_autoptr(GPtrArray) entries = agent_facts_list_dir(ctx->sysroot, path, &error_local);
	gint64 rx = 0;
	gint64 tx = 0;

	for (guint i = 0; entries != NULL && i < entries->len; i++) {
		const char *entry = g_ptr_array_index(entries, i);
		if (g_str_has_prefix(entry, "rx-"))
			rx++;
		else if (g_str_has_prefix(entry, "tx-"))
			tx++;
	}
	json_builder_set_member_name(builder, "rx_queues");
	if (entries != NULL)
		json_builder_add_int_value(builder, rx);
	else
		json_builder_add_null_value(builder);
	json_builder_set_member_name(builder, "tx_queues");
	if (entries != NULL)
		json_builder_add_int_value(builder, tx);
	else
		json_builder_add_null_value(builder);
	if (entries == NULL) {
		net_add_error(ctx, name, "rx_queues", error_local->message);
		net_add_error(ctx, name, "tx_queues", error_local->message);
	}
}

/*
 * Many drivers refuse to say: virtio_net fails the read with EINVAL while the
 * link is down, others print -1 (SPEED_UNKNOWN). Both mean "unknown", which is
 * a normal answer, not an error. Only content that is not a number is.
 */
static void net_add_speed(AgentFactsContext *ctx, JsonBuilder *builder, const char *name)
{
	g_autofree char *path = g_strdup_printf(NET_DIR "/%s/speed", name);
	g_autofree char *text = agent_facts_read_line(ctx->sysroot, path, NULL);
	g_autoptr(GError) error_local = NULL;
	gint64 speed = -1;

	if (text != NULL &&
	    !agent_facts_parse_int(text, G_MININT32, G_MAXUINT32, &speed, &error_local)) {
		g_prefix_error(&error_local, "%s: ", path);
		net_add_error(ctx, name, "speed_mbps", error_local->message);
		speed = -1;
	}
	json_builder_set_member_name(builder, "speed_mbps");
	/* SPEED_UNKNOWN is -1, printed by some kernels as an unsigned 4294967295. */
	if (speed > 0 && speed < G_MAXUINT32)
		json_builder_add_int_value(builder, speed);
	else
		json_builder_add_null_value(builder);
}

static void net_add_device(AgentFactsContext *ctx, JsonBuilder *builder, const char *name)
{
	g_autofree char *drv_path = g_strdup_printf(NET_DIR "/%s/device/driver", name);
	g_autofree char *dev_path = g_strdup_printf(NET_DIR "/%s/device", name);
	g_autofree char *mtu_path = g_strdup_printf(NET_DIR "/%s/mtu", name);
	g_autofree char *driver = NULL;
	g_autoptr(GError) error_local = NULL;
	gint64 mtu = 0;

	json_builder_begin_object(builder);
	agent_facts_builder_add_string(builder, "name", name);

	/* Virtual devices (bridges, tun, ifb) have no device link: driver null, no error. */
	if (agent_facts_exists(ctx->sysroot, dev_path)) {
		driver = agent_facts_link_basename(ctx->sysroot, drv_path, &error_local);
		if (driver == NULL)
			net_add_error(ctx, name, "driver", error_local->message);
		g_clear_error(&error_local);
	}
	agent_facts_builder_add_string(builder, "driver", driver);

	json_builder_set_member_name(builder, "mtu");
	if (agent_facts_read_int(ctx->sysroot, mtu_path, 0, NET_MAX_MTU, &mtu, &error_local)) {
		json_builder_add_int_value(builder, mtu);
	} else {
		json_builder_add_null_value(builder);
		net_add_error(ctx, name, "mtu", error_local->message);
	}
	net_add_queues(ctx, builder, name);
	net_add_speed(ctx, builder, name);
	json_builder_end_object(builder);
}

JsonNode *agent_facts_collect_net(AgentFactsContext *ctx)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autoptr(GError) error_local = NULL;
	g_autoptr(GPtrArray) names = agent_facts_list_dir(ctx->sysroot, NET_DIR, &error_local);

	json_builder_begin_array(builder);
	if (names == NULL)
		agent_facts_add_error(ctx, "net", error_local->message);
	for (guint i = 0; names != NULL && i < names->len; i++) {
		const char *name = g_ptr_array_index(names, i);
		g_autofree char *path = g_strdup_printf(NET_DIR "/%s", name);
		g_autoptr(GError) error_dev = NULL;
		g_autofree char *real = NULL;

		/* Loopback says nothing about the virtual NIC; no device starts with a dot. */
		if (g_strcmp0(name, "lo") == 0 || name[0] == '.')
			continue;
		real = agent_facts_resolve(ctx->sysroot, path, &error_dev);
		if (real == NULL) {
			g_autofree char *member = g_strdup_printf("net.%s", name);
			agent_facts_add_error(ctx, member, error_dev->message);
			continue;
		}
		net_add_device(ctx, builder, name);
	}
	json_builder_end_array(builder);
	return json_builder_get_root(builder);
}
