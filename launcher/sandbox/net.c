/* The sandbox's fresh network namespace over rtnetlink with libmnl
 * (rtnetlink(7)): lo up, and for a mediated network the "AnyIP" local
 * default routes. The socket is opened inside the namespace, so it can only
 * ever talk about the sandbox's own interfaces and routes. */
#include "sandbox.h"

#include <arpa/inet.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/rtnetlink.h>
#include <time.h>

static inline void mnl_closep(struct mnl_socket **nl)
{
	if (*nl)
		mnl_socket_close(*nl);
}
#define cleanup_mnl __attribute__((cleanup(mnl_closep)))

/* Send one request with NLM_F_ACK and read the kernel's answer: its error
 * code, even zero (mnl_cb_run() turns an NLMSG_ERROR into -1 with errno
 * set to it). */
static int request(struct mnl_socket *nl, struct nlmsghdr *nlh, const char *what, struct err *err)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	unsigned portid = mnl_socket_get_portid(nl);
	ssize_t n;

	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
		return err_sys(err, errno, "netlink send (%s)", what);
	n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (n < 0)
		return err_sys(err, errno, "netlink receive (%s)", what);
	if (mnl_cb_run(buf, (size_t)n, nlh->nlmsg_seq, portid, NULL, NULL) < 0)
		return err_sys(err, errno, "%s", what);
	return 0;
}

static int open_route(struct mnl_socket **out, struct err *err)
{
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);

	if (!nl)
		return err_sys(err, errno, "netlink socket");
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		mnl_socket_close(nl);
		return err_sys(err, errno, "netlink bind");
	}
	*out = nl;
	return 0;
}

int net_lo_up(struct err *err)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	cleanup_mnl struct mnl_socket *nl = NULL;
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	int r;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = (unsigned)time(NULL);
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = 1; /* lo is always ifindex 1 in a new namespace */
	ifi->ifi_flags = IFF_UP;
	ifi->ifi_change = IFF_UP;
	r = open_route(&nl, err);
	return r < 0 ? r : request(nl, nlh, "bring lo up", err);
}

/* "ip route add local 0.0.0.0/0 dev lo" (or ::/0): every destination is
 * local, so a connect() lands on a socket bound to the wildcard address
 * (the mediator's, bound before the workload runs) or is refused. There is
 * still no interface and no route off the namespace. */
static int anyip(struct mnl_socket *nl, int family, unsigned seq, struct err *err)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct rtmsg *rtm;

	nlh->nlmsg_type = RTM_NEWROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	nlh->nlmsg_seq = seq;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = (unsigned char)family;
	rtm->rtm_dst_len = 0; /* the default: every address */
	rtm->rtm_table = RT_TABLE_LOCAL;
	rtm->rtm_protocol = RTPROT_STATIC;
	rtm->rtm_scope = RT_SCOPE_HOST;
	rtm->rtm_type = RTN_LOCAL;
	mnl_attr_put_u32(nlh, RTA_OIF, 1); /* lo */
	return request(nl, nlh, family == AF_INET ? "local route 0.0.0.0/0" : "local route ::/0",
		       err);
}

int net_anyip_routes(struct err *err)
{
	cleanup_mnl struct mnl_socket *nl = NULL;
	unsigned seq = (unsigned)time(NULL);
	int r = open_route(&nl, err);

	if (r >= 0)
		r = anyip(nl, AF_INET, seq, err);
	if (r >= 0)
		r = anyip(nl, AF_INET6, seq + 1, err);
	return r;
}
