/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node addresses of the network fabrics ("IPv4:port", the cluster file's
 * [nodes] addr=, doc/guides/mlx5.md, doc/guides/ucx.md): one parser for
 * dtxn-app, which checks the file before the EAL starts, and the mlx5 and
 * ucx drivers, which listen and connect on them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dtxn_fabric.h"
#include "dtxn_fabric_driver.h"

int
dtxn_fabric_addr_parse(const char *s, uint32_t *ip_be, uint16_t *port)
{
	char host[INET_ADDRSTRLEN];
	const char *colon = s == NULL ? NULL : strrchr(s, ':');
	struct in_addr in;
	unsigned long p;
	char *end;

	if (colon == NULL || colon == s || (size_t)(colon - s) >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	/* digits only: strtoul would take a sign or blanks */
	if (colon[1] < '0' || colon[1] > '9' || strlen(colon + 1) > 5)
		return -EINVAL;
	p = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || p == 0 || p > 65535 || inet_pton(AF_INET, host, &in) != 1)
		return -EINVAL;
	if (ip_be != NULL)
		*ip_be = in.s_addr;
	if (port != NULL)
		*port = (uint16_t)p;
	return 0;
}

int
dtxn_fabric_node_sockaddr(const char *s, uint16_t node, const char *driver, struct sockaddr_in *sa)
{
	uint32_t ip_be = htonl(INADDR_LOOPBACK);
	uint16_t port = (uint16_t)(DTXN_FABRIC_RDMA_PORT_BASE + node);

	if (s != NULL && dtxn_fabric_addr_parse(s, &ip_be, &port) != 0) {
		dtxn_fabric_open_error_set("--fabric %s: node %u address '%s': expected IPv4:port",
					   driver, node, s);
		return -EINVAL;
	}
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = ip_be;
	sa->sin_port = htons(port);
	return 0;
}
