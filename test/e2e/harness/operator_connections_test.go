package harness

import (
	"fmt"
	"net"
	"os"
	"testing"
)

func TestSocketInodeFindsTheClientEndOfALoopbackConnection(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	accepted, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer accepted.Close()

	// The server side knows the connection by its remote (the client's) and local addresses.
	inode, err := socketInode(accepted.RemoteAddr().String(), accepted.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var link string
	if err := raw.Control(func(fd uintptr) { link, err = os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd)) }); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if link != "socket:["+inode+"]" {
		t.Fatalf("client socket is %s, socketInode found %s", link, inode)
	}

	if _, err := socketInode(accepted.LocalAddr().String(), "127.0.0.1:1"); err == nil {
		t.Fatal("a connection that does not exist has no socket")
	}
}

func TestProcNetAddressIsLittleEndianHex(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8080":   "0100007F:1F90",
		"127.11.2.3:57400": "03020B7F:E038",
		"10.0.0.1:1":       "0100000A:0001",
	} {
		got, err := procNetAddress(in)
		if err != nil || got != want {
			t.Errorf("procNetAddress(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, err := procNetAddress("[::1]:80"); err == nil {
		t.Error("IPv6 is not in /proc/net/tcp")
	}
}
