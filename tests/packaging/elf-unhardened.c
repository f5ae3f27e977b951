/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Linked without PIE, RELRO, BIND_NOW and with an executable stack
 * (tests/packaging/meson.build): what check-elf.py must reject. */
int main(void)
{
	return 0;
}
