package harness

import (
	"bufio"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
)

// OperatorReplicaOfConnection is the operator replica whose container holds the client end of a TCP connection
// that this process accepted: client is the connection's remote address (an http.Request's RemoteAddr),
// server its local one. The emulated pods share the host's network, so the kernel's socket table
// (/proc/net/tcp) has the client end's socket, and the containers' open files say which process holds it: a
// server the test runs can tell which replica, and which process of it, sent a request. ok is false when no
// running operator container holds it.
func (cp *ControlPlane) OperatorReplicaOfConnection(client, server string) (replica Replica, ok bool, err error) {
	inode, err := socketInode(client, server)
	if err != nil {
		return Replica{}, false, err
	}
	want := "socket:[" + inode + "]"
	for _, r := range cp.OperatorReplicas() {
		if r.PID == 0 {
			continue
		}
		dir := filepath.Join("/proc", fmt.Sprint(r.PID), "fd")
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue // the process ended meanwhile
		}
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && target == want {
				return r, true, nil
			}
		}
	}
	return Replica{}, false, nil
}

// socketInode is the inode of the IPv4 TCP socket whose local address is local and remote address remote, from
// /proc/net/tcp.
func socketInode(local, remote string) (string, error) {
	l, err := procNetAddress(local)
	if err != nil {
		return "", err
	}
	r, err := procNetAddress(remote)
	if err != nil {
		return "", err
	}
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return "", fmt.Errorf("socket table: %w", err)
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
		fields := strings.Fields(lines.Text())
		if len(fields) > 9 && fields[1] == l && fields[2] == r {
			return fields[9], nil
		}
	}
	if err := lines.Err(); err != nil {
		return "", fmt.Errorf("socket table: %w", err)
	}
	return "", fmt.Errorf("no TCP socket from %s to %s", local, remote)
}

// procNetAddress writes an IPv4 address and port as /proc/net/tcp does: the address's four bytes as one
// little-endian hexadecimal number, then the port in hexadecimal.
func procNetAddress(address string) (string, error) {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return "", fmt.Errorf("address %q: %w", address, err)
	}
	if !ap.Addr().Unmap().Is4() {
		return "", fmt.Errorf("address %q is not IPv4", address)
	}
	b := ap.Addr().Unmap().As4()
	return fmt.Sprintf("%02X%02X%02X%02X:%04X", b[3], b[2], b[1], b[0], ap.Port()), nil
}
