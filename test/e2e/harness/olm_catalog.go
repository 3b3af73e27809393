package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// CatalogBundle is one bundle of a catalog's channel.
type CatalogBundle struct {
	// Dir is a bundle directory (manifests/ and metadata/), as `make bundle` writes bundle/.
	Dir string
	// Replaces is the CSV name of the bundle this one upgrades (the channel entry's replaces); empty for
	// the first.
	Replaces string
}

// Catalog is a file-based catalog served by opm and the CatalogSource in OLMNamespace that points at it.
type Catalog struct {
	olm *OLM
	// Name is the CatalogSource's name; Package and Channel the catalog's one package and channel.
	Name, Package, Channel string
	// RenderedImages is, by CSV name, the image `opm render` gave each bundle before it was blanked.
	RenderedImages map[string]string

	mu       sync.Mutex
	entries  []catalogEntry
	server   *process
	address  string
	revision int
}

type catalogEntry struct {
	name, replaces string
	bundle         map[string]any
}

// ServeCatalog renders the bundles into a file-based catalog of one package with one channel (the package
// and channel the first bundle's metadata names), serves it with `opm serve` on a loopback port, and
// creates the CatalogSource name in OLMNamespace with that address. It returns once catalog-operator
// reports the connection READY.
func (o *OLM) ServeCatalog(ctx context.Context, name string, bundles ...CatalogBundle) (*Catalog, error) {
	c := &Catalog{olm: o, Name: name, RenderedImages: map[string]string{}}
	if err := c.add(ctx, bundles); err != nil {
		return nil, err
	}
	o.mu.Lock()
	o.catalogs = append(o.catalogs, c)
	o.mu.Unlock()
	address, err := c.serve(ctx)
	if err != nil {
		return nil, err
	}
	source := &operatorsv1alpha1.CatalogSource{
		ObjectMeta: metav1.ObjectMeta{Namespace: OLMNamespace, Name: name},
		Spec: operatorsv1alpha1.CatalogSourceSpec{
			SourceType: operatorsv1alpha1.SourceTypeGrpc, Address: address, DisplayName: "gNMIc Operator (e2e)", Publisher: "e2e",
		},
	}
	if err := o.client.Create(ctx, source); err != nil {
		return nil, fmt.Errorf("create CatalogSource %s: %w", name, err)
	}
	return c, c.waitReady(ctx, address)
}

// Publish adds bundles to the channel, as a release adds them to a catalog image: a new catalog revision
// is served on a new port, the CatalogSource is pointed at it (as catalog-operator repoints a polled
// image catalog at its new registry pod), and once catalog-operator reports it READY the previous
// revision's server stops.
func (c *Catalog) Publish(ctx context.Context, bundles ...CatalogBundle) error {
	if err := c.add(ctx, bundles); err != nil {
		return err
	}
	c.mu.Lock()
	previous := c.server
	c.mu.Unlock()
	address, err := c.serve(ctx)
	if err != nil {
		return err
	}
	source := &operatorsv1alpha1.CatalogSource{}
	if err := c.olm.client.Get(ctx, client.ObjectKey{Namespace: OLMNamespace, Name: c.Name}, source); err != nil {
		return fmt.Errorf("get CatalogSource %s: %w", c.Name, err)
	}
	patch := client.MergeFrom(source.DeepCopy())
	source.Spec.Address = address
	if err := c.olm.client.Patch(ctx, source, patch); err != nil {
		return fmt.Errorf("point CatalogSource %s at %s: %w", c.Name, address, err)
	}
	if err := c.waitReady(ctx, address); err != nil {
		return err
	}
	if previous != nil {
		if err := previous.stop(10 * time.Second); err != nil {
			c.olm.cp.log("%v", err)
		}
	}
	return nil
}

// Address is where the current revision is served.
func (c *Catalog) Address() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.address
}

// add renders bundles with `opm render` and appends them to the channel.
func (c *Catalog) add(ctx context.Context, bundles []CatalogBundle) error {
	for _, b := range bundles {
		out, err := c.opm(ctx, "render", b.Dir, "--output=json")
		if err != nil {
			return err
		}
		bundle := map[string]any{}
		if err := json.Unmarshal(out, &bundle); err != nil {
			return fmt.Errorf("opm render %s: %w", b.Dir, err)
		}
		if bundle["schema"] != "olm.bundle" {
			return fmt.Errorf("opm render %s: want one olm.bundle, got schema %v", b.Dir, bundle["schema"])
		}
		name, _ := bundle["name"].(string)
		pkg, _ := bundle["package"].(string)
		image, _ := bundle["image"].(string)
		c.RenderedImages[name] = image
		// An empty image is what tells OLM the bundle's manifests are the catalog's olm.bundle.object
		// properties: nothing to pull, no unpack Job.
		bundle["image"] = ""
		objects := 0
		props, _ := bundle["properties"].([]any)
		for _, p := range props {
			if m, ok := p.(map[string]any); ok && m["type"] == "olm.bundle.object" {
				objects++
			}
		}
		if objects == 0 {
			return fmt.Errorf("opm render %s: bundle %s has no olm.bundle.object property", b.Dir, name)
		}
		channel, err := bundleChannel(b.Dir)
		if err != nil {
			return err
		}
		c.mu.Lock()
		if c.Package == "" {
			c.Package, c.Channel = pkg, channel
		}
		samePackage := c.Package == pkg && c.Channel == channel
		if samePackage {
			c.entries = append(c.entries, catalogEntry{name: name, replaces: b.Replaces, bundle: bundle})
		}
		c.mu.Unlock()
		if !samePackage {
			return fmt.Errorf("bundle %s is of package %s channel %s; the catalog holds %s channel %s", name, pkg, channel, c.Package, c.Channel)
		}
	}
	return nil
}

// bundleChannel is the default channel a bundle directory's metadata names.
func bundleChannel(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if err != nil {
		return "", fmt.Errorf("bundle metadata: %w", err)
	}
	var meta struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &meta); err != nil {
		return "", fmt.Errorf("bundle metadata %s: %w", dir, err)
	}
	channel := meta.Annotations["operators.operatorframework.io.bundle.channel.default.v1"]
	if channel == "" {
		channel, _, _ = strings.Cut(meta.Annotations["operators.operatorframework.io.bundle.channels.v1"], ",")
	}
	if channel == "" {
		return "", fmt.Errorf("bundle %s names no channel", dir)
	}
	return channel, nil
}

// serve writes the next catalog revision, checks it with `opm validate` and serves it on a free port.
func (c *Catalog) serve(ctx context.Context) (string, error) {
	c.mu.Lock()
	c.revision++
	revision := c.revision
	docs := []any{
		map[string]any{"schema": "olm.package", "name": c.Package, "defaultChannel": c.Channel},
	}
	var entries []any
	for _, e := range c.entries {
		entry := map[string]any{"name": e.name}
		if e.replaces != "" {
			entry["replaces"] = e.replaces
		}
		entries = append(entries, entry)
	}
	docs = append(docs, map[string]any{"schema": "olm.channel", "package": c.Package, "name": c.Channel, "entries": entries})
	for _, e := range c.entries {
		docs = append(docs, e.bundle)
	}
	c.mu.Unlock()

	dir := filepath.Join(c.olm.cp.Dir, "olm", "catalogs", fmt.Sprintf("%s-%d", c.Name, revision))
	catalogDir := filepath.Join(dir, "catalog", c.Package)
	if err := os.MkdirAll(catalogDir, 0o755); err != nil {
		return "", fmt.Errorf("catalog directory: %w", err)
	}
	var out bytes.Buffer
	for _, doc := range docs {
		data, err := yaml.Marshal(doc)
		if err != nil {
			return "", fmt.Errorf("encode catalog: %w", err)
		}
		out.WriteString("---\n")
		out.Write(data)
	}
	if err := os.WriteFile(filepath.Join(catalogDir, "catalog.yaml"), out.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("write catalog: %w", err)
	}
	if _, err := c.opm(ctx, "validate", filepath.Join(dir, "catalog")); err != nil {
		return "", err
	}
	ports, err := FreePorts(1)
	if err != nil {
		return "", err
	}
	port := strconv.Itoa(ports[0])
	tmp := filepath.Join(dir, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return "", fmt.Errorf("catalog cache directory: %w", err)
	}
	// opm serve listens on every address of the host (":port"); the CatalogSource names loopback. Its
	// cache goes to a temporary directory under TMPDIR, its profiling endpoint is off.
	p, err := startProcess(filepath.Join(c.olm.cp.Dir, "logs"), fmt.Sprintf("opm-%s-%d", c.Name, revision),
		filepath.Join(c.olm.BinDir, "opm"),
		[]string{"serve", filepath.Join(dir, "catalog"), "--port=" + port, "--pprof-addr=", "--termination-log=" + filepath.Join(dir, "termination-log")},
		[]string{"TMPDIR=" + tmp})
	if err != nil {
		return "", err
	}
	address := net.JoinHostPort("127.0.0.1", port)
	c.olm.cp.log("serving catalog %s revision %d (%s) with opm (pid %d) on %s", c.Name, revision, c.describe(), p.PID, address)
	deadline := time.Now().Add(time.Minute)
	for {
		conn, err := net.DialTimeout("tcp", address, time.Second)
		if err == nil {
			conn.Close()
			break
		}
		if done, perr := p.exited(); done {
			return "", fmt.Errorf("opm serve exited (%v), see its log in %s", perr, filepath.Join(c.olm.cp.Dir, "logs"))
		}
		if time.Now().After(deadline) {
			_ = p.stop(time.Second)
			return "", fmt.Errorf("opm serve does not listen on %s after a minute", address)
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.mu.Lock()
	c.server, c.address = p, address
	c.mu.Unlock()
	return address, nil
}

// describe renders the channel's entries, "alpha: a, b (replaces a)".
func (c *Catalog) describe() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	parts := make([]string, 0, len(c.entries))
	for _, e := range c.entries {
		if e.replaces != "" {
			parts = append(parts, e.name+" (replaces "+e.replaces+")")
		} else {
			parts = append(parts, e.name)
		}
	}
	return c.Channel + ": " + strings.Join(parts, ", ")
}

func (c *Catalog) waitReady(ctx context.Context, address string) error {
	return c.olm.cp.waitFor(ctx, "CatalogSource "+c.Name+" READY at "+address, 2*time.Minute, func(ctx context.Context) (bool, error) {
		source := &operatorsv1alpha1.CatalogSource{}
		if err := c.olm.client.Get(ctx, client.ObjectKey{Namespace: OLMNamespace, Name: c.Name}, source); err != nil {
			return false, nil
		}
		s := source.Status.GRPCConnectionState
		return s != nil && s.Address == address && s.LastObservedState == "READY", nil
	})
}

// opm runs the opm binary and returns its standard output.
func (c *Catalog) opm(ctx context.Context, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, filepath.Join(c.olm.BinDir, "opm"), args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("opm %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

func (c *Catalog) stop() {
	c.mu.Lock()
	server := c.server
	c.server = nil
	c.mu.Unlock()
	if server != nil {
		if err := server.stop(10 * time.Second); err != nil {
			c.olm.cp.log("%v", err)
		}
	}
}
