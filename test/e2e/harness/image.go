package harness

import (
	"fmt"
	"net"
	"os"
	"strings"
)

// Image is what the pod emulator runs for a container image, which it never pulls: the files of the image
// that matter, taken from the host, and the image's configuration.
type Image struct {
	// Files maps a path in the image to the host file it is (bind-mounted read-only).
	Files map[string]string
	// Dirs and Content are the rest of the image's file system.
	Dirs    []sandboxDir
	Content []sandboxFile
	// Entrypoint, WorkingDir, UID, GID and Env are the image configuration (ENTRYPOINT, WORKDIR, USER, ENV).
	Entrypoint []string
	WorkingDir string
	UID, GID   int
	Env        []string
	// ListenFlags are the program's flags that name an address it listens on. A pod's processes share
	// the host's network namespace here, so the emulator pins each of them to the pod's IP; it is the one
	// change it makes to a container's command line.
	ListenFlags []ListenFlag
}

// ListenFlag is a flag naming a listen address ("host:port" or just "host") and the value the program
// uses when the flag is not given.
type ListenFlag struct {
	Name    string
	Default string
}

// OperatorImage is the operator's image as the Dockerfile builds it: gcr.io/distroless/static:nonroot with
// the binary at /manager, WORKDIR /, USER 65532:65532. Of the distroless base only what a static Go
// program may look at is reproduced: /etc/passwd and /etc/group with its users, /tmp, the home of
// nonroot, and the image's PATH and SSL_CERT_FILE. binary is the operator built for the host.
func OperatorImage(binary string) Image {
	return Image{
		Files: map[string]string{"/manager": binary},
		Dirs: []sandboxDir{
			{Path: "/tmp", Mode: os.ModeSticky | 0o777},
			{Path: "/home/nonroot", Mode: 0o700, UID: 65532, GID: 65532},
		},
		Content: []sandboxFile{
			{Path: "/etc/passwd", Mode: 0o644, Content: []byte("root:x:0:0:root:/root:/sbin/nologin\n" +
				"nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n" +
				"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
			{Path: "/etc/group", Mode: 0o644, Content: []byte("root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n")},
		},
		Entrypoint: []string{"/manager"},
		WorkingDir: "/",
		UID:        65532,
		GID:        65532,
		Env: []string{
			"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
		},
		ListenFlags: []ListenFlag{
			{Name: "health-probe-bind-address", Default: ":8081"},
			{Name: "metrics-bind-address", Default: ":8443"},
			{Name: "metrics-api-bind-address", Default: "0.0.0.0"},
			{Name: "targetsource-push-bind-address", Default: ":9443"},
			{Name: "pprof-bind-address"}, // off unless given
		},
	}
}

// home is the home directory of uid in the image's /etc/passwd, "/" when it has none (as runc decides HOME).
func (img Image) home(uid int) string {
	for _, f := range img.Content {
		if f.Path != "/etc/passwd" {
			continue
		}
		for _, line := range strings.Split(string(f.Content), "\n") {
			fields := strings.Split(line, ":")
			if len(fields) >= 6 && fields[2] == fmt.Sprint(uid) {
				return fields[5]
			}
		}
	}
	return "/"
}

// pinListenAddresses rewrites every listen flag of args to the pod IP, appending the flags left at their
// defaults, so that two replicas on one host do not collide and each is reached at its pod IP. A flag
// switched off ("0") stays off, and one off by default (no Default) is added only by args; a flag bound to a
// specific host is left alone.
func (img Image) pinListenAddresses(args []string, podIP string) []string {
	out := append([]string(nil), args...)
	for _, flag := range img.ListenFlags {
		found := false
		for i := 0; i < len(out); i++ {
			name, value, inline := splitFlag(out[i])
			if name != flag.Name {
				continue
			}
			found = true
			if !inline && i+1 < len(out) {
				out[i+1] = pinHost(out[i+1], podIP)
				i++
				continue
			}
			out[i] = "--" + name + "=" + pinHost(value, podIP)
		}
		if !found && flag.Default != "" {
			out = append(out, "--"+flag.Name+"="+pinHost(flag.Default, podIP))
		}
	}
	return out
}

// splitFlag parses "--name=value", "-name=value", "--name" and "-name".
func splitFlag(arg string) (name, value string, inline bool) {
	if !strings.HasPrefix(arg, "-") {
		return "", "", false
	}
	arg = strings.TrimPrefix(strings.TrimPrefix(arg, "-"), "-")
	name, value, inline = strings.Cut(arg, "=")
	return name, value, inline
}

// pinHost replaces an unspecified host ("", 0.0.0.0, ::) by ip, in "host:port" or a bare host.
func pinHost(address, ip string) string {
	if address == "0" {
		return address
	}
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		host, port = address, ""
	}
	if host != "" && !net.ParseIP(host).IsUnspecified() {
		return address
	}
	if port == "" {
		return ip
	}
	return net.JoinHostPort(ip, port)
}
