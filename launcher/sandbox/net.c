/* Bringing up lo in the sandbox's fresh network namespace, over rtnetlink
 * with libmnl (rtnetlink(7)). The socket is opened inside the namespace, so
 * it can only ever talk about the sandbox's own interfaces. */
#include "sandbox.h"

#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/rtnetlink.h>
#include <time.h>

int net_lo_up(struct err *err)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct mnl_socket *nl = NULL;
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	unsigned seq = (unsigned)time(NULL), portid;
	ssize_t n;
	int r = 0;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWLINK;
	/* NLM_F_ACK: the kernel answers with its error code, even zero. */
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = 1; /* lo is always ifindex 1 in a new namespace */
	ifi->ifi_flags = IFF_UP;
	ifi->ifi_change = IFF_UP;

	nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!nl)
		return err_sys(err, errno, "netlink socket");
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		r = err_sys(err, errno, "netlink bind");
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		r = err_sys(err, errno, "netlink send");
		goto out;
	}
	n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
	if (n < 0) {
		r = err_sys(err, errno, "netlink receive");
		goto out;
	}
	/* mnl_cb_run() turns an NLMSG_ERROR into -1 with errno set to the
	 * kernel's error. */
	if (mnl_cb_run(buf, (size_t)n, seq, portid, NULL, NULL) < 0)
		r = err_sys(err, errno, "bring lo up");
out:
	mnl_socket_close(nl);
	return r;
}
