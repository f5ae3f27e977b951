/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The net section on Windows: one entry per network adapter but loopback,
 * in the Linux collector's members. From GetAdaptersAddresses: the name
 * (the connection's friendly name), MTU and link speed; from the registry,
 * where the network class installer puts them:
 *   driver     the adapter's device's Service (netkvm for virtio-win's
 *              NetKVM, e1g60/e1iexpress for QEMU's e1000/e1000e, ...):
 *              Control\Network\{class}\{adapter}\Connection PnPInstanceId,
 *              then Enum\{that}\Service
 *   rx_queues  its RSS queues, *NumRssQueues in the adapter's driver key
 *              (Control\Class\{class}\NNNN whose NetCfgInstanceId is the
 *              adapter); Windows has no transmit queue count: tx_queues null
 * What the registry does not hold is null with the reason in errors.
 */
#include <winsock2.h>
#include <iphlpapi.h>
#include <windows.h>

#include "common.h"

#define NET_CLASS "{4D36E972-E325-11CE-BFC1-08002BE10318}"
#define NET_REG_NETWORK "SYSTEM\\CurrentControlSet\\Control\\Network\\" NET_CLASS "\\"
#define NET_REG_ENUM "SYSTEM\\CurrentControlSet\\Enum\\"
#define NET_REG_CLASS "SYSTEM\\CurrentControlSet\\Control\\Class\\" NET_CLASS
/* more adapters than any guest has */
#define NET_MAX_CLASS_KEYS 10000

static void net_win_error(AgentFactsContext *ctx, const char *name, const char *member,
                          const char *reason)
{
	g_autofree char *full = g_strdup_printf("net.%s.%s", name, member);

	agent_facts_add_error(ctx, full, reason);
}

/* A REG_SZ value of HKLM\key as UTF-8, or NULL. */
static char *net_win_reg_string(const char *key, const char *value)
{
	g_autofree gunichar2 *wkey = g_utf8_to_utf16(key, -1, NULL, NULL, NULL);
	g_autofree gunichar2 *wvalue = g_utf8_to_utf16(value, -1, NULL, NULL, NULL);
	wchar_t buf[512];
	DWORD size = sizeof(buf);

	if (wkey == NULL || wvalue == NULL ||
	    RegGetValueW(HKEY_LOCAL_MACHINE, (LPCWSTR)wkey, (LPCWSTR)wvalue, RRF_RT_REG_SZ, NULL,
	                 buf, &size) != ERROR_SUCCESS)
		return NULL;
	buf[G_N_ELEMENTS(buf) - 1] = 0;
	return g_utf16_to_utf8((const gunichar2 *)buf, -1, NULL, NULL, NULL);
}

/* The adapter's driver service, lowercased as Linux names drivers, or NULL. */
static char *net_win_driver(const char *adapter)
{
	g_autofree char *conn = g_strconcat(NET_REG_NETWORK, adapter, "\\Connection", NULL);
	g_autofree char *pnp = net_win_reg_string(conn, "PnPInstanceId");
	g_autofree char *enum_key = NULL;
	g_autofree char *service = NULL;

	if (pnp == NULL || pnp[0] == '\0')
		return NULL;
	enum_key = g_strconcat(NET_REG_ENUM, pnp, NULL);
	service = net_win_reg_string(enum_key, "Service");
	if (service == NULL || service[0] == '\0')
		return NULL;
	return g_ascii_strdown(service, -1);
}

/* *NumRssQueues of the adapter's driver key; FALSE when there is none. */
static gboolean net_win_rss_queues(const char *adapter, gint64 *queues)
{
	for (guint i = 0; i < NET_MAX_CLASS_KEYS; i++) {
		g_autofree char *key = g_strdup_printf(NET_REG_CLASS "\\%04u", i);
		g_autofree char *id = net_win_reg_string(key, "NetCfgInstanceId");
		g_autofree char *rss = NULL;
		char *end = NULL;
		gint64 n;

		if (id == NULL) {
			/* the numbering has no holes: a missing key ends it */
			if (i > 0 && net_win_reg_string(key, "DriverDesc") == NULL)
				return FALSE;
			continue;
		}
		if (g_ascii_strcasecmp(id, adapter) != 0)
			continue;
		rss = net_win_reg_string(key, "*NumRssQueues");
		if (rss == NULL)
			return FALSE;
		n = g_ascii_strtoll(rss, &end, 10);
		if (end == rss || *end != '\0' || n < 1 || n > 1024)
			return FALSE;
		*queues = n;
		return TRUE;
	}
	return FALSE;
}

static void net_win_add(AgentFactsContext *ctx, JsonBuilder *builder, const IP_ADAPTER_ADDRESSES *a)
{
	g_autofree char *name =
	    a->FriendlyName != NULL
	        ? g_utf16_to_utf8((const gunichar2 *)a->FriendlyName, -1, NULL, NULL, NULL)
	        : NULL;
	g_autofree char *driver = NULL;
	gint64 rxq = 0;
	gboolean have_rxq;

	if (name == NULL || name[0] == '\0')
		name = g_strdup(a->AdapterName);
	driver = net_win_driver(a->AdapterName);
	have_rxq = net_win_rss_queues(a->AdapterName, &rxq);
	json_builder_begin_object(builder);
	agent_facts_builder_add_string(builder, "name", name);
	agent_facts_builder_add_string(builder, "driver", driver);
	if (driver == NULL)
		net_win_error(ctx, name, "driver",
		              "no driver service in the registry for this adapter");
	agent_facts_builder_add_int_or_null(builder, "mtu", a->Mtu > 0 && a->Mtu < G_MAXINT32,
	                                    a->Mtu);
	agent_facts_builder_add_int_or_null(builder, "rx_queues", have_rxq, rxq);
	if (!have_rxq)
		net_win_error(ctx, name, "rx_queues",
		              "no *NumRssQueues in the adapter's registry key");
	agent_facts_builder_add_int_or_null(builder, "tx_queues", FALSE, 0);
	net_win_error(ctx, name, "tx_queues", "Windows does not report transmit queues");
	/* unknown speeds are null without an error, as on Linux */
	agent_facts_builder_add_int_or_null(
	    builder, "speed_mbps", a->ReceiveLinkSpeed > 0 && a->ReceiveLinkSpeed != G_MAXUINT64,
	    (gint64)(a->ReceiveLinkSpeed / 1000000));
	json_builder_end_object(builder);
}

JsonNode *agent_facts_collect_net(AgentFactsContext *ctx)
{
	const ULONG flags =
	    GAA_FLAG_SKIP_ANYCAST | GAA_FLAG_SKIP_MULTICAST | GAA_FLAG_SKIP_DNS_SERVER;
	g_autoptr(JsonBuilder) builder = json_builder_new();
	g_autofree IP_ADAPTER_ADDRESSES *list = NULL;
	ULONG len = 16 * 1024;
	ULONG rc = ERROR_BUFFER_OVERFLOW;

	/* the list can grow between the two calls: a few tries */
	for (guint i = 0; i < 4 && rc == ERROR_BUFFER_OVERFLOW; i++) {
		g_free(list);
		list = g_malloc(len);
		rc = GetAdaptersAddresses(AF_UNSPEC, flags, NULL, list, &len);
	}
	if (rc != ERROR_SUCCESS && rc != ERROR_NO_DATA) {
		g_autofree char *reason =
		    g_strdup_printf("GetAdaptersAddresses failed (error %lu)", (unsigned long)rc);
		agent_facts_add_error(ctx, "net", reason);
		return json_node_new(JSON_NODE_NULL);
	}
	json_builder_begin_array(builder);
	for (const IP_ADAPTER_ADDRESSES *a = rc == ERROR_SUCCESS ? list : NULL; a != NULL;
	     a = a->Next) {
		if (a->IfType == IF_TYPE_SOFTWARE_LOOPBACK)
			continue;
		net_win_add(ctx, builder, a);
	}
	json_builder_end_array(builder);
	return json_builder_get_root(builder);
}
