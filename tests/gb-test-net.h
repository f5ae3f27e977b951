/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <arpa/inet.h>
#include <glib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/*
 * A TCP port on 127.0.0.1 that was free a moment ago: bound to port 0, read
 * back, closed. Tests that need a port for the agent or the CLI to listen on.
 */
static inline guint16 gb_test_free_port(void)
{
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t len = sizeof(addr);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	guint16 port;

	g_assert_cmpint(fd, >=, 0);
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	g_assert_cmpint(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), ==, 0);
	g_assert_cmpint(getsockname(fd, (struct sockaddr *)&addr, &len), ==, 0);
	port = ntohs(addr.sin_port);
	close(fd);
	return port;
}
