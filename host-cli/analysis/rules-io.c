/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "analysis/rules.h"

/* The disk and NIC rules: emulated devices, caches, schedulers, queues. */

/* Needs the disks and each one's name, as every disk rule does before its own members. */
static void need_disks(CliAuditCtx *ctx)
{
	cli_rule_need_items(ctx, &ctx->facts->block, FALSE, G_STRUCT_OFFSET(CliFactsDisk, name),
	                    NULL);
}

static guint need_nics(CliAuditCtx *ctx)
{
	return cli_rule_need_items(ctx, &ctx->facts->net, FALSE, G_STRUCT_OFFSET(CliFactsNic, name),
	                           NULL);
}

/* The i-th element as a disk, or NULL when it is not an object (noted by need_disks()). */
static const CliFactsDisk *disk_at(CliAuditCtx *ctx, guint i)
{
	const CliFactsDisk *disk = g_ptr_array_index(ctx->facts->block.items, i);
	return cli_fact_ok(&disk->node.fact) ? disk : NULL;
}

static const CliFactsNic *nic_at(CliAuditCtx *ctx, guint i)
{
	const CliFactsNic *nic = g_ptr_array_index(ctx->facts->net.items, i);
	return cli_fact_ok(&nic->node.fact) ? nic : NULL;
}

static gboolean disk_is_cdrom(CliAuditCtx *ctx, const CliFactsDisk *disk)
{
	/* older agents may not say; sr* is the kernel's name for optical drives */
	if (cli_rule_need(ctx, &disk->cdrom.fact, TRUE))
		return disk->cdrom.value;
	if (cli_fact_ok(&disk->name.fact))
		return g_str_has_prefix(disk->name.value, "sr");
	return FALSE;
}

static const char *const emulated_disk_drivers[] = {
	"ata_piix",
	"ahci",
	"pata_acpi",
	"ata_generic",
	"mptspi",
	"mptsas",
	"mptscsih",
	"sym53c8xx",
	"lsi",
	"megaraid",
	"megaraid_sas",
	"megaraid_mbox",
	"BusLogic",
	"am53c974",
	/* Windows' storage drivers for the same controllers (IDE, AHCI, LSI) */
	"atapi",
	"storahci",
	"lsi_sas",
	"lsi_scsi",
	"megasas",
	NULL,
};
/* Windows names a disk's driver by its storage adapter's service: these are Windows guests'. */
static const char *const windows_disk_drivers[] = {
	"atapi",   "storahci", "lsi_sas",  "lsi_scsi", "megasas",
	"viostor", "vioscsi",  "stornvme", NULL,
};
static const char *const emulated_disk_buses[] = { "ata", "sata", NULL };
static const char *const paravirt_disk_buses[] = { "virtio-blk", "virtio-scsi", "nvme",
	                                           "xen",        "hyperv",      NULL };

void cli_rule_disk_emulated(CliAuditCtx *ctx)
{
	need_disks(ctx);
	for (guint i = 0; i < ctx->facts->block.items->len; i++) {
		const CliFactsDisk *disk = disk_at(ctx, i);
		const char *bus;
		const char *driver = NULL;
		g_autofree char *subject = NULL;
		g_autofree char *detail = NULL;

		if (disk == NULL || disk_is_cdrom(ctx, disk))
			continue;
		if (!cli_rule_need(ctx, &disk->bus.fact, FALSE))
			continue;
		bus = disk->bus.value;
		if (cli_rule_need(ctx, &disk->driver.fact, TRUE))
			driver = disk->driver.value;
		subject = cli_rule_item_subject(&disk->node, &disk->name, "block");
		if (cli_rule_str_in(bus, emulated_disk_buses) ||
		    cli_rule_str_in(driver, emulated_disk_drivers)) {
			detail = g_strdup_printf("emulated storage: bus %s, driver %s (4 KiB I/O "
			                         "5-7x slower than virtio-blk)",
			                         bus, driver != NULL ? driver : "unknown");
			/* Windows boots only from a disk it has a driver for: viostor goes in first
			 */
			cli_rule_fire(
			    ctx, subject, detail,
			    cli_rule_str_in(driver, windows_disk_drivers)
			        ? "install virtio-win's viostor driver in the guest, then "
			          "use virtio-blk: -drive if=virtio (libvirt <target "
			          "bus='virtio'/>)"
			        : "use virtio-blk: -drive if=virtio (libvirt <target "
			          "bus='virtio'/>)");
		} else if (cli_rule_str_in(bus, paravirt_disk_buses)) {
			detail = g_strdup_printf("paravirtual storage: bus %s", bus);
			cli_rule_pass(ctx, subject, detail);
		}
	}
}

static const char *const cached_disk_buses[] = { "virtio-blk", "virtio-scsi", "scsi", "nvme",
	                                         NULL };

void cli_rule_disk_write_through(CliAuditCtx *ctx)
{
	need_disks(ctx);
	for (guint i = 0; i < ctx->facts->block.items->len; i++) {
		const CliFactsDisk *disk = disk_at(ctx, i);
		g_autofree char *subject = NULL;
		g_autofree char *detail = NULL;

		if (disk == NULL || disk_is_cdrom(ctx, disk))
			continue;
		if (!cli_rule_need(ctx, &disk->bus.fact, FALSE) ||
		    !cli_rule_str_in(disk->bus.value, cached_disk_buses))
			continue;
		if (!cli_rule_need(ctx, &disk->write_cache.fact, TRUE))
			continue;
		subject = cli_rule_item_subject(&disk->node, &disk->name, "block");
		if (g_strcmp0(disk->write_cache.value, "write through") == 0) {
			detail = g_strdup_printf("%s disk with a write-through cache: every write "
			                         "waits for the host's disk",
			                         disk->bus.value);
			cli_rule_fire(ctx, subject, detail,
			              "use cache=none with io=native (libvirt <driver cache='none' "
			              "io='native'/>)");
		} else {
			detail = g_strdup_printf("write cache '%s'", disk->write_cache.value);
			cli_rule_pass(ctx, subject, detail);
		}
	}
}

void cli_rule_disk_scheduler(CliAuditCtx *ctx)
{
	const char *const fast_buses[] = { "virtio-blk", "nvme", NULL };

	need_disks(ctx);
	for (guint i = 0; i < ctx->facts->block.items->len; i++) {
		const CliFactsDisk *disk = disk_at(ctx, i);
		const char *sched;
		g_autofree char *subject = NULL;
		g_autofree char *detail = NULL;
		g_autofree char *hint = NULL;

		if (disk == NULL)
			continue;
		if (!cli_rule_need(ctx, &disk->bus.fact, FALSE) ||
		    !cli_rule_str_in(disk->bus.value, fast_buses))
			continue;
		if (!cli_rule_need(ctx, &disk->scheduler.fact, TRUE))
			continue;
		sched = disk->scheduler.value;
		subject = cli_rule_item_subject(&disk->node, &disk->name, "block");
		if (g_strcmp0(sched, "none") == 0) {
			cli_rule_pass(ctx, subject, "I/O scheduler none");
			continue;
		}
		detail = g_strdup_printf("%s disk on I/O scheduler '%s': the host schedules "
		                         "already, 'none' saves CPU",
		                         disk->bus.value, sched);
		hint = g_strdup_printf("echo none > /sys/block/%s/queue/scheduler, and a udev "
		                       "rule to keep it",
		                       cli_fact_string_or(&disk->name, "DISK"));
		cli_rule_fire(ctx, subject, detail, hint);
	}
}

static const char *const emulated_nic_drivers[] = {
	"e1000",
	"e1000e",
	"8139cp",
	"8139too",
	"ne2k_pci",
	"pcnet32",
	/* Windows' driver services for the same models (e1000, e1000e, rtl8139) */
	"e1g60",
	"e1iexpress",
	"rtl8023xp",
	NULL,
};

/* Windows names an adapter's driver by its service: these are Windows guests'. */
static const char *const windows_nic_drivers[] = {
	"e1g60", "e1iexpress", "rtl8023xp", "netkvm", "vmxnet3ndis6", "netvsc", "xennet", NULL,
};

/* A virtio NIC: Linux's virtio_net, virtio-win's NetKVM. */
static gboolean nic_is_virtio(const char *driver)
{
	return g_strcmp0(driver, "virtio_net") == 0 || g_strcmp0(driver, "netkvm") == 0;
}

void cli_rule_nic_emulated(CliAuditCtx *ctx)
{
	CliHypervisorKind hv = CLI_HYPERVISOR_UNKNOWN;
	gboolean present = FALSE;

	/* no hypervisor, or one that cannot be read, gets the virtio advice */
	if (need_nics(ctx) > 0 && cli_rule_need_hypervisor(ctx, &present, NULL) && present)
		hv = ctx->facts->cpu.hypervisor.kind;
	for (guint i = 0; i < ctx->facts->net.items->len; i++) {
		const CliFactsNic *nic = nic_at(ctx, i);
		const char *driver;
		g_autofree char *subject = NULL;
		g_autofree char *detail = NULL;
		const char *hint;

		/* no driver: a virtual interface (bridge, veth, ...) */
		if (nic == NULL || !cli_rule_need(ctx, &nic->driver.fact, TRUE))
			continue;
		driver = nic->driver.value;
		subject = cli_rule_item_subject(&nic->node, &nic->name, "net");
		switch (hv) {
		case CLI_HYPERVISOR_VMWARE:
			hint = "use vmxnet3 (ethernet0.virtualDev = \"vmxnet3\")";
			break;
		case CLI_HYPERVISOR_HYPERV:
			hint = "use a synthetic network adapter (hv_netvsc)";
			break;
		case CLI_HYPERVISOR_XEN:
			hint = "use a paravirtual vif (xen-netfront)";
			break;
		default:
			hint =
			    cli_rule_str_in(driver, windows_nic_drivers)
			        ? "use virtio-net: -device virtio-net-pci (libvirt <model "
			          "type='virtio'/>), with virtio-win's NetKVM driver in the guest"
			        : "use virtio-net: -device virtio-net-pci (libvirt <model "
			          "type='virtio'/>)";
			break;
		}
		if (cli_rule_str_in(driver, emulated_nic_drivers) ||
		    ((g_strcmp0(driver, "vmxnet3") == 0 ||
		      g_strcmp0(driver, "vmxnet3ndis6") == 0) &&
		     (hv == CLI_HYPERVISOR_KVM || hv == CLI_HYPERVISOR_TCG))) {
			detail = g_strdup_printf("emulated NIC (driver %s): throughput capped by "
			                         "one host thread",
			                         driver);
			cli_rule_fire(ctx, subject, detail, hint);
		} else {
			detail = g_strdup_printf("driver %s is not an emulated NIC model", driver);
			cli_rule_pass(ctx, subject, detail);
		}
	}
}

void cli_rule_nic_single_queue(CliAuditCtx *ctx)
{
	const CliFactsCpu *cpu = &ctx->facts->cpu;
	gboolean cpu_read = FALSE;
	gboolean have_count = FALSE;
	gint64 count = 0;

	need_nics(ctx);
	for (guint i = 0; i < ctx->facts->net.items->len; i++) {
		const CliFactsNic *nic = nic_at(ctx, i);
		gint64 rxq = 0;
		g_autofree char *subject = NULL;
		g_autofree char *detail = NULL;
		g_autofree char *hint = NULL;

		if (nic == NULL || !cli_rule_need(ctx, &nic->driver.fact, TRUE) ||
		    !nic_is_virtio(nic->driver.value))
			continue;
		/* the vCPU count matters only once there is a virtio NIC */
		if (!cpu_read) {
			cpu_read = TRUE;
			cli_rule_need(ctx, &cpu->node.fact, FALSE);
			have_count =
			    cli_rule_need_int(ctx, &cpu->count, FALSE, 1, G_MAXINT32, &count);
		}
		if (!have_count)
			return;
		if (!cli_rule_need_int(ctx, &nic->rx_queues, FALSE, 0, G_MAXINT32, &rxq))
			continue;
		subject = cli_rule_item_subject(&nic->node, &nic->name, "net");
		if (count <= 1 || rxq >= count) {
			detail = g_strdup_printf(
			    "%" G_GINT64_FORMAT " rx queue%s for %" G_GINT64_FORMAT " vCPU%s", rxq,
			    rxq == 1 ? "" : "s", count, count == 1 ? "" : "s");
			cli_rule_pass(ctx, subject, detail);
			continue;
		}
		detail = g_strdup_printf("%" G_GINT64_FORMAT " rx queue%s for %" G_GINT64_FORMAT
		                         " vCPUs: receive work lands on %s",
		                         rxq, rxq == 1 ? "" : "s", count,
		                         rxq == 1 ? "one CPU" : "fewer CPUs");
		/* Windows spreads receive work with RSS, set per adapter in the guest */
		if (g_strcmp0(nic->driver.value, "netkvm") == 0)
			hint = g_strdup_printf(
			    "libvirt <driver name='vhost' queues='%" G_GINT64_FORMAT
			    "'/> or -device virtio-net-pci,mq=on,vectors=%" G_GINT64_FORMAT
			    ", then in the guest Set-NetAdapterAdvancedProperty -Name '%s' "
			    "-RegistryKeyword '*NumRssQueues' -RegistryValue %" G_GINT64_FORMAT,
			    count, 2 * count + 2, cli_fact_string_or(&nic->name, "Ethernet"),
			    count);
		else
			hint = g_strdup_printf(
			    "libvirt <driver name='vhost' queues='%" G_GINT64_FORMAT
			    "'/> or -device virtio-net-pci,mq=on,vectors=%" G_GINT64_FORMAT
			    ", then ethtool -L %s combined %" G_GINT64_FORMAT,
			    count, 2 * count + 2, cli_fact_string_or(&nic->name, "eth0"), count);
		cli_rule_fire(ctx, subject, detail, hint);
	}
}
