/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The block section on Windows: each \\.\PhysicalDriveN, in the Linux
 * collector's members, from the storage stack's own answers:
 *   bus, driver   the storage adapter's driver from the SCSI port map
 *                 (IOCTL_SCSI_GET_ADDRESS, then HARDWARE\DEVICEMAP\Scsi\Scsi
 *                 Port N\Driver): viostor is virtio-blk and vioscsi
 *                 virtio-scsi (virtio-win); otherwise the bus Windows
 *                 reports (IOCTL_STORAGE_QUERY_PROPERTY, the device
 *                 descriptor's BusType: ata, sata, scsi, sas, nvme, ...)
 *   write_cache   the device's write cache property: enabled is "write
 *                 back", disabled "write through"
 *   the sector sizes (access alignment), the size (IOCTL_DISK_GET_LENGTH_INFO),
 *   rotational (seek penalty), removable and the model (the descriptor)
 * Windows has no I/O scheduler to choose: scheduler and schedulers are null
 * with that reason. What a disk does not answer is null with the error.
 */
#include <windows.h>
#include <winioctl.h>

#include <ntddscsi.h>

#include "common.h"

/* PhysicalDrive numbers tried: Windows numbers them from 0, with holes after removals. */
#define BLOCK_WIN_MAX_DRIVES 64

static void block_win_error(AgentFactsContext *ctx, const char *name, const char *member,
                            const char *reason)
{
	g_autofree char *full = g_strdup_printf("block.%s.%s", name, member);

	agent_facts_add_error(ctx, full, reason);
}

static char *block_win_last_error(const char *what)
{
	DWORD code = GetLastError();
	g_autofree char *msg = g_win32_error_message((gint)code);

	return g_strdup_printf("%s: %s (error %lu)", what, msg, (unsigned long)code);
}

/* STORAGE_PROPERTY_QUERY of id into buf; FALSE with *why (g_free) when it fails. */
static gboolean block_win_query(HANDLE h, STORAGE_PROPERTY_ID id, void *buf, DWORD len, DWORD min,
                                char **why)
{
	STORAGE_PROPERTY_QUERY q = { .PropertyId = id, .QueryType = PropertyStandardQuery };
	DWORD got = 0;

	if (!DeviceIoControl(h, IOCTL_STORAGE_QUERY_PROPERTY, &q, sizeof(q), buf, len, &got,
	                     NULL)) {
		*why = block_win_last_error("IOCTL_STORAGE_QUERY_PROPERTY");
		return FALSE;
	}
	if (got < min) {
		*why = g_strdup_printf("IOCTL_STORAGE_QUERY_PROPERTY: %lu bytes, short",
		                       (unsigned long)got);
		return FALSE;
	}
	return TRUE;
}

/* Linux's names for Windows' bus types (the Linux agent's bus member). */
static const char *block_win_bus_name(STORAGE_BUS_TYPE bus)
{
	switch ((int)bus) {
	case BusTypeScsi:
		return "scsi";
	case BusTypeAtapi:
	case BusTypeAta:
		return "ata";
	case BusTypeSata:
		return "sata";
	case BusTypeSas:
		return "sas";
	case BusTypeUsb:
		return "usb";
	case BusTypeiScsi:
		return "iscsi";
	case BusTypeFibre:
		return "fc";
	case BusTypeRAID:
		return "raid";
	case BusTypeSd:
		return "sd";
	case BusTypeMmc:
		return "mmc";
	case BusTypeVirtual:
	case BusTypeFileBackedVirtual:
		return "virtual";
	case 0x10: /* BusTypeSpaces */
		return "spaces";
	case 0x11: /* BusTypeNvme */
		return "nvme";
	default:
		return NULL;
	}
}

/* The storage adapter's driver service, lowercased, or NULL with *why. */
static char *block_win_port_driver(HANDLE h, char **why)
{
	SCSI_ADDRESS addr = { .Length = sizeof(addr) };
	DWORD got = 0;
	g_autofree char *key = NULL;
	g_autofree gunichar2 *wkey = NULL;
	wchar_t buf[256];
	DWORD size = sizeof(buf);
	g_autofree char *name = NULL;

	if (!DeviceIoControl(h, IOCTL_SCSI_GET_ADDRESS, NULL, 0, &addr, sizeof(addr), &got, NULL)) {
		*why = block_win_last_error("IOCTL_SCSI_GET_ADDRESS");
		return NULL;
	}
	key = g_strdup_printf("HARDWARE\\DEVICEMAP\\Scsi\\Scsi Port %u", addr.PortNumber);
	wkey = g_utf8_to_utf16(key, -1, NULL, NULL, NULL);
	if (RegGetValueW(HKEY_LOCAL_MACHINE, (LPCWSTR)wkey, L"Driver", RRF_RT_REG_SZ, NULL, buf,
	                 &size) != ERROR_SUCCESS) {
		*why = g_strdup_printf("no Driver under HKLM\\%s", key);
		return NULL;
	}
	buf[G_N_ELEMENTS(buf) - 1] = 0;
	name = g_utf16_to_utf8((const gunichar2 *)buf, -1, NULL, NULL, NULL);
	if (name == NULL || name[0] == '\0') {
		*why = g_strdup_printf("an empty Driver under HKLM\\%s", key);
		return NULL;
	}
	return g_ascii_strdown(name, -1);
}

static void block_win_add_bus(AgentFactsContext *ctx, JsonBuilder *builder, const char *name,
                              HANDLE h, const STORAGE_DEVICE_DESCRIPTOR *desc)
{
	g_autofree char *why = NULL;
	g_autofree char *driver = block_win_port_driver(h, &why);
	const char *bus = desc != NULL ? block_win_bus_name(desc->BusType) : NULL;

	/* virtio-win's drivers say what the bus type does not */
	if (g_strcmp0(driver, "viostor") == 0)
		bus = "virtio-blk";
	else if (g_strcmp0(driver, "vioscsi") == 0)
		bus = "virtio-scsi";
	agent_facts_builder_add_string(builder, "bus", bus);
	if (bus == NULL)
		block_win_error(ctx, name, "bus",
		                desc != NULL ? "a bus type Windows did not name"
		                             : "no device descriptor");
	agent_facts_builder_add_string(builder, "driver", driver);
	if (driver == NULL)
		block_win_error(ctx, name, "driver", why);
}

static void block_win_add_write_cache(AgentFactsContext *ctx, JsonBuilder *builder,
                                      const char *name, HANDLE h)
{
	STORAGE_WRITE_CACHE_PROPERTY wc = { 0 };
	g_autofree char *why = NULL;
	const char *mode = NULL;

	if (block_win_query(h, StorageDeviceWriteCacheProperty, &wc, sizeof(wc), sizeof(wc),
	                    &why)) {
		if (wc.WriteCacheEnabled == WriteCacheEnabled)
			mode = "write back";
		else if (wc.WriteCacheEnabled == WriteCacheDisabled)
			mode = "write through";
		else
			why = g_strdup("the device does not say whether its write cache is on");
	}
	agent_facts_builder_add_string(builder, "write_cache", mode);
	if (mode == NULL)
		block_win_error(ctx, name, "write_cache", why);
}

static void block_win_add_sizes(AgentFactsContext *ctx, JsonBuilder *builder, const char *name,
                                HANDLE h)
{
	STORAGE_ACCESS_ALIGNMENT_DESCRIPTOR al = { 0 };
	DEVICE_SEEK_PENALTY_DESCRIPTOR seek = { 0 };
	GET_LENGTH_INFORMATION len = { 0 };
	g_autofree char *why_al = NULL;
	g_autofree char *why_seek = NULL;
	g_autofree char *why_len = NULL;
	gboolean have_al = block_win_query(h, StorageAccessAlignmentProperty, &al, sizeof(al),
	                                   sizeof(al), &why_al);
	gboolean have_seek = block_win_query(h, StorageDeviceSeekPenaltyProperty, &seek,
	                                     sizeof(seek), sizeof(seek), &why_seek);
	DWORD got = 0;
	gboolean have_len = DeviceIoControl(h, IOCTL_DISK_GET_LENGTH_INFO, NULL, 0, &len,
	                                    sizeof(len), &got, NULL) &&
	                    got >= sizeof(len) && len.Length.QuadPart >= 0;

	if (!have_len)
		why_len = block_win_last_error("IOCTL_DISK_GET_LENGTH_INFO");
	agent_facts_builder_add_int_or_null(builder, "logical_block_size",
	                                    have_al && al.BytesPerLogicalSector > 0,
	                                    al.BytesPerLogicalSector);
	agent_facts_builder_add_int_or_null(builder, "physical_block_size",
	                                    have_al && al.BytesPerPhysicalSector > 0,
	                                    al.BytesPerPhysicalSector);
	if (!have_al || al.BytesPerLogicalSector == 0 || al.BytesPerPhysicalSector == 0) {
		const char *why = why_al != NULL ? why_al : "the device gave no sector size";
		block_win_error(ctx, name, "logical_block_size", why);
		block_win_error(ctx, name, "physical_block_size", why);
	}
	agent_facts_builder_add_int_or_null(builder, "size_bytes", have_len, len.Length.QuadPart);
	if (!have_len)
		block_win_error(ctx, name, "size_bytes", why_len);
	json_builder_set_member_name(builder, "rotational");
	if (have_seek) {
		json_builder_add_boolean_value(builder, seek.IncursSeekPenalty);
	} else {
		json_builder_add_null_value(builder);
		block_win_error(ctx, name, "rotational", why_seek);
	}
}

/* The descriptor's product id, trimmed, or NULL. */
static char *block_win_model(const STORAGE_DEVICE_DESCRIPTOR *desc, DWORD len)
{
	const char *p;
	gsize n;

	if (desc == NULL || desc->ProductIdOffset == 0 || desc->ProductIdOffset >= len)
		return NULL;
	p = (const char *)desc + desc->ProductIdOffset;
	n = strnlen(p, len - desc->ProductIdOffset);
	return g_strstrip(g_utf8_make_valid(p, (gssize)n));
}

static void block_win_add(AgentFactsContext *ctx, JsonBuilder *builder, guint n, HANDLE h)
{
	g_autofree char *name = g_strdup_printf("PhysicalDrive%u", n);
	guint8 buf[1024] = { 0 };
	g_autofree char *why = NULL;
	const STORAGE_DEVICE_DESCRIPTOR *desc = NULL;
	g_autofree char *model = NULL;

	if (block_win_query(h, StorageDeviceProperty, buf, sizeof(buf) - 1,
	                    sizeof(STORAGE_DEVICE_DESCRIPTOR), &why))
		desc = (const STORAGE_DEVICE_DESCRIPTOR *)buf;
	model = block_win_model(desc, sizeof(buf) - 1);
	json_builder_begin_object(builder);
	agent_facts_builder_add_string(builder, "name", name);
	block_win_add_bus(ctx, builder, name, h, desc);
	agent_facts_builder_add_string(builder, "scheduler", NULL);
	json_builder_set_member_name(builder, "schedulers");
	json_builder_add_null_value(builder);
	block_win_error(ctx, name, "scheduler", "Windows has no I/O scheduler to choose");
	block_win_add_write_cache(ctx, builder, name, h);
	block_win_add_sizes(ctx, builder, name, h);
	json_builder_set_member_name(builder, "removable");
	if (desc != NULL) {
		json_builder_add_boolean_value(builder, desc->RemovableMedia);
	} else {
		json_builder_add_null_value(builder);
		block_win_error(ctx, name, "removable", why);
	}
	json_builder_set_member_name(builder, "cdrom");
	json_builder_add_boolean_value(builder, FALSE);
	agent_facts_builder_add_string(builder, "model", model);
	json_builder_end_object(builder);
}

JsonNode *agent_facts_collect_block(AgentFactsContext *ctx)
{
	g_autoptr(JsonBuilder) builder = json_builder_new();

	json_builder_begin_array(builder);
	for (guint n = 0; n < BLOCK_WIN_MAX_DRIVES; n++) {
		g_autofree char *path8 = g_strdup_printf("\\\\.\\PhysicalDrive%u", n);
		g_autofree gunichar2 *path = g_utf8_to_utf16(path8, -1, NULL, NULL, NULL);
		HANDLE h;

		/* read access for the length; queries alone need none */
		h = CreateFileW((LPCWSTR)path, GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE,
		                NULL, OPEN_EXISTING, 0, NULL);
		if (h == INVALID_HANDLE_VALUE)
			h = CreateFileW((LPCWSTR)path, 0, FILE_SHARE_READ | FILE_SHARE_WRITE, NULL,
			                OPEN_EXISTING, 0, NULL);
		if (h == INVALID_HANDLE_VALUE)
			continue;
		block_win_add(ctx, builder, n, h);
		CloseHandle(h);
	}
	json_builder_end_array(builder);
	return json_builder_get_root(builder);
}
