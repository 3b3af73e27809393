package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// sandboxEnv carries a sandboxSpec to a process the pod emulator started: the binary that imports this
// package (the e2e test binary, the demo) started again, in new mount, PID and UTS namespaces. Its init
// builds the container's root filesystem, enters it and execs the container's command; it never returns to
// the program's own main.
const sandboxEnv = "GNMIC_E2E_CONTAINER"

// sandboxSetupFailed is the exit code of a sandbox that could not start its command (a container runtime's
// StartError is 128 too).
const sandboxSetupFailed = 128

func init() {
	encoded, ok := os.LookupEnv(sandboxEnv)
	if !ok {
		return
	}
	var spec sandboxSpec
	err := json.Unmarshal([]byte(encoded), &spec)
	if err == nil {
		err = spec.enter() // returns only on error
	}
	fmt.Fprintf(os.Stderr, "container sandbox: %v\n", err)
	os.Exit(sandboxSetupFailed)
}

// sandboxSpec is one container as its process sees it: a root filesystem made of the image's files and the
// pod's volumes, a hostname, a user and a command line.
type sandboxSpec struct {
	// Rootfs is an empty host directory; a tmpfs mounted on it (in the sandbox's mount namespace only)
	// becomes the container's root.
	Rootfs   string `json:"rootfs"`
	Hostname string `json:"hostname"`
	// Dirs and Files are created in the root before it is made read-only: the image's content.
	Dirs  []sandboxDir  `json:"dirs"`
	Files []sandboxFile `json:"files"`
	// Mounts are bind mounts of host files or directories (the image's binary, the pod's volumes,
	// /etc/hosts, the termination log) at their path in the container.
	Mounts []sandboxMount `json:"mounts"`
	// ReadOnlyRoot is securityContext.readOnlyRootFilesystem: the root and everything in it that is not a
	// writable mount refuse writes (EROFS), TMPDIR and the working directory included.
	ReadOnlyRoot bool   `json:"readOnlyRoot"`
	WorkingDir   string `json:"workingDir"`
	UID          int    `json:"uid"`
	GID          int    `json:"gid"`
	// NoNewPrivileges is allowPrivilegeEscalation: false.
	NoNewPrivileges bool     `json:"noNewPrivileges"`
	Argv            []string `json:"argv"`
	Env             []string `json:"env"`
}

type sandboxDir struct {
	Path string      `json:"path"`
	Mode os.FileMode `json:"mode"`
	UID  int         `json:"uid"`
	GID  int         `json:"gid"`
}

type sandboxFile struct {
	Path    string      `json:"path"`
	Content []byte      `json:"content"`
	Mode    os.FileMode `json:"mode"`
}

type sandboxMount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly"`
}

// devices are the character devices a container runtime puts in a container's /dev.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// enter builds the root, pivots into it, becomes the container's user and execs the command.
func (s sandboxSpec) enter() error {
	// First of all: nothing mounted from here on may propagate to the host.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	root := s.Rootfs
	if err := syscall.Mount("tmpfs", root, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=0755,size=16m"); err != nil {
		return fmt.Errorf("mount root tmpfs on %s: %w", root, err)
	}
	for _, d := range s.Dirs {
		if err := makeDir(filepath.Join(root, d.Path), d.Mode, d.UID, d.GID); err != nil {
			return err
		}
	}
	for _, f := range s.Files {
		path := filepath.Join(root, f.Path)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(f.Path), err)
		}
		if err := os.WriteFile(path, f.Content, f.Mode); err != nil {
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
	}
	if err := mountSystem(root); err != nil {
		return err
	}
	for _, m := range s.Mounts {
		if err := bindMount(m.Source, filepath.Join(root, m.Target), m.ReadOnly); err != nil {
			return fmt.Errorf("mount %s at %s: %w", m.Source, m.Target, err)
		}
	}
	if s.ReadOnlyRoot {
		if err := syscall.Mount("", root, "", syscall.MS_REMOUNT|syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV, ""); err != nil {
			return fmt.Errorf("make the root read-only: %w", err)
		}
	}
	// pivot_root(".", "."): the old root ends up stacked on the new one and is detached right away.
	if err := syscall.Chdir(root); err != nil {
		return fmt.Errorf("enter root: %w", err)
	}
	if err := syscall.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := syscall.Unmount(".", syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("detach the host's root: %w", err)
	}
	if err := syscall.Sethostname([]byte(s.Hostname)); err != nil {
		return fmt.Errorf("set hostname: %w", err)
	}
	if err := syscall.Chdir(s.WorkingDir); err != nil {
		return fmt.Errorf("working directory %s: %w", s.WorkingDir, err)
	}
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("drop supplementary groups: %w", err)
	}
	if err := syscall.Setgid(s.GID); err != nil {
		return fmt.Errorf("setgid %d: %w", s.GID, err)
	}
	if err := syscall.Setuid(s.UID); err != nil {
		return fmt.Errorf("setuid %d: %w", s.UID, err)
	}
	// Changing the user cleared the parent-death signal the emulator asked for: ask again, so that the
	// container dies with the program running the emulator, however that ends.
	const prSetPdeathsig = 1
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetPdeathsig, uintptr(syscall.SIGKILL), 0); errno != 0 {
		return fmt.Errorf("parent-death signal: %w", errno)
	}
	if s.NoNewPrivileges {
		const prSetNoNewPrivs = 38
		if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0); errno != 0 {
			return fmt.Errorf("no_new_privs: %w", errno)
		}
	}
	binary, err := lookPath(s.Argv[0], s.Env)
	if err != nil {
		return err
	}
	return fmt.Errorf("exec %s: %w", binary, syscall.Exec(binary, s.Argv, s.Env))
}

// mountSystem gives the root what a container runtime mounts in every container: /proc of the container's
// PID namespace, sysfs read-only, and a /dev with the standard devices, a writable /dev/shm and the
// /dev/fd links.
func mountSystem(root string) error {
	for _, dir := range []string{"proc", "sys", "dev"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			return fmt.Errorf("create /%s: %w", dir, err)
		}
	}
	const common = syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC
	if err := syscall.Mount("proc", filepath.Join(root, "proc"), "proc", common, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	if err := syscall.Mount("sysfs", filepath.Join(root, "sys"), "sysfs", common|syscall.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("mount /sys: %w", err)
	}
	dev := filepath.Join(root, "dev")
	if err := syscall.Mount("tmpfs", dev, "tmpfs", syscall.MS_NOSUID, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, name := range devices {
		if err := bindMount("/dev/"+name, filepath.Join(dev, name), false); err != nil {
			return fmt.Errorf("device %s: %w", name, err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dev, "shm"), 0o755); err != nil {
		return fmt.Errorf("create /dev/shm: %w", err)
	}
	if err := syscall.Mount("shm", filepath.Join(dev, "shm"), "tmpfs", common, "mode=1777,size=64m"); err != nil {
		return fmt.Errorf("mount /dev/shm: %w", err)
	}
	for link, target := range map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, filepath.Join(dev, link)); err != nil {
			return fmt.Errorf("link /dev/%s: %w", link, err)
		}
	}
	return nil
}

// bindMount mounts source (a file or a directory) at target, creating the mount point, read-only if asked.
func bindMount(source, target string, readOnly bool) error {
	info, err := os.Stat(source)
	if err != nil {
		return err
	}
	if info.IsDir() {
		if err := os.MkdirAll(target, 0o755); err != nil {
			return err
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		f.Close()
	}
	if err := syscall.Mount(source, target, "", syscall.MS_BIND|syscall.MS_REC, ""); err != nil {
		return err
	}
	if !readOnly {
		return nil
	}
	return syscall.Mount("", target, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV, "")
}

func makeDir(path string, mode os.FileMode, uid, gid int) error {
	if err := os.MkdirAll(path, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	// MkdirAll applies the umask and drops the sticky bit: set the mode explicitly.
	if err := os.Chmod(path, mode); err != nil {
		return fmt.Errorf("chmod %s: %w", path, err)
	}
	if err := os.Chown(path, uid, gid); err != nil {
		return fmt.Errorf("chown %s: %w", path, err)
	}
	return nil
}

// lookPath resolves a command the way a container runtime does: as is when it holds a slash, otherwise
// through the container's PATH.
func lookPath(command string, env []string) (string, error) {
	if strings.Contains(command, "/") {
		return command, nil
	}
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		candidate := filepath.Join(dir, command)
		if info, err := os.Stat(candidate); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return candidate, nil
		}
	}
	return "", fmt.Errorf("executable %q not found in $PATH", command)
}
